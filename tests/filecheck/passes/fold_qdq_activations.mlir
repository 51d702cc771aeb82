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

// Asymmetric activations (za = -128: uint8's 0 re-centred, zb = 5): the cube sums
// Σ (a + 128)(b - 5) over K lengthened from 20 to 80: a against rows of -5 (-5·Σ_k a), then
// two column blocks of 64 (-(-128) does not fit int8) against the rows of b (128·Σ_k b);
// the constant K·za·zb = 20 · -128 · 5 = -12800 is the int32 bias.
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
// CHECK:         %[[C:.+]] = graph.constant dense<64> : !layout.tensor<2x7x20xi8>
// CHECK:         %[[A:.+]] = graph.concat %a, %a, %[[C]], %[[C]] {axis = 2} : {{.*}} -> !layout.tensor<2x7x80xi8>
// CHECK:         %[[Z:.+]] = graph.constant dense<-5> : !layout.tensor<2x7x20xi8>
// CHECK:         %[[B:.+]] = graph.concat %[[R]], %[[Z]], %[[R]], %[[R]] {axis = 2} : {{.*}} -> !layout.tensor<2x7x80xi8>
// CHECK:         %[[BIAS:.+]] = graph.constant dense<-12800> : !layout.tensor<7xi32>
// CHECK:         %m = graph.quant_matmul %[[A]], %[[B]], %[[BIAS]], %{{.+}} : {{.*}} -> !layout.tensor<2x7x7xf32>
// CHECK-NOT:     graph.matmul

// A projection whose int8 result (zero point 3) reaches the cube only through the concat
// that lengthens K still requantises in fixpipe.
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
// CHECK:         %[[C:.+]] = graph.constant dense<-3> : !layout.tensor<2x7x20xi8>
// CHECK:         %[[A:.+]] = graph.concat %qq, %[[C]] {axis = 2} : {{.*}} -> !layout.tensor<2x7x40xi8>
// CHECK:         %[[B:.+]] = graph.concat %[[R:.+]], %[[R]] {axis = 2} : {{.*}} -> !layout.tensor<2x7x40xi8>
// CHECK:         %m = graph.quant_matmul %[[A]], %[[B]], %{{.+}}, %{{.+}} : {{.*}} -> !layout.tensor<2x7x7xf32>

// A dynamic batch (a symbol): the zero points' K blocks would be constants of the operands'
// shapes, so the matmul of two activations keeps its float form (before: a crash).
func.func @dynamic(%a: !layout.tensor<[b, 7, 20], i8>, %k: !layout.tensor<[b, 20, 7], i8>) -> !layout.tensor<[b, 7, 7], f32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %za = graph.constant dense<3> : !layout.tensor<i8>
  %ad = graph.dequantize_linear %a, %s, %za : (!layout.tensor<[b, 7, 20], i8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<[b, 7, 20], f32>
  %kd = graph.dequantize_linear %k, %s, %za : (!layout.tensor<[b, 20, 7], i8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<[b, 20, 7], f32>
  %m = graph.matmul %ad, %kd : (!layout.tensor<[b, 7, 20], f32>, !layout.tensor<[b, 20, 7], f32>) -> !layout.tensor<[b, 7, 7], f32>
  func.return %m : !layout.tensor<[b, 7, 7], f32>
}
// CHECK-LABEL: func.func @dynamic(
// CHECK:         %m = graph.matmul %ad, %kd
