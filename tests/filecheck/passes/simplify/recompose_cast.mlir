// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=recompose-rms-norm,recompose-rms-norm-f32},dce' --split-input-file | filecheck %s

// recompose-rms-norm-f32: a half model's RMSNorm in float32 between Casts (Hugging Face's
// LLaMA / T5) is one fp16 rms_norm, which computes in float32 (stash_type 1).
func.func @rms_f32(%x: !layout.tensor<2x4xf16>) -> !layout.tensor<2x4xf16> {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %eps = graph.constant dense<1.0e-06> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : !layout.tensor<4xf16>
  %x32 = graph.cast %x {to = 1 : i64} : (!layout.tensor<2x4xf16>) -> !layout.tensor<2x4xf32>
  %p = graph.pow %x32, %two : (!layout.tensor<2x4xf32>, !layout.tensor<f32>) -> !layout.tensor<2x4xf32>
  %m = graph.reduce_mean %p, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me = graph.add %m, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %me : !layout.tensor<2x1xf32>
  %n = graph.div %x32, %s : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %n16 = graph.cast %n {to = 10 : i64} : (!layout.tensor<2x4xf32>) -> !layout.tensor<2x4xf16>
  %y = graph.mul %g, %n16 : (!layout.tensor<4xf16>, !layout.tensor<2x4xf16>) -> !layout.tensor<2x4xf16>
  func.return %y : !layout.tensor<2x4xf16>
}
// CHECK-LABEL: func.func @rms_f32
// CHECK-NOT:     graph.cast
// CHECK:         %y = graph.rms_norm %x, %g {axis = 1, epsilon = 1.0e-06
// CHECK-NOT:     graph.cast
// CHECK:         func.return %y

// -----
// The float32 result used too (the Cast back has a second reader): not recomposed.
func.func @rms_f32_used(%x: !layout.tensor<2x4xf16>) -> (!layout.tensor<2x4xf16>, !layout.tensor<2x4xf32>) {
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %eps = graph.constant dense<1.0e-06> : !layout.tensor<f32>
  %g = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : !layout.tensor<4xf16>
  %x32 = graph.cast %x {to = 1 : i64} : (!layout.tensor<2x4xf16>) -> !layout.tensor<2x4xf32>
  %p = graph.pow %x32, %two : (!layout.tensor<2x4xf32>, !layout.tensor<f32>) -> !layout.tensor<2x4xf32>
  %m = graph.reduce_mean %p, %ax : (!layout.tensor<2x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  %me = graph.add %m, %eps : (!layout.tensor<2x1xf32>, !layout.tensor<f32>) -> !layout.tensor<2x1xf32>
  %s = graph.sqrt %me : !layout.tensor<2x1xf32>
  %n = graph.div %x32, %s : (!layout.tensor<2x4xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x4xf32>
  %n16 = graph.cast %n {to = 10 : i64} : (!layout.tensor<2x4xf32>) -> !layout.tensor<2x4xf16>
  %y = graph.mul %g, %n16 : (!layout.tensor<4xf16>, !layout.tensor<2x4xf16>) -> !layout.tensor<2x4xf16>
  func.return %y, %n : !layout.tensor<2x4xf16>, !layout.tensor<2x4xf32>
}
// CHECK-LABEL: func.func @rms_f32_used
// CHECK:         %n16 = graph.cast %n_1
// CHECK:         graph.mul %g, %n16
