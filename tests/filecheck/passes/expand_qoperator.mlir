// RUN: tilegraph-opt %s -p 'set-target{precision=int8},expand-qoperator,fold-integer-ops,dce' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{precision=int8},expand-qoperator,fold-integer-ops,fold-qdq,dce' | filecheck %s --check-prefix=FOLDED
// RUN: tilegraph-opt %s -p 'expand-qoperator,fold-integer-ops' | filecheck %s --check-prefix=FLOAT

// QLinearConv becomes the QDQ pattern: DQ(x), DQ(w, per channel, axis 0), DQ(bias) with
// the constant scale x_scale * w_scale ([0.05 * 0.02, 0.05 * 0.04]), the conv, Q(y).
// CHECK-LABEL: func.func @qlinear_conv
// CHECK:       %[[XD:.*]] = graph.dequantize_linear %xq, %x_scale, %x_zero
// CHECK:       %[[WD:.*]] = graph.dequantize_linear %w, %w_scale, %w_zero {axis = 0}
// CHECK:       %[[S:.*]] = graph.constant dense<[0.001, 0.002]> : !layout.tensor<2xf32>
// CHECK:       %[[BD:.*]] = graph.dequantize_linear %b, %[[S]] {axis = 0}
// CHECK:       %[[C:.*]] = graph.conv2d %[[XD]], %[[WD]], %[[BD]] {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}
// CHECK:       %yq = graph.quantize_linear %[[C]], %y_scale, %y_zero
// CHECK-NOT:   graph.qlinear_conv
// ... which fold-qdq folds onto the int8 cube (the data zero point 2 pads the input).
// FOLDED-LABEL: func.func @qlinear_conv
// FOLDED:       graph.quant_conv2d %xq, %w, %{{.*}}, %{{.*}} {kernel_shape = [3, 3], pads = [1, 1, 1, 1], pad_value = 2}
// FOLDED-NOT:   graph.conv2d
// Under any other precision nothing changes.
// FLOAT-LABEL: func.func @qlinear_conv
// FLOAT:       graph.qlinear_conv
func.func @qlinear_conv(%x: !layout.tensor<1x3x5x5xf32>) -> !layout.tensor<1x2x5x5xf32> {
  %x_scale = graph.constant dense<0.05> : !layout.tensor<f32>
  %x_zero = graph.constant dense<2> : !layout.tensor<i8>
  %w_scale = graph.constant dense<[0.02, 0.04]> : !layout.tensor<2xf32>
  %w_zero = graph.constant dense<0> : !layout.tensor<2xi8>
  %y_scale = graph.constant dense<0.3> : !layout.tensor<f32>
  %y_zero = graph.constant dense<-3> : !layout.tensor<i8>
  %b = graph.constant dense<[5, -7]> : !layout.tensor<2xi32>
  %w = graph.constant dense<3> : !layout.tensor<2x3x3x3xi8>
  %xq = graph.quantize_linear %x, %x_scale, %x_zero : (!layout.tensor<1x3x5x5xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x3x5x5xi8>
  %yq = graph.qlinear_conv %xq, %x_scale, %x_zero, %w, %w_scale, %w_zero, %y_scale, %y_zero, %b {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (!layout.tensor<1x3x5x5xi8>, !layout.tensor<f32>, !layout.tensor<i8>, !layout.tensor<2x3x3x3xi8>, !layout.tensor<2xf32>, !layout.tensor<2xi8>, !layout.tensor<f32>, !layout.tensor<i8>, !layout.tensor<2xi32>) -> !layout.tensor<1x2x5x5xi8>
  %y = graph.dequantize_linear %yq, %y_scale, %y_zero : (!layout.tensor<1x2x5x5xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x2x5x5xf32>
  func.return %y : !layout.tensor<1x2x5x5xf32>
}

// quantize_dynamic's MatMul: DynamicQuantizeLinear becomes its parameters op (the scale,
// the uint8 zero point and that zero point moved onto int8, z - 128) and a QuantizeLinear;
// Cast(MatMulInteger) becomes quant_matmul of the re-centred int8 data (a sibling
// QuantizeLinear with the int8 zero point the parameters op computes), the weights as rows
// of K, the bias Mul(int32(z - 128), -colsum(w)) = -(z-128) * [6, -3] and scale 1.0 (the
// Cast, bit for bit). The uint8 quantisation is then dead.
// CHECK-LABEL: func.func @dynamic_matmul
// CHECK:       %xs, %xz, %[[Z8:.*]] = graph.dynamic_quantize_params %x : (!layout.tensor<2x3xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
// CHECK-NOT:   -> !layout.tensor<2x3xui8>
// CHECK:       %[[X8:.*]] = graph.quantize_linear %x, %xs, %[[Z8]] {{.*}}-> !layout.tensor<2x3xi8>
// CHECK:       %[[ZX:.*]] = graph.cast %[[Z8]] {to = 6} : (!layout.tensor<i8>) -> !layout.tensor<i32>
// CHECK:       %[[SUMS:.*]] = graph.constant dense<[-6, 3]> : !layout.tensor<2xi32>
// CHECK:       %[[BIAS:.*]] = graph.mul %[[ZX]], %[[SUMS]]
// CHECK:       %[[ONE:.*]] = graph.constant dense<1.0{{.*}}> : !layout.tensor<2xf32>
// CHECK:       %[[ROWS:.*]] = graph.constant dense<{{\[\[}}1, 2, 3], [-1, -1, -1]]> : !layout.tensor<2x3xi8>
// CHECK:       %[[ACC:.*]] = graph.quant_matmul %[[X8]], %[[ROWS]], %[[BIAS]], %[[ONE]]
// CHECK:       graph.mul %[[ACC]], %s
// CHECK-NOT:   graph.matmul_integer
// CHECK-NOT:   graph.dynamic_quantize_linear
func.func @dynamic_matmul(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x2xf32> {
  %w = graph.constant dense<[[1, -1], [2, -1], [3, -1]]> : !layout.tensor<3x2xi8>
  %w_zero = graph.constant dense<0> : !layout.tensor<i8>
  %w_scale = graph.constant dense<0.01> : !layout.tensor<f32>
  %xq, %xs, %xz = graph.dynamic_quantize_linear %x : (!layout.tensor<2x3xf32>) -> (!layout.tensor<2x3xui8>, !layout.tensor<f32>, !layout.tensor<ui8>)
  %s = graph.mul %xs, %w_scale : !layout.tensor<f32>
  %acc = graph.matmul_integer %xq, %w, %xz, %w_zero : (!layout.tensor<2x3xui8>, !layout.tensor<3x2xi8>, !layout.tensor<ui8>, !layout.tensor<i8>) -> !layout.tensor<2x2xi32>
  %accf = graph.cast %acc {to = 1} : (!layout.tensor<2x2xi32>) -> !layout.tensor<2x2xf32>
  %y = graph.mul %accf, %s : (!layout.tensor<2x2xf32>, !layout.tensor<f32>) -> !layout.tensor<2x2xf32>
  func.return %y : !layout.tensor<2x2xf32>
}

// A padded ConvInteger behind DynamicQuantizeLinear: the padding must hold the run-time
// zero point, so the int8 one (the parameters op's third result, re-centred) is
// quant_conv2d's pad_zero operand (its fifth), with no pad_value; the bias is -zx · Σw.
// CHECK-LABEL: func.func @dynamic_conv
// CHECK:       %xs, %xz, %[[Z8:.*]] = graph.dynamic_quantize_params %x
// CHECK:       %[[X8:.*]] = graph.quantize_linear %x, %xs, %[[Z8]] {{.*}}-> !layout.tensor<1x2x4x4xi8>
// CHECK:       %[[ZX:.*]] = graph.cast %[[Z8]] {to = 6} : (!layout.tensor<i8>) -> !layout.tensor<i32>
// CHECK:       %[[SUMS:.*]] = graph.constant dense<-18> : !layout.tensor<2xi32>
// CHECK:       %[[BIAS:.*]] = graph.mul %[[ZX]], %[[SUMS]]
// CHECK:       %[[ONE:.*]] = graph.constant dense<1.0{{.*}}> : !layout.tensor<2xf32>
// CHECK:       %[[W:.*]] = graph.constant dense<1> : !layout.tensor<2x2x3x3xi8>
// CHECK:       graph.quant_conv2d %[[X8]], %[[W]], %[[BIAS]], %[[ONE]], %[[Z8]] {pads = [1, 1, 1, 1]} : ({{.*}}, !layout.tensor<i8>) -> !layout.tensor<1x2x4x4xf32, NCHW>
// CHECK-NOT:   graph.conv_integer
func.func @dynamic_conv(%x: !layout.tensor<1x2x4x4xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32> {
  %w = graph.constant dense<1> : !layout.tensor<2x2x3x3xi8>
  %w_zero = graph.constant dense<0> : !layout.tensor<i8>
  %xq, %xs, %xz = graph.dynamic_quantize_linear %x : (!layout.tensor<1x2x4x4xf32, NCHW>) -> (!layout.tensor<1x2x4x4xui8>, !layout.tensor<f32>, !layout.tensor<ui8>)
  %acc = graph.conv_integer %xq, %w, %xz, %w_zero {pads = [1, 1, 1, 1]} : (!layout.tensor<1x2x4x4xui8>, !layout.tensor<2x2x3x3xi8>, !layout.tensor<ui8>, !layout.tensor<i8>) -> !layout.tensor<1x2x4x4xi32>
  %accf = graph.cast %acc {to = 1} : (!layout.tensor<1x2x4x4xi32>) -> !layout.tensor<1x2x4x4xf32>
  %y = graph.mul %accf, %xs : (!layout.tensor<1x2x4x4xf32>, !layout.tensor<f32>) -> !layout.tensor<1x2x4x4xf32>
  func.return %y : !layout.tensor<1x2x4x4xf32>
}
