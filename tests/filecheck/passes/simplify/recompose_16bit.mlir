// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=recompose-layer-norm,recompose-gelu-erf,recompose-gelu-tanh,recompose-softmax},dce' --split-input-file | filecheck %s

// A .half() export's erf GELU: sqrt 2 rounded to fp16 is 1.4140625 (one fp16 ulp of it).
func.func @gelu_f16(%x: !layout.tensor<4xf16>) -> !layout.tensor<4xf16> {
  %r2 = graph.constant dense<1.4140625> : !layout.tensor<f16>
  %one = graph.constant dense<1.0> : !layout.tensor<f16>
  %half = graph.constant dense<0.5> : !layout.tensor<f16>
  %a = graph.div %x, %r2 : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  %e = graph.erf %a : !layout.tensor<4xf16>
  %o = graph.add %e, %one : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  %m = graph.mul %x, %o : !layout.tensor<4xf16>
  %y = graph.mul %m, %half : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  func.return %y : !layout.tensor<4xf16>
}
// CHECK-LABEL: func.func @gelu_f16
// CHECK-NEXT:  %y = graph.gelu %x : !layout.tensor<4xf16>
// CHECK-NEXT:  func.return %y

// -----
// bf16 holds sqrt 2 as 1.4140625 too (8 bits of mantissa).
func.func @gelu_bf16(%x: !layout.tensor<4xbf16>) -> !layout.tensor<4xbf16> {
  %r2 = graph.constant dense<1.4140625> : !layout.tensor<bf16>
  %one = graph.constant dense<1.0> : !layout.tensor<bf16>
  %half = graph.constant dense<0.5> : !layout.tensor<bf16>
  %a = graph.div %x, %r2 : (!layout.tensor<4xbf16>, !layout.tensor<bf16>) -> !layout.tensor<4xbf16>
  %e = graph.erf %a : !layout.tensor<4xbf16>
  %o = graph.add %e, %one : (!layout.tensor<4xbf16>, !layout.tensor<bf16>) -> !layout.tensor<4xbf16>
  %m = graph.mul %x, %o : !layout.tensor<4xbf16>
  %y = graph.mul %m, %half : (!layout.tensor<4xbf16>, !layout.tensor<bf16>) -> !layout.tensor<4xbf16>
  func.return %y : !layout.tensor<4xbf16>
}
// CHECK-LABEL: func.func @gelu_bf16
// CHECK-NEXT:  %y = graph.gelu %x : !layout.tensor<4xbf16>
// CHECK-NEXT:  func.return %y

// -----
// The tanh form in fp16: sqrt(2/pi) as 0.79785156, 0.044715 as 0.04473877.
func.func @gelu_tanh_f16(%x: !layout.tensor<4xf16>) -> !layout.tensor<4xf16> {
  %three = graph.constant dense<3.0> : !layout.tensor<f16>
  %c = graph.constant dense<0.04473877> : !layout.tensor<f16>
  %k = graph.constant dense<0.79785156> : !layout.tensor<f16>
  %one = graph.constant dense<1.0> : !layout.tensor<f16>
  %half = graph.constant dense<0.5> : !layout.tensor<f16>
  %p = graph.pow %x, %three : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  %cp = graph.mul %c, %p : (!layout.tensor<f16>, !layout.tensor<4xf16>) -> !layout.tensor<4xf16>
  %s = graph.add %x, %cp : !layout.tensor<4xf16>
  %ks = graph.mul %k, %s : (!layout.tensor<f16>, !layout.tensor<4xf16>) -> !layout.tensor<4xf16>
  %t = graph.tanh %ks : !layout.tensor<4xf16>
  %o = graph.add %one, %t : (!layout.tensor<f16>, !layout.tensor<4xf16>) -> !layout.tensor<4xf16>
  %hx = graph.mul %half, %x : (!layout.tensor<f16>, !layout.tensor<4xf16>) -> !layout.tensor<4xf16>
  %y = graph.mul %hx, %o : !layout.tensor<4xf16>
  func.return %y : !layout.tensor<4xf16>
}
// CHECK-LABEL: func.func @gelu_tanh_f16
// CHECK-NEXT:  %y = graph.gelu %x {approximate = "tanh"} : !layout.tensor<4xf16>
// CHECK-NEXT:  func.return %y

