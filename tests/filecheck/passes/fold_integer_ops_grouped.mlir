// RUN: tilegraph-opt %s -p 'set-target{precision=int8},expand-qoperator,fold-integer-ops,dce' | filecheck %s

// A grouped, padded ConvInteger behind DynamicQuantizeLinear folds: the padding holds the
// run-time zero point (the int8 one, pad_zero), and the bias -zx · Σw sums each output
// channel's weights over its own group's input channels only: [1 + 2, 3 - 5] -> [-3, 2].
// CHECK-LABEL: func.func @grouped_dynamic_conv
// CHECK:       %xs, %xz, %[[Z8:.*]] = graph.dynamic_quantize_params %x
// CHECK:       %[[X8:.*]] = graph.quantize_linear %x, %xs, %[[Z8]]
// CHECK:       %[[ZX:.*]] = graph.cast %[[Z8]] {to = 6}
// CHECK:       %[[SUMS:.*]] = graph.constant dense<[-3, 2]> : !layout.tensor<2xi32>
// CHECK:       %[[BIAS:.*]] = graph.mul %[[ZX]], %[[SUMS]]
// CHECK:       graph.quant_conv2d %[[X8]], %{{.*}}, %[[BIAS]], %{{.*}}, %[[Z8]] {group = 2, pads = [1, 1, 1, 1]}
// CHECK-NOT:   graph.conv_integer
func.func @grouped_dynamic_conv(%x: !layout.tensor<1x4x4x4xf32, NCHW>) -> !layout.tensor<1x2x6x6xf32> {
  %w = graph.constant dense<[[[[1]], [[2]]], [[[3]], [[-5]]]]> : !layout.tensor<2x2x1x1xi8>
  %w_zero = graph.constant dense<0> : !layout.tensor<i8>
  %xq, %xs, %xz = graph.dynamic_quantize_linear %x : (!layout.tensor<1x4x4x4xf32, NCHW>) -> (!layout.tensor<1x4x4x4xui8>, !layout.tensor<f32>, !layout.tensor<ui8>)
  %acc = graph.conv_integer %xq, %w, %xz, %w_zero {group = 2 : i64, pads = [1, 1, 1, 1]} : (!layout.tensor<1x4x4x4xui8>, !layout.tensor<2x2x1x1xi8>, !layout.tensor<ui8>, !layout.tensor<i8>) -> !layout.tensor<1x2x6x6xi32>
  %accf = graph.cast %acc {to = 1} : (!layout.tensor<1x2x6x6xi32>) -> !layout.tensor<1x2x6x6xf32>
  %y = graph.mul %accf, %xs : (!layout.tensor<1x2x6x6xf32>, !layout.tensor<f32>) -> !layout.tensor<1x2x6x6xf32>
  func.return %y : !layout.tensor<1x2x6x6xf32>
}
