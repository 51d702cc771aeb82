// RUN: tilegraph-opt %s -p fuse-dynamic-quantize --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p fuse-dynamic-quantize --split-input-file | tilegraph-opt --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p fuse-dynamic-quantize --split-input-file --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// DynamicQuantizeLinear as fold-integer-ops leaves it: the parameters, a QuantizeLinear of
// the same input onto int8 with the int8 zero point, and a user of that zero point between
// them. The pair becomes one group at the parameters' place, yielding the quantised tensor
// and the parameters read outside (the scale, the int8 zero point; not the unread uint8 one).
func.func @int8_grid(%x: !layout.tensor<4x33xf32>) -> (!layout.tensor<4x33xi8>, !layout.tensor<f32>, !layout.tensor<i32>) {
  %s, %z, %z8 = graph.dynamic_quantize_params %x : (!layout.tensor<4x33xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
  %c = graph.cast %z8 {to = 6 : i64} : (!layout.tensor<i8>) -> !layout.tensor<i32>
  %q = graph.quantize_linear %x, %s, %z8 : (!layout.tensor<4x33xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<4x33xi8>
  func.return %q, %s, %c : !layout.tensor<4x33xi8>, !layout.tensor<f32>, !layout.tensor<i32>
}
// CHECK-LABEL: func.func @int8_grid
// CHECK-NEXT:  %q, %s, %z8 = graph.fused "dynamic_quantize_0" <comm_reduce> (%x) : (!layout.tensor<4x33xf32>) -> (!layout.tensor<4x33xi8>, !layout.tensor<f32>, !layout.tensor<i8>) {
// CHECK-NEXT:  ^bb0(%x_1: !layout.tensor<4x33xf32>):
// CHECK-NEXT:    %s_1, %z, %z8_1 = graph.dynamic_quantize_params %x_1
// CHECK-NEXT:    %q_1 = graph.quantize_linear %x_1, %s_1, %z8_1
// CHECK-NEXT:    graph.yield %q_1, %s_1, %z8_1 : !layout.tensor<4x33xi8>, !layout.tensor<f32>, !layout.tensor<i8>
// CHECK-NEXT:  }
// CHECK-NEXT:  %c = graph.cast %z8

// -----

// A QuantizeLinear of another tensor with the parameters is no partner: nothing changes.
func.func @other_input(%x: !layout.tensor<4x33xf32>, %y: !layout.tensor<4x33xf32>) -> !layout.tensor<4x33xui8> {
  %s, %z, %z8 = graph.dynamic_quantize_params %x : (!layout.tensor<4x33xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
  %q = graph.quantize_linear %y, %s, %z : (!layout.tensor<4x33xf32>, !layout.tensor<f32>, !layout.tensor<ui8>) -> !layout.tensor<4x33xui8>
  func.return %q : !layout.tensor<4x33xui8>
}
// CHECK-LABEL: func.func @other_input
// CHECK-NEXT:  graph.dynamic_quantize_params
// CHECK-NEXT:  graph.quantize_linear
// CHECK-NOT:   graph.fused

// STATS: fuse-dynamic-quantize
// STATS: groups{{.*}}1
