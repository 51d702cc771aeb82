// RUN: tilegraph-opt %s -p 'set-target{precision=int8},fold-qdq,dce' | filecheck %s

// A head split as onnxruntime's QDQ quantiser writes it: the projection's float result is
// reshaped, transposed, multiplied by a scalar and only then quantised. fold-qdq moves
// the Mul and the QuantizeLinear before the Reshape / Transpose (both commute with a
// move), so the int8 tensor is what moves.
func.func @head_split(%x: !layout.tensor<2x6x8xf32>) -> !layout.tensor<2x2x6x4xi8> {
  %shape = graph.constant dense<[2, 6, 2, 4]> : !layout.tensor<4xi64>
  %r = graph.reshape %x, %shape : (!layout.tensor<2x6x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x6x2x4xf32>
  %t = graph.transpose %r {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x6x2x4xf32>) -> !layout.tensor<2x2x6x4xf32>
  %c = graph.constant dense<0.5> : !layout.tensor<1xf32>
  %m = graph.mul %t, %c : (!layout.tensor<2x2x6x4xf32>, !layout.tensor<1xf32>) -> !layout.tensor<2x2x6x4xf32>
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<3> : !layout.tensor<i8>
  %q = graph.quantize_linear %m, %s, %z : (!layout.tensor<2x2x6x4xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x2x6x4xi8>
  func.return %q : !layout.tensor<2x2x6x4xi8>
}
// CHECK-LABEL: func.func @head_split(
// CHECK:         %[[M:.+]] = graph.mul %x, %c : (!layout.tensor<2x6x8xf32>, !layout.tensor<1xf32>) -> !layout.tensor<2x6x8xf32>
// CHECK:         %[[Q:.+]] = graph.quantize_linear %[[M]], %s, %z : {{.*}} -> !layout.tensor<2x6x8xi8>
// CHECK:         %[[R:.+]] = graph.reshape %[[Q]], %shape : {{.*}} -> !layout.tensor<2x6x2x4xi8>
// CHECK:         %q = graph.transpose %[[R]] {perm = [0, 2, 1, 3]} : {{.*}} -> !layout.tensor<2x2x6x4xi8>
// CHECK-NEXT:    func.return %q

// The output merge: DequantizeLinear -> Transpose -> Reshape -> QuantizeLinear of one
// quantisation is the int8 tensor moved (Q(DQ(q)) = q).
func.func @merge(%a: !layout.tensor<2x2x6x4xi8>) -> !layout.tensor<2x6x8xi8> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<3> : !layout.tensor<i8>
  %d = graph.dequantize_linear %a, %s, %z : (!layout.tensor<2x2x6x4xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x2x6x4xf32>
  %t = graph.transpose %d {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x2x6x4xf32>) -> !layout.tensor<2x6x2x4xf32>
  %shape = graph.constant dense<[2, 6, 8]> : !layout.tensor<3xi64>
  %r = graph.reshape %t, %shape : (!layout.tensor<2x6x2x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x6x8xf32>
  %q = graph.quantize_linear %r, %s, %z : (!layout.tensor<2x6x8xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x6x8xi8>
  func.return %q : !layout.tensor<2x6x8xi8>
}
// CHECK-LABEL: func.func @merge(
// CHECK-NOT:     graph.quantize_linear
// CHECK:         %[[T:.+]] = graph.transpose %a {perm = [0, 2, 1, 3]} : {{.*}} -> !layout.tensor<2x6x2x4xi8>
// CHECK:         %q = graph.reshape %[[T]], %shape : {{.*}} -> !layout.tensor<2x6x8xi8>
// CHECK-NEXT:    func.return %q

// Not hoisted: a Mul by a tensor of several values (it does not commute with the
// transpose), and a move whose float result another op reads as data.
func.func @kept(%x: !layout.tensor<2x3xf32>, %w: !layout.tensor<3x2xf32>) -> (!layout.tensor<3x2xi8>, !layout.tensor<3x2xf32>) {
  %t = graph.transpose %x {perm = array<i64: 1, 0>} : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  %c = graph.constant dense<[0.5, 2.0]> : !layout.tensor<2xf32>
  %m = graph.mul %t, %c : (!layout.tensor<3x2xf32>, !layout.tensor<2xf32>) -> !layout.tensor<3x2xf32>
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<3> : !layout.tensor<i8>
  %q = graph.quantize_linear %m, %s, %z : (!layout.tensor<3x2xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<3x2xi8>
  %t2 = graph.transpose %x {perm = array<i64: 1, 0>} : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  %q2 = graph.quantize_linear %t2, %s, %z : (!layout.tensor<3x2xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<3x2xi8>
  %a = graph.add %t2, %w : (!layout.tensor<3x2xf32>, !layout.tensor<3x2xf32>) -> !layout.tensor<3x2xf32>
  %d = graph.dequantize_linear %q2, %s, %z : (!layout.tensor<3x2xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<3x2xf32>
  %o = graph.add %a, %d : (!layout.tensor<3x2xf32>, !layout.tensor<3x2xf32>) -> !layout.tensor<3x2xf32>
  func.return %q, %o : !layout.tensor<3x2xi8>, !layout.tensor<3x2xf32>
}
// CHECK-LABEL: func.func @kept(
// CHECK:         %q = graph.quantize_linear %m, %s, %z
// CHECK:         %q2 = graph.quantize_linear %t2, %s, %z
