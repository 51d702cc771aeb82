// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=count-in-float},dce' --split-input-file | filecheck %s

// count-in-float: the int64 sum of a mask over 7 elements is a float32 sum cast back.
func.func @count(%m: !layout.tensor<3x7xi1>) -> !layout.tensor<3xi64> {
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %c = graph.cast %m {to = 7} : (!layout.tensor<3x7xi1>) -> !layout.tensor<3x7xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<3x7xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xi64>
  func.return %s : !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @count
// CHECK:         %[[F:.*]] = graph.cast %m {to = 1} {{.*}} -> !layout.tensor<3x7xf32>
// CHECK:         %[[S:.*]] = graph.reduce_sum %[[F]], %axes {{.*}} -> !layout.tensor<3xf32>
// CHECK:         %s = graph.cast %[[S]] {to = 7} {{.*}} -> !layout.tensor<3xi64>

// -----
// The reduced dim unknown when compiling: the sum could pass 2**24, the op stays.
func.func @unknown(%m: !layout.tensor<3x?xi1>) -> !layout.tensor<3xi64> {
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %c = graph.cast %m {to = 7} : (!layout.tensor<3x?xi1>) -> !layout.tensor<3x?xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<3x?xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xi64>
  func.return %s : !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @unknown
// CHECK:         graph.reduce_sum %c, %axes {{.*}} -> !layout.tensor<3xi64>
