// RUN: tilegraph-opt %s -p 'conv-forms' --split-input-file | filecheck %s

// conv-forms, dft-as-matmul: a complex [12, 3, 2] signal along axis 0. The axis is swapped
// next to the (re, im) parts, the 12 samples' interleaved parts are a row of 24, times the
// [24, 24] basis (a complex sample's two rows), the 12 bins' parts reshaped and swapped back.
func.func @complex_axis0(%x: !layout.tensor<12x3x2xf32>) -> !layout.tensor<12x3x2xf32> {
  %axis = graph.constant dense<0> : !layout.tensor<i64>
  %y = graph.dft %x, none, %axis : (!layout.tensor<12x3x2xf32>, !layout.tensor<i64>) -> !layout.tensor<12x3x2xf32>
  func.return %y : !layout.tensor<12x3x2xf32>
}
// CHECK-LABEL: func.func @complex_axis0
// CHECK:         %[[SWAP:.*]] = graph.transpose %x {perm = [1, 0, 2]} {{.*}} -> !layout.tensor<3x12x2xf32>
// CHECK:         %[[ROWS:.*]] = graph.reshape %[[SWAP]], {{.*}} -> !layout.tensor<3x24xf32>
// CHECK:         %[[BASIS:.*]] = graph.constant {{.*}} : !layout.tensor<24x24xf32>
// CHECK:         %[[PRODUCT:.*]] = graph.matmul %[[ROWS]], %[[BASIS]] :{{.*}} -> !layout.tensor<3x24xf32>
// CHECK:         %[[BINS:.*]] = graph.reshape %[[PRODUCT]], {{.*}} -> !layout.tensor<3x12x2xf32>
// CHECK:         %y = graph.transpose %[[BINS]] {perm = [1, 0, 2]} {{.*}} -> !layout.tensor<12x3x2xf32>
// CHECK-NOT:     graph.dft

// -----
// An inverse one-sided transform (IRFFT) stays.
func.func @irfft(%x: !layout.tensor<4x5x2xf32>) -> !layout.tensor<4x8x1xf32> {
  %y = graph.dft %x, none, none {inverse = 1 : i64, onesided = 1 : i64} : (!layout.tensor<4x5x2xf32>) -> !layout.tensor<4x8x1xf32>
  func.return %y : !layout.tensor<4x8x1xf32>
}
// CHECK-LABEL: func.func @irfft
// CHECK:         graph.dft
