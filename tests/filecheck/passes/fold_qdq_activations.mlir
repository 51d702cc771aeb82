// RUN: tilegraph-opt %s -p 'set-target{precision=int8},fold-qdq,fold-requant,dce' | filecheck %s

// Attention's Q·Kᵀ as onnxruntime's QDQ quantiser writes it (symmetric activations): the
// head split's Transpose wrapped in DequantizeLinear -> Transpose -> QuantizeLinear of one
// scale, and a MatMul of two DequantizeLinear activations. fold-qdq moves the int8
// tensor (graph.transpose of i8), and the MatMul becomes graph.quant_matmul with the
// right operand transposed to rows of K (K = 20, N = 7) and the scale 0.05 · 0.1 = 0.005
// per column; the projection before it requantises in fixpipe (its QuantizeLinear's int8
// result reaches the cube through the transpose).
func.func @scores(%x: !layout.tensor<2x7x48xf32>, %k: !layout.tensor<2x20x7xi8>) -> !layout.tensor<2x7x7xf32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<2x7x48xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x48xi8>
  %w = graph.constant dense<3> : !layout.tensor<20x48xi8>
  %b = graph.constant dense<0> : !layout.tensor<20xi32>
  %d = graph.constant dense<0.001> : !layout.tensor<20xf32>
  %qp = graph.quant_matmul %xq, %w, %b, %d : (!layout.tensor<2x7x48xi8>, !layout.tensor<20x48xi8>, !layout.tensor<20xi32>, !layout.tensor<20xf32>) -> !layout.tensor<2x7x20xf32>
  %qs = graph.constant dense<0.05> : !layout.tensor<f32>
  %qq = graph.quantize_linear %qp, %qs, %z : (!layout.tensor<2x7x20xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xi8>
  %qd = graph.dequantize_linear %qq, %qs, %z : (!layout.tensor<2x7x20xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xf32>
  %qt = graph.transpose %qd {perm = array<i64: 0, 1, 2>} : (!layout.tensor<2x7x20xf32>) -> !layout.tensor<2x7x20xf32>
  %qtq = graph.quantize_linear %qt, %qs, %z : (!layout.tensor<2x7x20xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xi8>
  %qtd = graph.dequantize_linear %qtq, %qs, %z : (!layout.tensor<2x7x20xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xf32>
  %ks = graph.constant dense<0.1> : !layout.tensor<f32>
  %kd = graph.dequantize_linear %k, %ks, %z : (!layout.tensor<2x20x7xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x20x7xf32>
  %scores = graph.matmul %qtd, %kd : (!layout.tensor<2x7x20xf32>, !layout.tensor<2x20x7xf32>) -> !layout.tensor<2x7x7xf32>
  func.return %scores : !layout.tensor<2x7x7xf32>
}
// CHECK-LABEL: func.func @scores(
// CHECK:         %qq = graph.requant_matmul %xq, %w, %b, %{{.+}} {zero_point = 0} : {{.*}} -> !layout.tensor<2x7x20xi8>
// CHECK:         %qtq = graph.transpose %qq {perm = [0, 1, 2]} : !layout.tensor<2x7x20xi8>
// CHECK:         %[[R:.+]] = graph.transpose %k {perm = [0, 2, 1]} : (!layout.tensor<2x20x7xi8>) -> !layout.tensor<2x7x20xi8>
// CHECK:         %[[S:.+]] = graph.constant dense<0.00{{49+|50*}}{{[0-9]*}}> : !layout.tensor<7xf32>
// CHECK:         %scores = graph.quant_matmul %qtq, %[[R]], %{{.+}}, %[[S]] : {{.*}} -> !layout.tensor<2x7x7xf32>

// Asymmetric activations (za = -128: uint8's 0 re-centred, zb = 5):
// Σ (a + 128)(b - 5) = Σ ab - 5·Σ_k a - (-128)·Σ_k b + K·(-128)·5. The cube writes its raw
// int32 Σ ab plus the constant K·za·zb = 20 · -128 · 5 = -12800 (its bias; no scale, K
// stays 20); the row sums 5·Σ_k a ([2, 7, 1]) and the column sums -128·Σ_k b per batch
// ([2, 1, 7]) are one-column / one-row int8 products against a [1, K] row of the zero
// point; int32 subs, then the cast to float32 and the product by 0.05 · 0.05.
func.func @asymmetric(%a: !layout.tensor<2x7x20xi8>, %k: !layout.tensor<2x20x7xi8>) -> !layout.tensor<2x7x7xf32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %za = graph.constant dense<-128> : !layout.tensor<i8>
  %zb = graph.constant dense<5> : !layout.tensor<i8>
  %ad = graph.dequantize_linear %a, %s, %za : (!layout.tensor<2x7x20xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xf32>
  %kd = graph.dequantize_linear %k, %s, %zb : (!layout.tensor<2x20x7xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x20x7xf32>
  %m = graph.matmul %ad, %kd : (!layout.tensor<2x7x20xf32>, !layout.tensor<2x20x7xf32>) -> !layout.tensor<2x7x7xf32>
  func.return %m : !layout.tensor<2x7x7xf32>
}
// CHECK-LABEL: func.func @asymmetric(
// CHECK:         %[[R:.+]] = graph.transpose %k {perm = [0, 2, 1]} : (!layout.tensor<2x20x7xi8>) -> !layout.tensor<2x7x20xi8>
// CHECK:         %[[BIAS:.+]] = graph.constant dense<-12800> : !layout.tensor<7xi32>
// CHECK:         %[[ACC:.+]] = graph.quant_matmul %a, %[[R]], %[[BIAS]] : {{.*}} -> !layout.tensor<2x7x7xi32>
// CHECK:         %[[ZB:.+]] = graph.constant dense<5> : !layout.tensor<1x20xi8>
// CHECK:         %[[ROWS:.+]] = graph.quant_matmul %a, %[[ZB]], %{{.+}} : {{.*}} -> !layout.tensor<2x7x1xi32>
// CHECK:         %[[T:.+]] = graph.sub %[[ACC]], %[[ROWS]] : {{.*}} -> !layout.tensor<2x7x7xi32>
// CHECK:         %[[ZA:.+]] = graph.constant dense<-128> : !layout.tensor<1x20xi8>
// CHECK:         %[[COLS:.+]] = graph.quant_matmul %[[ZA]], %[[R]], %{{.+}} : {{.*}} -> !layout.tensor<2x1x7xi32>
// CHECK:         %[[U:.+]] = graph.sub %[[T]], %[[COLS]] : {{.*}} -> !layout.tensor<2x7x7xi32>
// CHECK:         %[[F:.+]] = graph.cast %[[U]] {to = 1} : (!layout.tensor<2x7x7xi32>) -> !layout.tensor<2x7x7xf32>
// CHECK:         %[[S:.+]] = graph.constant dense<0.0025{{[0-9]*}}> : !layout.tensor<f32>
// CHECK:         %m = graph.mul %[[F]], %[[S]]
// CHECK-NOT:     graph.matmul
// CHECK-NOT:     graph.concat

// A projection whose int8 result (zero point 3) feeds a matmul of two activations (read
// as it is by the raw int32 product; only the right operand's zero point is 0) still
// requantises in fixpipe.
func.func @asymmetric_projection(%x: !layout.tensor<2x7x48xf32>, %k: !layout.tensor<2x20x7xi8>) -> !layout.tensor<2x7x7xf32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %z3 = graph.constant dense<3> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<2x7x48xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x48xi8>
  %w = graph.constant dense<3> : !layout.tensor<20x48xi8>
  %b = graph.constant dense<0> : !layout.tensor<20xi32>
  %d = graph.constant dense<0.001> : !layout.tensor<20xf32>
  %qp = graph.quant_matmul %xq, %w, %b, %d : (!layout.tensor<2x7x48xi8>, !layout.tensor<20x48xi8>, !layout.tensor<20xi32>, !layout.tensor<20xf32>) -> !layout.tensor<2x7x20xf32>
  %qq = graph.quantize_linear %qp, %s, %z3 : (!layout.tensor<2x7x20xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xi8>
  %qd = graph.dequantize_linear %qq, %s, %z3 : (!layout.tensor<2x7x20xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x7x20xf32>
  %kd = graph.dequantize_linear %k, %s, %z : (!layout.tensor<2x20x7xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x20x7xf32>
  %m = graph.matmul %qd, %kd : (!layout.tensor<2x7x20xf32>, !layout.tensor<2x20x7xf32>) -> !layout.tensor<2x7x7xf32>
  func.return %m : !layout.tensor<2x7x7xf32>
}
// CHECK-LABEL: func.func @asymmetric_projection(
// CHECK:         %qq = graph.requant_matmul %xq, %w, %b, %{{.+}} {zero_point = 3} : {{.*}} -> !layout.tensor<2x7x20xi8>
// CHECK:         %[[R:.+]] = graph.transpose %k
// CHECK:         %[[ACC:.+]] = graph.quant_matmul %qq, %[[R]], %{{.+}} : {{.*}} -> !layout.tensor<2x7x7xi32>
// CHECK:         %[[Z:.+]] = graph.constant dense<3> : !layout.tensor<1x20xi8>
// CHECK:         %[[COLS:.+]] = graph.quant_matmul %[[Z]], %[[R]], %{{.+}} : {{.*}} -> !layout.tensor<2x1x7xi32>
// CHECK:         graph.sub %[[ACC]], %[[COLS]]

// A dynamic batch (a symbol): only K and N must be static (the zero-point rows are [1, K]
// constants, the bias [N]), so the matmul of two activations folds with the batch a symbol.
func.func @dynamic(%a: !layout.tensor<[b, 7, 20], i8>, %k: !layout.tensor<[b, 20, 7], i8>) -> !layout.tensor<[b, 7, 7], f32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %za = graph.constant dense<3> : !layout.tensor<i8>
  %ad = graph.dequantize_linear %a, %s, %za : (!layout.tensor<[b, 7, 20], i8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<[b, 7, 20], f32>
  %kd = graph.dequantize_linear %k, %s, %za : (!layout.tensor<[b, 20, 7], i8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<[b, 20, 7], f32>
  %m = graph.matmul %ad, %kd : (!layout.tensor<[b, 7, 20], f32>, !layout.tensor<[b, 20, 7], f32>) -> !layout.tensor<[b, 7, 7], f32>
  func.return %m : !layout.tensor<[b, 7, 7], f32>
}
// CHECK-LABEL: func.func @dynamic(
// CHECK:         graph.quant_matmul %a, %{{.+}}, %{{.+}} : {{.*}} -> !layout.tensor<[b, 7, 7], i32>
// CHECK:         graph.quant_matmul %a, %{{.+}}, %{{.+}} : {{.*}} -> !layout.tensor<[b, 7, 1], i32>
// CHECK:         graph.quant_matmul %{{.+}}, %{{.+}}, %{{.+}} : {{.*}} -> !layout.tensor<[b, 1, 7], i32>
// CHECK:         %m = graph.mul %{{.+}}, %{{.+}} : (!layout.tensor<[b, 7, 7], f32>, !layout.tensor<f32>) -> !layout.tensor<[b, 7, 7], f32>
// CHECK-NOT:     graph.matmul