// -----
// Two fp16 ulps off sqrt 2 is another constant: no GELU.
func.func @gelu_f16_off(%x: !layout.tensor<4xf16>) -> !layout.tensor<4xf16> {
  %r2 = graph.constant dense<1.416015625> : !layout.tensor<f16>
  %one = graph.constant dense<1.0> : !layout.tensor<f16>
  %half = graph.constant dense<0.5> : !layout.tensor<f16>
  %a = graph.div %x, %r2 : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  %e = graph.erf %a : !layout.tensor<4xf16>
  %o = graph.add %e, %one : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  %m = graph.mul %x, %o : !layout.tensor<4xf16>
  %y = graph.mul %m, %half : (!layout.tensor<4xf16>, !layout.tensor<f16>) -> !layout.tensor<4xf16>
  func.return %y : !layout.tensor<4xf16>
}
// CHECK-LABEL: func.func @gelu_f16_off
// CHECK-NOT:   graph.gelu
// CHECK:       %y = graph.mul %m, %half

// -----
// fp16's rounding of sqrt 2 held in an fp32 constant is not sqrt 2 to fp32: no GELU.
func.func @gelu_f32_rounded(%x: !layout.tensor<4xf32>) -> !layout.tensor<4xf32> {
  %r2 = graph.constant dense<1.4140625> : !layout.tensor<f32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %a = graph.div %x, %r2 : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %e = graph.erf %a : !layout.tensor<4xf32>
  %o = graph.add %e, %one : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %m = graph.mul %x, %o : !layout.tensor<4xf32>
  %y = graph.mul %m, %half : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  func.return %y : !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @gelu_f32_rounded
// CHECK-NOT:   graph.gelu
// CHECK:       %y = graph.mul %m, %half

// -----
// An fp16 LayerNorm decomposition: recomposed as in fp32, with the epsilon the model holds
// (1e-5 in fp16); the op computes its statistics in fp32 (as CANN's layer_norm does).
func.func @layer_norm_f16(%x: !layout.tensor<2x8xf16>) -> !layout.tensor<2x8xf16> {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f16>
  %eps = graph.constant dense<1.0e-05> : !layout.tensor<f16>
  %m = graph.reduce_mean %x, %ax : (!layout.tensor<2x8xf16>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf16>
  %d = graph.sub %x, %m : (!layout.tensor<2x8xf16>, !layout.tensor<2x1xf16>) -> !layout.tensor<2x8xf16>
  %p = graph.pow %d, %two : (!layout.tensor<2x8xf16>, !layout.tensor<f16>) -> !layout.tensor<2x8xf16>
  %v = graph.reduce_mean %p, %ax : (!layout.tensor<2x8xf16>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf16>
  %ve = graph.add %v, %eps : (!layout.tensor<2x1xf16>, !layout.tensor<f16>) -> !layout.tensor<2x1xf16>
  %s = graph.sqrt %ve : !layout.tensor<2x1xf16>
  %y = graph.div %d, %s : (!layout.tensor<2x8xf16>, !layout.tensor<2x1xf16>) -> !layout.tensor<2x8xf16>
  func.return %y : !layout.tensor<2x8xf16>
}
// CHECK-LABEL: func.func @layer_norm_f16
// CHECK:       %[[Y:.*]] = graph.layer_norm %x, %{{.*}} {axis = 1, epsilon = 1.001358e-05} : (!layout.tensor<2x8xf16>
// CHECK-NEXT:  func.return %[[Y]]
