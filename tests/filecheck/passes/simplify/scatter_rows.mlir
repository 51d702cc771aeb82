// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=scatter-elements-as-scatter-nd},dce' --split-input-file | filecheck %s

// scatter-elements-as-scatter-nd: torchvision's RoI merge scatters each level's pooled
// boxes into the result by an index expanded along each row: a ScatterND of whole rows
// by Reshape(idx, [n, 1]); the Expand goes.
func.func @merge(%res: !layout.tensor<6x4x2x2xf32>, %idx: !layout.tensor<3x1x1x1xi64>, %pooled: !layout.tensor<3x4x2x2xf32>, %shape: !layout.tensor<4xi64>) -> !layout.tensor<6x4x2x2xf32> {
  %at = graph.expand %idx, %shape : (!layout.tensor<3x1x1x1xi64>, !layout.tensor<4xi64>) -> !layout.tensor<3x4x2x2xi64>
  %r = graph.scatter_elements %res, %at, %pooled {axis = 0, reduction = "none"} : (!layout.tensor<6x4x2x2xf32>, !layout.tensor<3x4x2x2xi64>, !layout.tensor<3x4x2x2xf32>) -> !layout.tensor<6x4x2x2xf32>
  func.return %r : !layout.tensor<6x4x2x2xf32>
}
// CHECK-LABEL: func.func @merge
// CHECK:         %[[SHAPE:.*]] = graph.constant dense<[-1, 1]> : !layout.tensor<2xi64>
// CHECK:         %[[ROWS:.*]] = graph.reshape %idx, %[[SHAPE]] : {{.*}} -> !layout.tensor<3x1xi64>
// CHECK:         %r = graph.scatter_nd %res, %[[ROWS]], %pooled {reduction = "none"}
// CHECK-NOT:     graph.expand
// CHECK-NOT:     graph.scatter_elements

// -----
// A reduction carries over (rows combined in order, as the elements were).
func.func @add(%res: !layout.tensor<6x4xf32>, %idx: !layout.tensor<3x1xi64>, %v: !layout.tensor<3x4xf32>, %shape: !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32> {
  %at = graph.expand %idx, %shape : (!layout.tensor<3x1xi64>, !layout.tensor<2xi64>) -> !layout.tensor<3x4xi64>
  %r = graph.scatter_elements %res, %at, %v {axis = 0, reduction = "add"} : (!layout.tensor<6x4xf32>, !layout.tensor<3x4xi64>, !layout.tensor<3x4xf32>) -> !layout.tensor<6x4xf32>
  func.return %r : !layout.tensor<6x4xf32>
}
// CHECK-LABEL: func.func @add
// CHECK:         %r = graph.scatter_nd %res, %{{.*}}, %v {reduction = "add"}

// -----
// The index broadcast along the rows too (its first dim 1, the updates' 3): every row
// to one place, not one index per row: the scatter stays.
func.func @broadcast_rows(%res: !layout.tensor<6x4xf32>, %idx: !layout.tensor<1x1xi64>, %v: !layout.tensor<3x4xf32>, %shape: !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32> {
  %at = graph.expand %idx, %shape : (!layout.tensor<1x1xi64>, !layout.tensor<2xi64>) -> !layout.tensor<3x4xi64>
  %r = graph.scatter_elements %res, %at, %v {axis = 0, reduction = "none"} : (!layout.tensor<6x4xf32>, !layout.tensor<3x4xi64>, !layout.tensor<3x4xf32>) -> !layout.tensor<6x4xf32>
  func.return %r : !layout.tensor<6x4xf32>
}
// CHECK-LABEL: func.func @broadcast_rows
// CHECK:         graph.scatter_elements

// -----
// Along axis 1 (an index per column, not per row) and updates narrower than the data
// (ScatterND would replace whole rows): the scatter stays.
func.func @axis1(%res: !layout.tensor<4x6xf32>, %idx: !layout.tensor<4x1xi64>, %v: !layout.tensor<4x3xf32>, %shape: !layout.tensor<2xi64>) -> !layout.tensor<4x6xf32> {
  %at = graph.expand %idx, %shape : (!layout.tensor<4x1xi64>, !layout.tensor<2xi64>) -> !layout.tensor<4x3xi64>
  %r = graph.scatter_elements %res, %at, %v {axis = 1, reduction = "none"} : (!layout.tensor<4x6xf32>, !layout.tensor<4x3xi64>, !layout.tensor<4x3xf32>) -> !layout.tensor<4x6xf32>
  func.return %r : !layout.tensor<4x6xf32>
}
// CHECK-LABEL: func.func @axis1
// CHECK:         graph.scatter_elements

// -----
func.func @narrow(%res: !layout.tensor<6x4xf32>, %idx: !layout.tensor<3x1xi64>, %v: !layout.tensor<3x2xf32>, %shape: !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32> {
  %at = graph.expand %idx, %shape : (!layout.tensor<3x1xi64>, !layout.tensor<2xi64>) -> !layout.tensor<3x2xi64>
  %r = graph.scatter_elements %res, %at, %v {axis = 0, reduction = "none"} : (!layout.tensor<6x4xf32>, !layout.tensor<3x2xi64>, !layout.tensor<3x2xf32>) -> !layout.tensor<6x4xf32>
  func.return %r : !layout.tensor<6x4xf32>
}
// CHECK-LABEL: func.func @narrow
// CHECK:         graph.scatter_elements
