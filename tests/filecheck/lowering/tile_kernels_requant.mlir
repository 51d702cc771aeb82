// RUN: tilegraph-opt %s -p 'set-target{platform=test precision=int8},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// Fixpipe requantisation on the `test` preset: a 3x3 `graph.quant_conv2d` of 20 int8
// channels to 36 (three 16-channel fractals: the last fills half of the second C1 slice of
// 32), its QuantizeLinear -> DequantizeLinear -> Relu -> QuantizeLinear (one scale and
// zero point), and a 1x1 int8 convolution reading the result. `fold-requant` makes the
// first a `graph.requant_conv2d`: fixpipe adds the int32 bias, multiplies by the
// per-channel multipliers (x_scale · w_scale / y_scale, f32 in L1), applies ReLU, rounds,
// adds the zero point and writes int8 NC1HWC0 with C0 = 32 (a tile's C1 offset is its
// fractal offset / 2); the second convolution loads that tensor as it is.
func.func @requant(%x: !layout.tensor<1x20x9x9xf32, NCHW>) -> !layout.tensor<1x24x9x9xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x20x9x9xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x20x9x9xi8, NCHW>
  %w = graph.constant dense<3> : !layout.tensor<36x20x3x3xi8, NCHW>
  %b = graph.constant dense<-7> : !layout.tensor<36xi32>
  %d = graph.constant dense<0.0005> : !layout.tensor<36xf32>
  %c = graph.quant_conv2d %xq, %w, %b, %d {pads = [1, 1, 1, 1]} : (!layout.tensor<1x20x9x9xi8, NCHW>, !layout.tensor<36x20x3x3xi8, NCHW>, !layout.tensor<36xi32>, !layout.tensor<36xf32>) -> !layout.tensor<1x36x9x9xf32, NCHW>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %yz = graph.constant dense<-3> : !layout.tensor<i8>
  %q = graph.quantize_linear %c, %ys, %yz : (!layout.tensor<1x36x9x9xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x36x9x9xi8, NCHW>
  %dq = graph.dequantize_linear %q, %ys, %yz : (!layout.tensor<1x36x9x9xi8, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x36x9x9xf32, NCHW>
  %r = graph.relu %dq : !layout.tensor<1x36x9x9xf32, NCHW>
  %q2 = graph.quantize_linear %r, %ys, %yz : (!layout.tensor<1x36x9x9xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x36x9x9xi8, NCHW>
  %w2 = graph.constant dense<-2> : !layout.tensor<24x36x1x1xi8, NCHW>
  %b2 = graph.constant dense<5> : !layout.tensor<24xi32>
  %d2 = graph.constant dense<0.0004> : !layout.tensor<24xf32>
  %c2 = graph.quant_conv2d %q2, %w2, %b2, %d2 : (!layout.tensor<1x36x9x9xi8, NCHW>, !layout.tensor<24x36x1x1xi8, NCHW>, !layout.tensor<24xi32>, !layout.tensor<24xf32>) -> !layout.tensor<1x24x9x9xf32, NCHW>
  func.return %c2 : !layout.tensor<1x24x9x9xf32, NCHW>
}
// CHECK:       %q2 = tile.alloc : memref<1x2x9x9x32xi8, "GM">
// CHECK-NEXT:  tile.launch @fused_trans_data_requant_conv2d_0(%xq, %w, %b, %{{.+}}, %q2)
// CHECK:       tile.launch @fused_quant_conv2d_trans_data_1_mix_aic(%q2,
// CHECK-LABEL: func.func @fused_trans_data_requant_conv2d_0(
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         %c_l0c = tile.alloc : memref<2x3x16x16xi32, "L0C">
// CHECK-NEXT:    %bias_l1 = tile.alloc : memref<1x2x1x1x16xi32, "L1">
// CHECK-NEXT:    %deq_l1 = tile.alloc : memref<1x2x1x1x16xf32, "L1">
// CHECK:         scf.for %[[CO:.+]] = %c0 to %c3 step %c2 {
// CHECK:           tile.copy %{{.+}}[%c0, %[[CO]], %c0, %c0, %c0] to %deq_l1
// CHECK:           tile.mmad
// CHECK:           %[[C1:.+]] = arith.floordivsi %[[CO]], %c2 : index
// CHECK-NEXT:      tile.fixpipe %c_l0c to %q2_out[%c0, %[[C1]], %oh, %c0, %c0] bias %bias_l1 : memref<1x2x1x1x16xi32, "L1"> deq %deq_l1 : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", zero_point = -3 : i64, relu = true, rows = 5 : i64} : memref<2x3x16x16xi32, "L0C"> to memref<1x2x9x9x32xi8, "GM">
// CHECK-LABEL: func.func @fused_quant_conv2d_trans_data_1_mix_aic(
// CHECK:         tile.copy %q2[%c0, %c0, %oh, %c0, %c0] to %fmap_l1{{.*}} : memref<1x2x9x9x32xi8, "GM"> to memref<1x2x5x9x32xi8, "L1">
