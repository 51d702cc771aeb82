// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// views-cloned: a group split of x (SqueezeBERT's Q and V over one LayerNorm output) read
// by two group-batched products: each product gets its own copy of the reshape and the
// transpose, in its prologue (a view it reads in place); no kernel copies the split.
func.func @split_read_twice(%x: !layout.tensor<3x11x32xf32>) -> (!layout.tensor<3x4x11x8xf32>, !layout.tensor<3x4x11x8xf32>) {
  %s = graph.constant dense<[3, 11, 4, 8]> : !layout.tensor<4xi64>
  %w1 = graph.constant dense<0.5> : !layout.tensor<4x8x8xf32>
  %w2 = graph.constant dense<0.25> : !layout.tensor<4x8x8xf32>
  %r = graph.reshape %x, %s : (!layout.tensor<3x11x32xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x11x4x8xf32>
  %t = graph.transpose %r {perm = [0, 2, 1, 3]} : (!layout.tensor<3x11x4x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %q = graph.matmul %t, %w1 : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<4x8x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %v = graph.matmul %t, %w2 : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<4x8x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  func.return %q, %v : !layout.tensor<3x4x11x8xf32>, !layout.tensor<3x4x11x8xf32>
}
// CHECK-LABEL: func.func @split_read_twice
// CHECK-NOT:     graph.fused "fused_reshape_transpose_{{[0-9]+}}"
// CHECK:         graph.fused "fused_reshape_transpose_trans_data_matmul{{.*}}" <out_elemwise_fusable> (%x
// CHECK:           graph.reshape
// CHECK:           graph.transpose
// CHECK:           graph.matmul
// CHECK:         graph.fused "fused_reshape_transpose_trans_data_matmul{{.*}}" <out_elemwise_fusable> (%x
// CHECK:           graph.reshape
// CHECK:           graph.transpose
// CHECK:           graph.matmul

// STATS: fuse-ops
// STATS: views-cloned 2
