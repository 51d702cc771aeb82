// RUN: tilegraph-opt %s -p 'set-target{precision=int8},fold-qdq,fold-requant,dce' | filecheck %s
// RUN: tilegraph-opt %s -p 'fold-qdq,fold-requant' | filecheck %s --check-prefix=FLOAT

// A QDQ pair of convolutions as onnxruntime's symmetric quantiser writes it: the first's
// QuantizeLinear -> DequantizeLinear -> Relu -> QuantizeLinear (one scale) feeds the
// second. fold-requant makes the first one graph.requant_conv2d with the multiplier
// x_scale · w_scale / y_scale = 0.05 · 0.02 / 0.1 = 0.01, the zero point and relu = 1; the
// second (its result read by nothing quantised) keeps its dequantisation.
func.func @pair(%x: !layout.tensor<1x8x6x6xf32, NCHW>) -> !layout.tensor<1x4x6x6xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x8x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x8x6x6xi8, NCHW>
  %xd = graph.dequantize_linear %xq, %s, %z : (!layout.tensor<1x8x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x8x6x6xf32, NCHW>
  %wq = graph.constant dense<3> : !layout.tensor<16x8x1x1xi8, NCHW>
  %ws = graph.constant dense<0.02> : !layout.tensor<f32>
  %wd = graph.dequantize_linear %wq, %ws, %z : (!layout.tensor<16x8x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<16x8x1x1xf32, NCHW>
  %c = graph.conv2d %xd, %wd : (!layout.tensor<1x8x6x6xf32, NCHW>, !layout.tensor<16x8x1x1xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %yz = graph.constant dense<-3> : !layout.tensor<i8>
  %q = graph.quantize_linear %c, %ys, %yz : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xi8, NCHW>
  %dq = graph.dequantize_linear %q, %ys, %yz : (!layout.tensor<1x16x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %r = graph.relu %dq : !layout.tensor<1x16x6x6xf32, NCHW>
  %q2 = graph.quantize_linear %r, %ys, %yz : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xi8, NCHW>
  %dq2 = graph.dequantize_linear %q2, %ys, %yz : (!layout.tensor<1x16x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %w2q = graph.constant dense<-2> : !layout.tensor<4x16x1x1xi8, NCHW>
  %w2d = graph.dequantize_linear %w2q, %ws, %z : (!layout.tensor<4x16x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<4x16x1x1xf32, NCHW>
  %c2 = graph.conv2d %dq2, %w2d : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<4x16x1x1xf32, NCHW>) -> !layout.tensor<1x4x6x6xf32, NCHW>
  func.return %c2 : !layout.tensor<1x4x6x6xf32, NCHW>
}
// CHECK-LABEL: func.func @pair(
// CHECK:         %[[M:.+]] = graph.constant dense<0.01{{[0-9]*}}> : !layout.tensor<16xf32>
// CHECK-NEXT:    %q2 = graph.requant_conv2d %xq, %wq, %{{.+}}, %[[M]] {zero_point = -3, relu = 1} : {{.*}} -> !layout.tensor<1x16x6x6xi8, NCHW>
// CHECK-NOT:     graph.quantize_linear
// CHECK-NOT:     graph.relu
// CHECK:         %c2 = graph.quant_conv2d %q2, %w2q
// FLOAT-NOT:     graph.requant_conv2d

// A depthwise convolution of 40 channels: int8's C0 = 32 runs it in group blocks of 32
// groups (FRACTAL_Z's rule), whose 32 output channels fill whole C1 slices: requantised.
func.func @depthwise(%x: !layout.tensor<1x40x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x40x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x6x6xi8, NCHW>
  %xd = graph.dequantize_linear %xq, %s, %z : (!layout.tensor<1x40x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x6x6xf32, NCHW>
  %wq = graph.constant dense<3> : !layout.tensor<40x1x3x3xi8, NCHW>
  %ws = graph.constant dense<0.02> : !layout.tensor<f32>
  %wd = graph.dequantize_linear %wq, %ws, %z : (!layout.tensor<40x1x3x3xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<40x1x3x3xf32, NCHW>
  %c = graph.conv2d %xd, %wd {group = 40, pads = [1, 1, 1, 1]} : (!layout.tensor<1x40x6x6xf32, NCHW>, !layout.tensor<40x1x3x3xf32, NCHW>) -> !layout.tensor<1x40x6x6xf32, NCHW>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %q = graph.quantize_linear %c, %ys, %z : (!layout.tensor<1x40x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x6x6xi8, NCHW>
  %dq = graph.dequantize_linear %q, %ys, %z : (!layout.tensor<1x40x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x6x6xf32, NCHW>
  %w2q = graph.constant dense<-2> : !layout.tensor<16x40x1x1xi8, NCHW>
  %w2d = graph.dequantize_linear %w2q, %ws, %z : (!layout.tensor<16x40x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<16x40x1x1xf32, NCHW>
  %c2 = graph.conv2d %dq, %w2d : (!layout.tensor<1x40x6x6xf32, NCHW>, !layout.tensor<16x40x1x1xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  func.return %c2 : !layout.tensor<1x16x6x6xf32, NCHW>
}
// CHECK-LABEL: func.func @depthwise(
// CHECK:         %q = graph.requant_conv2d %xq, %wq, %{{.+}}, %{{.+}} {group = 40, pads = [1, 1, 1, 1], zero_point = 0} : {{.*}} -> !layout.tensor<1x40x6x6xi8, NCHW>
// CHECK:         %c2 = graph.quant_conv2d %q, %w2q

// 64 -> 32 channels in 4 groups: blocks of 2 groups (16 input channels each, K of 32)
// write 16 output channels, half a C1 slice of int8: it keeps its dequantisation.
func.func @grouped_half_slices(%x: !layout.tensor<1x64x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x64x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x64x6x6xi8, NCHW>
  %xd = graph.dequantize_linear %xq, %s, %z : (!layout.tensor<1x64x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x64x6x6xf32, NCHW>
  %wq = graph.constant dense<3> : !layout.tensor<32x16x1x1xi8, NCHW>
  %ws = graph.constant dense<0.02> : !layout.tensor<f32>
  %wd = graph.dequantize_linear %wq, %ws, %z : (!layout.tensor<32x16x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<32x16x1x1xf32, NCHW>
  %c = graph.conv2d %xd, %wd {group = 4} : (!layout.tensor<1x64x6x6xf32, NCHW>, !layout.tensor<32x16x1x1xf32, NCHW>) -> !layout.tensor<1x32x6x6xf32, NCHW>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %q = graph.quantize_linear %c, %ys, %z : (!layout.tensor<1x32x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x32x6x6xi8, NCHW>
  %dq = graph.dequantize_linear %q, %ys, %z : (!layout.tensor<1x32x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x32x6x6xf32, NCHW>
  %w2q = graph.constant dense<-2> : !layout.tensor<16x32x1x1xi8, NCHW>
  %w2d = graph.dequantize_linear %w2q, %ws, %z : (!layout.tensor<16x32x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<16x32x1x1xf32, NCHW>
  %c2 = graph.conv2d %dq, %w2d : (!layout.tensor<1x32x6x6xf32, NCHW>, !layout.tensor<16x32x1x1xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  func.return %c2 : !layout.tensor<1x16x6x6xf32, NCHW>
}
// CHECK-LABEL: func.func @grouped_half_slices(
// CHECK-NOT:     graph.requant_conv2d
// CHECK:         graph.quant_conv2d %xq, %wq

// The quantised result feeds the next convolution and a residual add: it keeps its
// dequantisation, which fuses into the convolution's epilogue (an int8 result would add
// dequantising kernels and TransData for the add).
func.func @read_by_vector_ops_too(%x: !layout.tensor<1x16x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xi8, NCHW>
  %xd = graph.dequantize_linear %xq, %s, %z : (!layout.tensor<1x16x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %wq = graph.constant dense<3> : !layout.tensor<16x16x1x1xi8, NCHW>
  %ws = graph.constant dense<0.02> : !layout.tensor<f32>
  %wd = graph.dequantize_linear %wq, %ws, %z : (!layout.tensor<16x16x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<16x16x1x1xf32, NCHW>
  %c = graph.conv2d %xd, %wd {group = 1} : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<16x16x1x1xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %q = graph.quantize_linear %c, %ys, %z : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xi8, NCHW>
  %dq = graph.dequantize_linear %q, %ys, %z : (!layout.tensor<1x16x6x6xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %w2q = graph.constant dense<-2> : !layout.tensor<16x16x1x1xi8, NCHW>
  %w2d = graph.dequantize_linear %w2q, %ws, %z : (!layout.tensor<16x16x1x1xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<16x16x1x1xf32, NCHW>
  %c2 = graph.conv2d %dq, %w2d : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<16x16x1x1xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  %sum = graph.add %c2, %dq : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<1x16x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
  func.return %sum : !layout.tensor<1x16x6x6xf32, NCHW>
}
// CHECK-LABEL: func.func @read_by_vector_ops_too(
// CHECK-NOT:     graph.requant_conv2d
// CHECK:         graph.quant_conv2d %xq, %wq
