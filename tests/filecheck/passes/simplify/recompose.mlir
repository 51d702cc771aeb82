// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=recompose-layer-norm,recompose-rms-norm,recompose-gelu-erf,recompose-gelu-tanh,recompose-softmax},dce' --split-input-file | filecheck %s

// recompose-layer-norm: PyTorch's LayerNorm decomposition with its affine tail.
func.func @layer_norm(%x: !layout.tensor<2x8xf32>) -> !layout.tensor<2x8xf32> {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %eps = graph.constant dense<1.0e-05> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]> : !layout.tensor<8xf32>
  %b = graph.constant dense<[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]> : !layout.tensor<8xf32>
  %m = graph.reduce_mean %x, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %d = graph.sub %x, %m : (!layout.tensor<2x8xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x8xf32>
  %p = graph.pow %d, %two : (!layout.tensor<2x8xf32>, !layout.tensor<f32>) -> !layout.tensor<2x8xf32>
  %v = graph.reduce_mean %p, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %ve = graph.add %v, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %ve : !layout.tensor<2x1xf32>
  %n = graph.div %d, %s : (!layout.tensor<2x8xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x8xf32>
  %ng = graph.mul %n, %g : (!layout.tensor<2x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x8xf32>
  %y = graph.add %ng, %b : (!layout.tensor<2x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x8xf32>
  func.return %y : !layout.tensor<2x8xf32>
}
// CHECK-LABEL: func.func @layer_norm
// CHECK:       %y = graph.layer_norm %x, %g, %b {axis = 1, epsilon = 1.0e-05}
// CHECK-NEXT:  func.return %y

// -----
// I-BERT's float-mode IntLayerNorm: sqrt of the variance with no + eps is epsilon 0.
func.func @layer_norm_no_eps(%x: !layout.tensor<2x8xf32>) -> !layout.tensor<2x8xf32> {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]> : !layout.tensor<8xf32>
  %b = graph.constant dense<[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]> : !layout.tensor<8xf32>
  %m = graph.reduce_mean %x, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %d = graph.sub %x, %m : (!layout.tensor<2x8xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x8xf32>
  %p = graph.pow %d, %two : (!layout.tensor<2x8xf32>, !layout.tensor<f32>) -> !layout.tensor<2x8xf32>
  %v = graph.reduce_mean %p, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %v : !layout.tensor<2x1xf32>
  %n = graph.div %d, %s : (!layout.tensor<2x8xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x8xf32>
  %ng = graph.mul %n, %g : (!layout.tensor<2x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x8xf32>
  %y = graph.add %ng, %b : (!layout.tensor<2x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x8xf32>
  func.return %y : !layout.tensor<2x8xf32>
}
// CHECK-LABEL: func.func @layer_norm_no_eps
// CHECK:       %y = graph.layer_norm %x, %g, %b {axis = 1, epsilon = 0.0{{.*}}}
// CHECK-NEXT:  func.return %y

// -----
// Cohere's LayerNorm: the centred value times torch.rsqrt's reciprocal, gamma first, no beta.
func.func @layer_norm_rsqrt(%x: !layout.tensor<2x8xf32>) -> !layout.tensor<2x8xf32> {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %eps = graph.constant dense<1.0e-05> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0]> : !layout.tensor<8xf32>
  %m = graph.reduce_mean %x, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %d = graph.sub %x, %m : (!layout.tensor<2x8xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x8xf32>
  %p = graph.pow %d, %two : (!layout.tensor<2x8xf32>, !layout.tensor<f32>) -> !layout.tensor<2x8xf32>
  %v = graph.reduce_mean %p, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %ve = graph.add %v, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %ve : !layout.tensor<2x1xf32>
  %r = graph.reciprocal %s : !layout.tensor<2x1xf32>
  %n = graph.mul %d, %r : (!layout.tensor<2x8xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x8xf32>
  %y = graph.mul %g, %n : (!layout.tensor<8xf32>, !layout.tensor<2x8xf32>) -> !layout.tensor<2x8xf32>
  func.return %y : !layout.tensor<2x8xf32>
}
// CHECK-LABEL: func.func @layer_norm_rsqrt
// CHECK:       %y = graph.layer_norm %x, %g {axis = 1, epsilon = 1.0e-05}
// CHECK-NEXT:  func.return %y

// -----
// Not over a leading axis: the means reduce axis 0, which is not "axis .. rank-1".
func.func @not_trailing(%x: !layout.tensor<2x8xf32>) -> !layout.tensor<2x8xf32> {
  %ax = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %eps = graph.constant dense<1.0e-05> : !layout.tensor<f32>
  %m = graph.reduce_mean %x, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x8xf32>
  %d = graph.sub %x, %m : (!layout.tensor<2x8xf32>, !layout.tensor<1x8xf32>) -> !layout.tensor<2x8xf32>
  %p = graph.mul %d, %d : !layout.tensor<2x8xf32>
  %v = graph.reduce_mean %p, %ax : (!layout.tensor<2x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x8xf32>
  %ve = graph.add %v, %eps : (!layout.tensor<1x8xf32>, !layout.tensor<f32>) -> !layout.tensor<1x8xf32>
  %s = graph.sqrt %ve : !layout.tensor<1x8xf32>
  %n = graph.div %d, %s : (!layout.tensor<2x8xf32>, !layout.tensor<1x8xf32>) -> !layout.tensor<2x8xf32>
  func.return %n : !layout.tensor<2x8xf32>
}
// CHECK-LABEL: func.func @not_trailing
// CHECK-NOT:   graph.layer_norm
// CHECK:       %n = graph.div %d, %s

// -----
// recompose-gelu-erf: 0.5 * x * (1 + erf(x / sqrt 2)), PyTorch's order.
func.func @gelu(%x: !layout.tensor<4xf32>) -> !layout.tensor<4xf32> {
  %r2 = graph.constant dense<1.4142135> : !layout.tensor<f32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %a = graph.div %x, %r2 : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %e = graph.erf %a : !layout.tensor<4xf32>
  %o = graph.add %e, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %m = graph.mul %x, %o : !layout.tensor<4xf32>
  %y = graph.mul %m, %half : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %y : !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT:  %y = graph.gelu %x : !layout.tensor<4xf32>
// CHECK-NEXT:  func.return %y

// -----
// A tanh where the erf belongs is another function: no GELU.
func.func @not_gelu(%x: !layout.tensor<4xf32>) -> !layout.tensor<4xf32> {
  %r2 = graph.constant dense<1.4142135> : !layout.tensor<f32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %a = graph.div %x, %r2 : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %e = graph.tanh %a : !layout.tensor<4xf32>
  %o = graph.add %e, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %m = graph.mul %x, %o : !layout.tensor<4xf32>
  %y = graph.mul %m, %half : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %y : !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT:   graph.gelu
// CHECK:       %y = graph.mul %m, %half

// -----
// recompose-softmax: the max-shifted form on one axis.
func.func @softmax(%x: !layout.tensor<2x5xf32>) -> !layout.tensor<2x5xf32> {
  %ax = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %mx = graph.reduce_max %x, %ax : (!layout.tensor<2x5xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %z = graph.sub %x, %mx : (!layout.tensor<2x5xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x5xf32>
  %e = graph.exp %z : !layout.tensor<2x5xf32>
  %s = graph.reduce_sum %e, %ax : (!layout.tensor<2x5xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %y = graph.div %e, %s : (!layout.tensor<2x5xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x5xf32>
  func.return %y : !layout.tensor<2x5xf32>
}
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:  %y = graph.softmax %x {axis = 1} : !layout.tensor<2x5xf32>
// CHECK-NEXT:  func.return %y

// -----
// The unshifted form is fast-math only (exp overflows where softmax does not).
func.func @unshifted(%x: !layout.tensor<2x5xf32>) -> !layout.tensor<2x5xf32> {
  %ax = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e = graph.exp %x : !layout.tensor<2x5xf32>
  %s = graph.reduce_sum %e, %ax : (!layout.tensor<2x5xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %y = graph.div %e, %s : (!layout.tensor<2x5xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x5xf32>
  func.return %y : !layout.tensor<2x5xf32>
}
// CHECK-LABEL: func.func @unshifted
// CHECK-NOT:   graph.softmax
// CHECK:       %y = graph.div %e, %s

// -----
// recompose-rms-norm: x / sqrt(mean(x^2) + eps) * g; with a second user of the mean, no.
func.func @rms(%x: !layout.tensor<2x4xf32>) -> (!layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %eps = graph.constant dense<1.0e-06> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : !layout.tensor<4xf32>
  %p = graph.pow %x, %two : (!layout.tensor<2x4xf32>, !layout.tensor<f32>) -> !layout.tensor<2x4xf32>
  %m = graph.reduce_mean %p, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me = graph.add %m, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %me : !layout.tensor<2x1xf32>
  %n = graph.div %x, %s : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %y = graph.mul %n, %g : (!layout.tensor<2x4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<2x4xf32>
  %p2 = graph.pow %x, %two : (!layout.tensor<2x4xf32>, !layout.tensor<f32>) -> !layout.tensor<2x4xf32>
  %m2 = graph.reduce_mean %p2, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me2 = graph.add %m2, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s2 = graph.sqrt %me2 : !layout.tensor<2x1xf32>
  %z = graph.div %x, %s2 : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  func.return %y, %z, %me2 : !layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>
}
// CHECK-LABEL: func.func @rms
// CHECK:       %y = graph.rms_norm %x, %g {axis = 1, epsilon = 1.0e-06}
// CHECK:       %z = graph.div %x, %s2

// -----
// recompose-rms-norm with no eps (Helium's export: sqrt(mean(x^2)) straight): epsilon 0.
func.func @rms_no_eps(%x: !layout.tensor<2x4xf32>) -> !layout.tensor<2x4xf32> {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : !layout.tensor<4xf32>
  %p = graph.pow %x, %two : (!layout.tensor<2x4xf32>, !layout.tensor<f32>) -> !layout.tensor<2x4xf32>
  %m = graph.reduce_mean %p, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %m : !layout.tensor<2x1xf32>
  %r = graph.reciprocal %s : !layout.tensor<2x1xf32>
  %n = graph.mul %x, %r : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %y = graph.mul %g, %n : (!layout.tensor<4xf32>, !layout.tensor<2x4xf32>) -> !layout.tensor<2x4xf32>
  func.return %y : !layout.tensor<2x4xf32>
}
// CHECK-LABEL: func.func @rms_no_eps
// CHECK:       %y = graph.rms_norm %x, %g {axis = 1, epsilon = 0.0}
// CHECK-NEXT:  func.return %y

// -----
// recompose-rms-norm, TorchScript's torch.rsqrt: x * (1 / sqrt(mean(x*x) + eps)) * g (gamma
// taken along); with 2 / sqrt(...) it is not a reciprocal, and a full-shape scale is no gamma.
func.func @rms_div_one(%x: !layout.tensor<2x4xf32>) -> (!layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>) {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %eps = graph.constant dense<1.0e-06> : !layout.tensor<f32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : !layout.tensor<4xf32>
  %full = graph.constant dense<0.5> : !layout.tensor<2x4xf32>
  %p = graph.mul %x, %x : !layout.tensor<2x4xf32>
  %m = graph.reduce_mean %p, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me = graph.add %m, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %me : !layout.tensor<2x1xf32>
  %r = graph.div %one, %s : (!layout.tensor<f32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x1xf32>
  %n = graph.mul %x, %r : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %y = graph.mul %n, %g : (!layout.tensor<2x4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<2x4xf32>
  %p2 = graph.mul %x, %x : !layout.tensor<2x4xf32>
  %m2 = graph.reduce_mean %p2, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me2 = graph.add %m2, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s2 = graph.sqrt %me2 : !layout.tensor<2x1xf32>
  %r2 = graph.div %two, %s2 : (!layout.tensor<f32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x1xf32>
  %z = graph.mul %x, %r2 : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %p3 = graph.mul %x, %x : !layout.tensor<2x4xf32>
  %m3 = graph.reduce_mean %p3, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me3 = graph.add %m3, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s3 = graph.sqrt %me3 : !layout.tensor<2x1xf32>
  %r3 = graph.div %one, %s3 : (!layout.tensor<f32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x1xf32>
  %n3 = graph.mul %x, %r3 : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %w = graph.mul %n3, %full : (!layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>) -> !layout.tensor<2x4xf32>
  func.return %y, %z, %w : !layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>, !layout.tensor<2x4xf32>
}
// CHECK-LABEL: func.func @rms_div_one
// CHECK:       %y = graph.rms_norm %x, %g {axis = 1, epsilon = 1.0e-06}
// CHECK:       %z = graph.mul %x, %r2
// CHECK:       %[[N3:.+]] = graph.rms_norm %x, %{{.+}} {axis = 1, epsilon = 1.0e-06}
// CHECK-NEXT:  %w = graph.mul %[[N3]], %full

// -----
// recompose-gelu-tanh: the tanh form; with 0.044 instead of 0.044715, no.
func.func @gelu_tanh(%x: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %three = graph.constant dense<3.0> : !layout.tensor<f32>
  %c = graph.constant dense<0.044715> : !layout.tensor<f32>
  %bad = graph.constant dense<0.044> : !layout.tensor<f32>
  %k = graph.constant dense<0.7978846> : !layout.tensor<f32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %p = graph.pow %x, %three : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %pc = graph.mul %p, %c : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %i = graph.add %x, %pc : !layout.tensor<4xf32>
  %ik = graph.mul %i, %k : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %t = graph.tanh %ik : !layout.tensor<4xf32>
  %o = graph.add %t, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %xo = graph.mul %x, %o : !layout.tensor<4xf32>
  %y = graph.mul %xo, %half : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %p2 = graph.pow %x, %three : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %pc2 = graph.mul %p2, %bad : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %i2 = graph.add %x, %pc2 : !layout.tensor<4xf32>
  %ik2 = graph.mul %i2, %k : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %t2 = graph.tanh %ik2 : !layout.tensor<4xf32>
  %o2 = graph.add %t2, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %xo2 = graph.mul %x, %o2 : !layout.tensor<4xf32>
  %z = graph.mul %xo2, %half : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %y, %z : !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @gelu_tanh
// CHECK:       %y = graph.gelu %x {approximate = "tanh"}
// CHECK:       %z = graph.mul %xo2, %half

// -----
// recompose-gelu-tanh, Bloom's spelling: tanh's argument factored through x,
// 0.79788456 * x * (1 + 0.044715 * x * x), and x * 0.5 first.
func.func @gelu_tanh_factored(%x: !layout.tensor<4xf32>) -> !layout.tensor<4xf32> {
  %c = graph.constant dense<0.044715> : !layout.tensor<f32>
  %k = graph.constant dense<0.79788456> : !layout.tensor<f32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %xc = graph.mul %x, %c : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %xcx = graph.mul %xc, %x : !layout.tensor<4xf32>
  %q = graph.add %xcx, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %xk = graph.mul %x, %k : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %arg = graph.mul %xk, %q : !layout.tensor<4xf32>
  %t = graph.tanh %arg : !layout.tensor<4xf32>
  %o = graph.add %t, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %xh = graph.mul %x, %half : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %y = graph.mul %xh, %o : !layout.tensor<4xf32>
  func.return %y : !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @gelu_tanh_factored
// CHECK-NEXT:    %y = graph.gelu %x {approximate = "tanh"}
// CHECK-NEXT:    func.return %y
