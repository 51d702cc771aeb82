// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=sum-in-int32},dce' --split-input-file | filecheck %s

// sum-in-int32: the int64 sum of 7 int8 values is at most 7 x 128 in magnitude: an int32
// sum (exact on the vector unit) cast up.
func.func @int8(%x: !layout.tensor<3x7xi8>) -> !layout.tensor<3xi64> {
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %c = graph.cast %x {to = 7} : (!layout.tensor<3x7xi8>) -> !layout.tensor<3x7xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<3x7xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xi64>
  func.return %s : !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @int8
// CHECK:         %[[I:.*]] = graph.cast %x {to = 6} {{.*}} -> !layout.tensor<3x7xi32>
// CHECK:         %[[S:.*]] = graph.reduce_sum %[[I]], %axes {{.*}} -> !layout.tensor<3xi32>
// CHECK:         %s = graph.cast %[[S]] {to = 7} {{.*}} -> !layout.tensor<3xi64>

// -----
// 70000 int16 values: 70000 x 32768 passes 2**31, the sum stays in int64.
func.func @int16_long(%x: !layout.tensor<70000xi16>) -> !layout.tensor<i64> {
  %c = graph.cast %x {to = 7} : (!layout.tensor<70000xi16>) -> !layout.tensor<70000xi64>
  %s = graph.reduce_sum %c {keepdims = 0} : (!layout.tensor<70000xi64>) -> !layout.tensor<i64>
  func.return %s : !layout.tensor<i64>
}
// CHECK-LABEL: func.func @int16_long
// CHECK:         graph.reduce_sum %c {{.*}} -> !layout.tensor<i64>

// -----
// int32 values could be anything an int32 holds: no bound, the sum stays in int64.
func.func @int32(%x: !layout.tensor<3x7xi32>) -> !layout.tensor<3xi64> {
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %c = graph.cast %x {to = 7} : (!layout.tensor<3x7xi32>) -> !layout.tensor<3x7xi64>
  %s = graph.reduce_sum %c, %axes {keepdims = 0} : (!layout.tensor<3x7xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xi64>
  func.return %s : !layout.tensor<3xi64>
}
// CHECK-LABEL: func.func @int32
// CHECK:         graph.reduce_sum %c, %axes {{.*}} -> !layout.tensor<3xi64>
