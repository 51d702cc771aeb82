// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=projection-parts-outermost},dce' --split-input-file | filecheck %s

// BLOOM: the fused projection [B, S, H·3·D] viewed [B, S, H=2, 3, D=1], q / k / v the
// selects of axis 3. W's columns (h, g) = 3h + g are reordered g-major, [0, 3, 1, 4, 2, 5]
// (the bias with them): the projection writes [q | k | v], one split of its last axis, each
// piece viewed as its select was.
func.func @bloom(%x: !layout.tensor<1x2x2xf32>) -> (!layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>) {
  %w = graph.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : !layout.tensor<2x6xf32>
  %b = graph.constant dense<[0.5, 1.5, 2.5, 3.5, 4.5, 5.5]> : !layout.tensor<6xf32>
  %p = graph.matmul %x, %w : (!layout.tensor<1x2x2xf32>, !layout.tensor<2x6xf32>) -> !layout.tensor<1x2x6xf32>
  %y = graph.add %p, %b : (!layout.tensor<1x2x6xf32>, !layout.tensor<6xf32>) -> !layout.tensor<1x2x6xf32>
  %shape = graph.constant dense<[1, 2, 2, 3, 1]> : !layout.tensor<5xi64>
  %view = graph.reshape %y, %shape : (!layout.tensor<1x2x6xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x3x1xf32>
  %i0 = graph.constant dense<0> : !layout.tensor<i64>
  %i1 = graph.constant dense<1> : !layout.tensor<i64>
  %i2 = graph.constant dense<2> : !layout.tensor<i64>
  %v0 = graph.gather %view, %i2 {axis = 3} : (!layout.tensor<1x2x2x3x1xf32>, !layout.tensor<i64>) -> !layout.tensor<1x2x2x1xf32>
  %q0 = graph.gather %view, %i0 {axis = 3} : (!layout.tensor<1x2x2x3x1xf32>, !layout.tensor<i64>) -> !layout.tensor<1x2x2x1xf32>
  %k0 = graph.gather %view, %i1 {axis = 3} : (!layout.tensor<1x2x2x3x1xf32>, !layout.tensor<i64>) -> !layout.tensor<1x2x2x1xf32>
  %flat = graph.constant dense<[1, 2, 2]> : !layout.tensor<3xi64>
  %q = graph.reshape %q0, %flat : (!layout.tensor<1x2x2x1xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x2x2xf32>
  %k = graph.reshape %k0, %flat : (!layout.tensor<1x2x2x1xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x2x2xf32>
  %v = graph.reshape %v0, %flat : (!layout.tensor<1x2x2x1xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x2x2xf32>
  func.return %q, %k, %v : !layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>
}
// CHECK-LABEL: func.func @bloom
// CHECK:      %[[W:.*]] = graph.constant dense<{{\[\[}}0.0, 3.0, 1.0, 4.0, 2.0, 5.0], [6.0, 9.0, 7.0, 10.0, 8.0, 11.0]]> : !layout.tensor<2x6xf32>
// CHECK:      %[[P:.*]] = graph.matmul %x, %[[W]]
// CHECK:      %[[B:.*]] = graph.constant dense<[0.5, 3.5, 1.5, 4.5, 2.5, 5.5]> : !layout.tensor<6xf32>
// CHECK:      %[[Y:.*]] = graph.add %[[P]], %[[B]]
// CHECK:      %[[Q:.*]], %[[K:.*]], %[[V:.*]] = graph.split %[[Y]], %{{.*}} {axis = 2} : (!layout.tensor<1x2x6xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>)
// CHECK-NOT:  graph.gather
// CHECK:      func.return

// -----
// Falcon: [B, S, n_kv=2, q_per_kv + 2 = 4, D=1]; q the slice [0, 2) of axis 3, k / v the
// gathers [2] / [3] of that axis brought first by a transpose. Columns 4·kv + g reordered
// part by part: q [0, 1, 4, 5], k [2, 6], v [3, 7].
func.func @falcon(%x: !layout.tensor<1x2x1xf32>) -> (!layout.tensor<1x2x2x2x1xf32>, !layout.tensor<1x2x2x1x1xf32>, !layout.tensor<1x2x2x1x1xf32>) {
  %w = graph.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : !layout.tensor<1x8xf32>
  %p = graph.matmul %x, %w : (!layout.tensor<1x2x1xf32>, !layout.tensor<1x8xf32>) -> !layout.tensor<1x2x8xf32>
  %shape = graph.constant dense<[1, 2, 2, 4, 1]> : !layout.tensor<5xi64>
  %view = graph.reshape %p, %shape : (!layout.tensor<1x2x8xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x4x1xf32>
  %s0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %s1 = graph.constant dense<[-2]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %q = graph.slice %view, %s0, %s1, %ax : (!layout.tensor<1x2x2x4x1xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x2x2x2x1xf32>
  %t = graph.transpose %view {perm = [3, 0, 1, 2, 4]} : (!layout.tensor<1x2x2x4x1xf32>) -> !layout.tensor<4x1x2x2x1xf32>
  %i2 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %i3 = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %k0 = graph.gather %t, %i2 {axis = 0} : (!layout.tensor<4x1x2x2x1xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x1x2x2x1xf32>
  %v0 = graph.gather %t, %i3 {axis = 0} : (!layout.tensor<4x1x2x2x1xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x1x2x2x1xf32>
  %back = graph.constant dense<[1, 2, 2, 1, 1]> : !layout.tensor<5xi64>
  %k = graph.reshape %k0, %back : (!layout.tensor<1x1x2x2x1xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x1x1xf32>
  %v = graph.reshape %v0, %back : (!layout.tensor<1x1x2x2x1xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x1x1xf32>
  func.return %q, %k, %v : !layout.tensor<1x2x2x2x1xf32>, !layout.tensor<1x2x2x1x1xf32>, !layout.tensor<1x2x2x1x1xf32>
}
// CHECK-LABEL: func.func @falcon
// CHECK:      %[[W:.*]] = graph.constant dense<{{\[\[}}0.0, 1.0, 4.0, 5.0, 2.0, 6.0, 3.0, 7.0]]> : !layout.tensor<1x8xf32>
// CHECK:      %[[P:.*]] = graph.matmul %x, %[[W]]
// CHECK:      %{{.*}}, %{{.*}}, %{{.*}} = graph.split %[[P]], %{{.*}} {axis = 2} : (!layout.tensor<1x2x8xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x2x4xf32>, !layout.tensor<1x2x2xf32>, !layout.tensor<1x2x2xf32>)
// CHECK-NOT:  graph.transpose
// CHECK-NOT:  graph.gather
// CHECK-NOT:  graph.slice
// CHECK:      func.return

// -----
// Parts 0 and 2 taken by one strided slice of axis 3 (not a whole part): the view stays,
// and so do W's columns.
func.func @strided(%x: !layout.tensor<1x2x2xf32>) -> (!layout.tensor<1x2x2x2x1xf32>, !layout.tensor<1x2x2x1xf32>) {
  %w = graph.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : !layout.tensor<2x6xf32>
  %p = graph.matmul %x, %w : (!layout.tensor<1x2x2xf32>, !layout.tensor<2x6xf32>) -> !layout.tensor<1x2x6xf32>
  %shape = graph.constant dense<[1, 2, 2, 3, 1]> : !layout.tensor<5xi64>
  %view = graph.reshape %p, %shape : (!layout.tensor<1x2x6xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x3x1xf32>
  %s0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %s1 = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %st = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %qv = graph.slice %view, %s0, %s1, %ax, %st : (!layout.tensor<1x2x2x3x1xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x2x2x2x1xf32>
  %i1 = graph.constant dense<1> : !layout.tensor<i64>
  %k = graph.gather %view, %i1 {axis = 3} : (!layout.tensor<1x2x2x3x1xf32>, !layout.tensor<i64>) -> !layout.tensor<1x2x2x1xf32>
  func.return %qv, %k : !layout.tensor<1x2x2x2x1xf32>, !layout.tensor<1x2x2x1xf32>
}
// CHECK-LABEL: func.func @strided
// CHECK:      graph.constant dense<{{\[\[}}0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
// CHECK-NOT:  graph.split
// CHECK:      graph.slice
