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

// -----
// A MoE router's token count per expert (JetMoE): the int64 sum over 6 tokens of a float
// one-hot scattered into zeros. Its values are 0 (the expanded zeros) and 1 (the scattered
// ones), so the float32 sum is exact: summed as it is (no cast in), cast to int64 after.
func.func @one_hot_tokens(%ids: !layout.tensor<6x2xi64>) -> !layout.tensor<4xi64> {
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %shape = graph.constant dense<[6, 4]> : !layout.tensor<2xi64>
  %zeros = graph.expand %zero, %shape : (!layout.tensor<f32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
  %ishape = graph.constant dense<[6, 2]> : !layout.tensor<2xi64>
  %ones = graph.constant_of_shape %ishape {value = #graph.dense<f32, [1], [1.0]>} : (!layout.tensor<2xi64>) -> !layout.tensor<6x2xf32>
  %hot = graph.scatter_elements %zeros, %ids, %ones {axis = 1, reduction = "none"} : (!layout.tensor<6x4xf32>, !layout.tensor<6x2xi64>, !layout.tensor<6x2xf32>) -> !layout.tensor<6x4xf32>
  %c = graph.cast %hot {to = 7} : (!layout.tensor<6x4xf32>) -> !layout.tensor<6x4xi64>
  %axes = graph.constant dense<0> : !layout.tensor<1xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<6x4xi64>, !layout.tensor<1xi64>) -> !layout.tensor<4xi64>
  func.return %s : !layout.tensor<4xi64>
}
// CHECK-LABEL: func.func @one_hot_tokens
// CHECK:         %hot = graph.scatter_elements
// CHECK-NOT:     graph.cast
// CHECK:         %[[S:.*]] = graph.reduce_sum %hot, %axes {{.*}} -> !layout.tensor<4xf32>
// CHECK-NEXT:    %s = graph.cast %[[S]] {to = 7} {{.*}} -> !layout.tensor<4xi64>

// -----
// Halves are not integers: the cast truncates each element, so the sum stays in int64.
func.func @halves(%x: !layout.tensor<3x7xf32>) -> !layout.tensor<3xi64> {
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %shape = graph.constant dense<[3, 7]> : !layout.tensor<2xi64>
  %h = graph.expand %half, %shape : (!layout.tensor<f32>, !layout.tensor<2xi64>) -> !layout.tensor<3x7xf32>
  %c = graph.cast %h {to = 7} : (!layout.tensor<3x7xf32>) -> !layout.tensor<3x7xi64>
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<3x7xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xi64>
  func.return %s : !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @halves
// CHECK:         graph.reduce_sum %c, %axes {{.*}} -> !layout.tensor<3xi64>

// -----
// Run-time float data: its values are not known to be integers; the op stays.
func.func @data(%x: !layout.tensor<3x7xf32>) -> !layout.tensor<3xi64> {
  %c = graph.cast %x {to = 7} : (!layout.tensor<3x7xf32>) -> !layout.tensor<3x7xi64>
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<3x7xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xi64>
  func.return %s : !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @data
// CHECK:         graph.reduce_sum %c, %axes {{.*}} -> !layout.tensor<3xi64>
