// RUN: tilegraph-opt %s -p 'set-target{precision=int8},expand-quantized-lstm' | filecheck %s
// RUN: tilegraph-opt %s -p 'expand-quantized-lstm' | filecheck %s --check-prefix=FLOAT

// A bidirectional DynamicQuantizeLSTM (hidden 1, input 2): X quantised once, one
// MatMulInteger with both directions' W side by side ([2, 8]), each direction's zero point
// over its 4 columns, its per-tensor scale likewise, the float32 product x_scale * W_scale,
// then the recurrence op with the other operands and the attributes.
// CHECK-LABEL: func.func @bidirectional
// CHECK:       %[[Q:.*]], %[[S:.*]], %[[Z:.*]] = graph.dynamic_quantize_linear %X
// CHECK:       %[[W:.*]] = graph.constant dense<{{\[}}[1, 2, 3, 4, -1, -2, -3, -4], [5, 6, 7, 8, -5, -6, -7, -8]]> : !layout.tensor<2x8xi8>
// CHECK:       %[[WZ:.*]] = graph.constant dense<0> : !layout.tensor<8xi8>
// CHECK:       %[[ACC:.*]] = graph.matmul_integer %[[Q]], %[[W]], %[[Z]], %[[WZ]]
// CHECK:       %[[WS:.*]] = graph.constant dense<[0.25, 0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0.5]> : !layout.tensor<8xf32>
// CHECK:       %[[SC:.*]] = graph.mul %[[S]], %[[WS]]
// CHECK:       %[[F:.*]] = graph.cast %[[ACC]] {to = 1}
// CHECK:       %[[G:.*]] = graph.mul %[[F]], %[[SC]] : (!layout.tensor<3x1x8xf32>, !layout.tensor<8xf32>)
// R as the int8 cube reads it: [dirs, 4H, H], each direction's scale over its 4 columns,
// its zero point.
// CHECK:       %[[RC:.*]] = graph.constant dense<{{\[}}{{\[}}[1], [-1], [2], [-2]], {{\[}}[3], [-3], [4], [-4]]]> : !layout.tensor<2x4x1xi8>
// CHECK:       %[[RS:.*]] = graph.constant dense<{{\[}}[0.125, 0.125, 0.125, 0.125], [0.0625, 0.0625, 0.0625, 0.0625]]> : !layout.tensor<2x4xf32>
// CHECK:       %[[RZ:.*]] = graph.constant dense<0> : !layout.tensor<2xi8>
// CHECK:       %Y, %Y_h, %Y_c = graph.dynamic_quantize_lstm_steps %[[G]], %[[RC]], none, %h0, none, none, %[[RS]], %[[RZ]] {{{.*}}direction = "bidirectional"{{.*}}hidden_size = 1
// CHECK-NOT:   graph.dynamic_quantize_lstm %
// Under any other precision nothing changes.
// FLOAT-LABEL: func.func @bidirectional
// FLOAT:       graph.dynamic_quantize_lstm %X
func.func @bidirectional(%X: !layout.tensor<3x1x2xf32>, %h0: !layout.tensor<2x1x1xf32>) -> (!layout.tensor<3x2x1x1xf32>, !layout.tensor<2x1x1xf32>, !layout.tensor<2x1x1xf32>) {
  %W = graph.constant dense<[[[1, 2, 3, 4], [5, 6, 7, 8]], [[-1, -2, -3, -4], [-5, -6, -7, -8]]]> : !layout.tensor<2x2x4xi8>
  %R = graph.constant dense<[[[1, -1, 2, -2]], [[3, -3, 4, -4]]]> : !layout.tensor<2x1x4xi8>
  %W_scale = graph.constant dense<[0.25, 0.5]> : !layout.tensor<2xf32>
  %W_zp = graph.constant dense<0> : !layout.tensor<2xi8>
  %R_scale = graph.constant dense<[0.125, 0.0625]> : !layout.tensor<2xf32>
  %R_zp = graph.constant dense<0> : !layout.tensor<2xi8>
  %Y, %Y_h, %Y_c = graph.dynamic_quantize_lstm %X, %W, %R, none, none, %h0, none, none, %W_scale, %W_zp, %R_scale, %R_zp {direction = "bidirectional", hidden_size = 1} : (!layout.tensor<3x1x2xf32>, !layout.tensor<2x2x4xi8>, !layout.tensor<2x1x4xi8>, !layout.tensor<2x1x1xf32>, !layout.tensor<2xf32>, !layout.tensor<2xi8>, !layout.tensor<2xf32>, !layout.tensor<2xi8>) -> (!layout.tensor<3x2x1x1xf32>, !layout.tensor<2x1x1xf32>, !layout.tensor<2x1x1xf32>)
  func.return %Y, %Y_h, %Y_c : !layout.tensor<3x2x1x1xf32>, !layout.tensor<2x1x1xf32>, !layout.tensor<2x1x1xf32>
}

// A uint8 R is re-centred onto int8 with its zero point (R - 128, R_zp - 128: the same
// differences); a per-channel scale stays as it is.
// CHECK-LABEL: func.func @uint8_recurrent_weights
// CHECK:       %[[RC:.*]] = graph.constant dense<{{\[}}{{\[}}[-128], [0], [127], [-118]]]> : !layout.tensor<1x4x1xi8>
// CHECK:       %[[RS:.*]] = graph.constant dense<{{\[}}[1.0, 2.0, 3.0, 4.0]]> : !layout.tensor<1x4xf32>
// CHECK:       %[[RZ:.*]] = graph.constant dense<[72]> : !layout.tensor<1xi8>
// CHECK:       graph.dynamic_quantize_lstm_steps %{{.*}}, %[[RC]], none, none, none, none, %[[RS]], %[[RZ]]
func.func @uint8_recurrent_weights(%X: !layout.tensor<2x1x2xf32>) -> (!layout.tensor<2x1x1x1xf32>, !layout.tensor<1x1x1xf32>, !layout.tensor<1x1x1xf32>) {
  %W = graph.constant dense<[[[1, 2, 3, 4], [5, 6, 7, 8]]]> : !layout.tensor<1x2x4xui8>
  %R = graph.constant dense<[[[0, 128, 255, 10]]]> : !layout.tensor<1x1x4xui8>
  %W_scale = graph.constant dense<[0.25]> : !layout.tensor<1xf32>
  %W_zp = graph.constant dense<[3]> : !layout.tensor<1xui8>
  %R_scale = graph.constant dense<[[1.0, 2.0, 3.0, 4.0]]> : !layout.tensor<1x4xf32>
  %R_zp = graph.constant dense<[[200, 200, 200, 200]]> : !layout.tensor<1x4xui8>
  %Y, %Y_h, %Y_c = graph.dynamic_quantize_lstm %X, %W, %R, none, none, none, none, none, %W_scale, %W_zp, %R_scale, %R_zp {hidden_size = 1} : (!layout.tensor<2x1x2xf32>, !layout.tensor<1x2x4xui8>, !layout.tensor<1x1x4xui8>, !layout.tensor<1xf32>, !layout.tensor<1xui8>, !layout.tensor<1x4xf32>, !layout.tensor<1x4xui8>) -> (!layout.tensor<2x1x1x1xf32>, !layout.tensor<1x1x1xf32>, !layout.tensor<1x1x1xf32>)
  func.return %Y, %Y_h, %Y_c : !layout.tensor<2x1x1x1xf32>, !layout.tensor<1x1x1xf32>, !layout.tensor<1x1x1xf32>
}
