// RUN: tilegraph-opt %s -p div-to-mul --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p div-to-mul --split-input-file --check-each-pass --check-rtol=0 --check-atol=0 -o %t 2>&1 | filecheck %s --check-prefix=EXACT

// A division by a power of two becomes a multiplication by its reciprocal.
func.func @scalar(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %c = graph.constant dense<4.0> : !layout.tensor<f32>
  %y = graph.div %x, %c : (!layout.tensor<2x3xf32>, !layout.tensor<f32>) -> !layout.tensor<2x3xf32>
  func.return %y : !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @scalar
// CHECK-NEXT:    %y_k0 = graph.constant dense<0.25> : !layout.tensor<f32>
// CHECK-NEXT:    %y = graph.mul %x, %y_k0 : (!layout.tensor<2x3xf32>, !layout.tensor<f32>) -> !layout.tensor<2x3xf32>
// CHECK-NEXT:    func.return %y : !layout.tensor<2x3xf32>
// EXACT: check-each-pass: 1 passes checked, outputs unchanged

// -----
// Every element a power of two (signs and sizes may differ): a per-channel constant, in
// the NCHW view of its consumer.
func.func @per_channel(%x: !layout.tensor<1x3x2x2xf16, NCHW>) -> !layout.tensor<1x3x2x2xf16, NCHW> {
  %c = graph.constant dense<[[[2.0]], [[0.5]], [[-8.0]]]> : !layout.tensor<3x1x1xf16>
  %y = graph.div %x, %c : (!layout.tensor<1x3x2x2xf16, NCHW>, !layout.tensor<3x1x1xf16>) -> !layout.tensor<1x3x2x2xf16, NCHW>
  func.return %y : !layout.tensor<1x3x2x2xf16, NCHW>
}
// CHECK-LABEL: func.func @per_channel
// CHECK-NEXT:    %y_k0 = graph.constant dense<{{\[\[\[}}0.5]], {{\[\[}}2.0]], {{\[\[}}-0.125]]]> : !layout.tensor<3x1x1xf16>
// CHECK-NEXT:    %y = graph.mul %x, %y_k0
// EXACT: check-each-pass: 1 passes checked, outputs unchanged

// -----
// Left alone: 3 is no power of two; 0 has no reciprocal; 2**-24 is a float16 whose
// reciprocal 2**24 overflows float16; integers divide differently; a divisor that is not a
// constant.
func.func @kept(%x: !layout.tensor<4xf32>, %h: !layout.tensor<4xf16>, %i: !layout.tensor<4xi32>, %d: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf16>, !layout.tensor<4xi32>, !layout.tensor<4xf32>) {
  %three = graph.constant dense<3.0> : !layout.tensor<f32>
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %tiny = graph.constant dense<5.9604644775390625e-08> : !layout.tensor<f16>
  %two = graph.constant dense<2> : !layout.tensor<i32>
  %a = graph.div %x, %three : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %b = graph.div %x, %zero : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %c = graph.div %h, %tiny : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  %e = graph.div %i, %two : (!layout.tensor<4xi32>, !layout.tensor<i32>) -> !layout.tensor<4xi32>
  %f = graph.div %x, %d : (!layout.tensor<4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<4xf32>
  func.return %a, %b, %c, %e, %f : !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf16>, !layout.tensor<4xi32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     graph.mul
// CHECK-COUNT-5: graph.div
// CHECK-NOT:     graph.mul
