// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=masked-fill-as-where},dce' --split-input-file | filecheck %s

// masked-fill-as-where: y[y < 0] = 0.5 as PyTorch's default exporter writes it (the value
// expanded to the mask's count, scattered at the mask's true positions) is a Where; the
// NonZero, the count and the scatter go.
func.func @fill(%y: !layout.tensor<2x?xf32>, %n: !layout.tensor<1xi64>) -> !layout.tensor<2x?xf32> {
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %mask = graph.less %y, %zero : (!layout.tensor<2x?xf32>, !layout.tensor<f32>) -> !layout.tensor<2x?xi1>
  %nz = graph.non_zero %mask : (!layout.tensor<2x?xi1>) -> !layout.tensor<2x?xi64>
  %at = graph.transpose %nz {perm = [1, 0]} : (!layout.tensor<2x?xi64>) -> !layout.tensor<?x2xi64>
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %values = graph.expand %half, %n : (!layout.tensor<f32>, !layout.tensor<1xi64>) -> !layout.tensor<?xf32>
  %r = graph.scatter_nd %y, %at, %values {reduction = "none"} : (!layout.tensor<2x?xf32>, !layout.tensor<?x2xi64>, !layout.tensor<?xf32>) -> !layout.tensor<2x?xf32>
  func.return %r : !layout.tensor<2x?xf32>
}
// CHECK-LABEL: func.func @fill
// CHECK:         %[[MASK:.*]] = graph.less %y
// CHECK:         %[[V:.*]] = graph.constant dense<0.5> : !layout.tensor<f32>
// CHECK:         %r = graph.where %[[MASK]], %[[V]], %y
// CHECK-NOT:     graph.non_zero
// CHECK-NOT:     graph.scatter_nd

// -----
// Values that differ per position: the scatter stays.
func.func @values(%y: !layout.tensor<2x3xf32>, %v: !layout.tensor<?xf32>) -> !layout.tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %mask = graph.less %y, %zero : (!layout.tensor<2x3xf32>, !layout.tensor<f32>) -> !layout.tensor<2x3xi1>
  %nz = graph.non_zero %mask : (!layout.tensor<2x3xi1>) -> !layout.tensor<2x?xi64>
  %at = graph.transpose %nz {perm = [1, 0]} : (!layout.tensor<2x?xi64>) -> !layout.tensor<?x2xi64>
  %r = graph.scatter_nd %y, %at, %v {reduction = "none"} : (!layout.tensor<2x3xf32>, !layout.tensor<?x2xi64>, !layout.tensor<?xf32>) -> !layout.tensor<2x3xf32>
  func.return %r : !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @values
// CHECK:         graph.scatter_nd
