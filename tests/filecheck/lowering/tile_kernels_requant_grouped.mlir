// RUN: tilegraph-opt %s -p 'set-target{platform=test precision=int8},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// Fixpipe requantisation of a depthwise convolution on the `test` preset: 40 int8
// channels, one per group. int8's C0 = 32 runs it in group blocks of 32 groups (FRACTAL_Z's
// groups rule; the second block ragged: 8 groups), each block's 32 output channels two
// accumulator fractals that fill one C1 slice of the int8 NC1HWC0 result, so the block's
// C1 offset is its fractal offset / 2 as for a dense convolution. The 1x1 int8
// convolution after it reads that tensor as it is.
func.func @depthwise(%x: !layout.tensor<1x40x7x9xf32, NCHW>) -> !layout.tensor<1x24x7x9xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x40x7x9xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x7x9xi8, NCHW>
  %w = graph.constant dense<3> : !layout.tensor<40x1x3x3xi8, NCHW>
  %b = graph.constant dense<-7> : !layout.tensor<40xi32>
  %d = graph.constant dense<0.0005> : !layout.tensor<40xf32>
  %c = graph.quant_conv2d %xq, %w, %b, %d {group = 40, pads = [1, 1, 1, 1]} : (!layout.tensor<1x40x7x9xi8, NCHW>, !layout.tensor<40x1x3x3xi8, NCHW>, !layout.tensor<40xi32>, !layout.tensor<40xf32>) -> !layout.tensor<1x40x7x9xf32, NCHW>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %yz = graph.constant dense<4> : !layout.tensor<i8>
  %q = graph.quantize_linear %c, %ys, %yz : (!layout.tensor<1x40x7x9xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x7x9xi8, NCHW>
  %w2 = graph.constant dense<-2> : !layout.tensor<24x40x1x1xi8, NCHW>
  %b2 = graph.constant dense<5> : !layout.tensor<24xi32>
  %d2 = graph.constant dense<0.0004> : !layout.tensor<24xf32>
  %c2 = graph.quant_conv2d %q, %w2, %b2, %d2 {pad_value = 4} : (!layout.tensor<1x40x7x9xi8, NCHW>, !layout.tensor<24x40x1x1xi8, NCHW>, !layout.tensor<24xi32>, !layout.tensor<24xf32>) -> !layout.tensor<1x24x7x9xf32, NCHW>
  func.return %c2 : !layout.tensor<1x24x7x9xf32, NCHW>
}
// CHECK:       %q = tile.alloc : memref<1x2x7x9x32xi8, "GM">
// CHECK-NEXT:  tile.launch @fused_trans_data_requant_conv2d_0(%xq, %w, %b, %{{.+}}, %q)
// CHECK:       tile.launch @fused_quant_conv2d_trans_data_1_mix_aic(%q,
// CHECK-LABEL: func.func @fused_trans_data_requant_conv2d_0(
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         %c_l0c = tile.alloc : memref<2x4x16x16xi32, "L0C">
// CHECK:         scf.for %blk = %c0 to %c2 step %c1 {
// CHECK:           %[[K:.+]] = arith.minsi %{{.+}}, %c32 : index
// CHECK:           tile.load3d %fmap_l1[%k] to %a_l0a valid %[[K]]
// CHECK:           tile.mmad
// CHECK:           %[[F:.+]] = arith.muli %blk, %c2 : index
// CHECK-NEXT:      %[[C1:.+]] = arith.floordivsi %[[F]], %c2 : index
// CHECK-NEXT:      tile.fixpipe %c_l0c to %q_out[%c0, %[[C1]], %c0, %c0, %c0] bias %bias_l1 {{.*}} {layout = "nc1hwc0", zero_point = 4 : i64, rows = 7 : i64} : memref<2x4x16x16xi32, "L0C"> to memref<1x2x7x9x32xi8, "GM">
// CHECK:         } {tile.parallel}
