// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=gather-nd-as-gather,scatter-nd-as-concat},dce' --split-input-file | filecheck %s

// gather-nd-as-gather: tuples (i, j) into [4, 4, ?] are rows 4·i + j of [16, ?]; the
// negative (-1, 0) is row 12.
func.func @tuples(%z: !layout.tensor<4x4x?xf32>) -> !layout.tensor<3x?xf32> {
  %t = graph.constant dense<[[1, 0], [2, 3], [-1, 0]]> : !layout.tensor<3x2xi64>
  %y = graph.gather_nd %z, %t : (!layout.tensor<4x4x?xf32>, !layout.tensor<3x2xi64>) -> !layout.tensor<3x?xf32>
  func.return %y : !layout.tensor<3x?xf32>
}
// CHECK-LABEL: func.func @tuples
// CHECK:         graph.constant dense<[16, -1]>
// CHECK:         %[[FLAT:.*]] = graph.reshape %z, {{.*}} -> !layout.tensor<16x?xf32>
// CHECK:         %[[ROWS:.*]] = graph.constant dense<[4, 11, 12]>
// CHECK:         %y = graph.gather %[[FLAT]], %[[ROWS]] {axis = 0}
// CHECK-NOT:     graph.gather_nd

// -----
// Tuples computed at run time: the op stays.
func.func @computed(%z: !layout.tensor<4x4x2xf32>, %t: !layout.tensor<3x2xi64>) -> !layout.tensor<3x2xf32> {
  %y = graph.gather_nd %z, %t : (!layout.tensor<4x4x2xf32>, !layout.tensor<3x2xi64>) -> !layout.tensor<3x2xf32>
  func.return %y : !layout.tensor<3x2xf32>
}
// CHECK-LABEL: func.func @computed
// CHECK:         graph.gather_nd

// -----
// Run-time index tuples of one entry each: rows of axis 0, a Gather by the squeezed indices.
func.func @lookup(%z: !layout.tensor<9xf32>, %t: !layout.tensor<2x?x1xi64>) -> !layout.tensor<2x?xf32> {
  %y = graph.gather_nd %z, %t : (!layout.tensor<9xf32>, !layout.tensor<2x?x1xi64>) -> !layout.tensor<2x?xf32>
  func.return %y : !layout.tensor<2x?xf32>
}
// CHECK-LABEL: func.func @lookup
// CHECK:         %[[AXES:.*]] = graph.constant dense<[-1]>
// CHECK:         %[[ROWS:.*]] = graph.squeeze %t, %[[AXES]] {{.*}} -> !layout.tensor<2x?xi64>
// CHECK:         %y = graph.gather %z, %[[ROWS]] {axis = 0}
// CHECK-NOT:     graph.gather_nd

// -----
// scatter-nd-as-concat: rows 1 .. 3 of a [5, 2] tensor assigned: x[:1], u, x[4:] concatenated.
func.func @shift(%x: !layout.tensor<5x2xf32>, %u: !layout.tensor<3x2xf32>) -> !layout.tensor<5x2xf32> {
  %rows = graph.constant dense<[[1], [2], [3]]> : !layout.tensor<3x1xi64>
  %y = graph.scatter_nd %x, %rows, %u : (!layout.tensor<5x2xf32>, !layout.tensor<3x1xi64>, !layout.tensor<3x2xf32>) -> !layout.tensor<5x2xf32>
  func.return %y : !layout.tensor<5x2xf32>
}
// CHECK-LABEL: func.func @shift
// CHECK:         %[[HEAD:.*]] = graph.slice %x, {{.*}} -> !layout.tensor<1x2xf32>
// CHECK:         %[[TAIL:.*]] = graph.slice %x, {{.*}} -> !layout.tensor<1x2xf32>
// CHECK:         %y = graph.concat %[[HEAD]], %u, %[[TAIL]] {axis = 0}
