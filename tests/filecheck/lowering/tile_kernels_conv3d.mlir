// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// A 3-D convolution on the `test` preset: 20 input channels (the second C1 has 4 valid
// lanes), 24 output channels (a ragged second fractal), kernel 3x3x3, strides [2, 1, 1],
// depth dilation 2, pads 2 in depth and 1 in H and W, bias and ReLU. The input's
// NCDHW -> NDC1HWC0 conversion is a vector kernel of its own (load_5hd of one depth plane's
// channels, NCDHW viewed as [N, C, D, H*W]); the convolution addresses NDC1HWC0 as
// [N, D*C1, H, W, C0] and its output as the NC1HWC0 tensor of N*D_out planes, loops over
// the 3 depth taps inside each output tile (one L0C: mmad's first flag only on tap 0's
// first K step; the weight rows of tap kd start at kd*18) and leaves through fixpipe with
// the bias and the ReLU.
func.func @conv3d(%x: !layout.tensor<1x20x5x7x9xf32, NCDHW>) -> !layout.tensor<1x24x3x7x9xf32, NCDHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<24x20x3x3x3xf32, NCDHW>
  %b = graph.constant dense<0.25> : !layout.tensor<24xf32>
  %c = graph.conv %x, %w, %b {strides = [2, 1, 1], dilations = [2, 1, 1], pads = [2, 1, 1, 2, 1, 1]} : (!layout.tensor<1x20x5x7x9xf32, NCDHW>, !layout.tensor<24x20x3x3x3xf32, NCDHW>, !layout.tensor<24xf32>) -> !layout.tensor<1x24x3x7x9xf32, NCDHW>
  %r = graph.relu %c : (!layout.tensor<1x24x3x7x9xf32, NCDHW>) -> !layout.tensor<1x24x3x7x9xf32, NCDHW>
  func.return %r : !layout.tensor<1x24x3x7x9xf32, NCDHW>
}
// CHECK-LABEL: func.func @trans_data_1(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         tile.strided_view %x : memref<1x20x5x7x9xf32, "GM"> to memref<1x20x5x63xf32, strided<[6300, 315, 63, 1]>, "GM">
// CHECK:         tile.strided_view %x_out : memref<1x5x2x7x9x16xf32, "GM"> to memref<5x2x1x63x16xf32, strided<[2016, 1008, 1008, 16, 1]>, "GM">
// CHECK:         tile.load_5hd
// CHECK:         tile.copy
// CHECK-LABEL: func.func @fused_conv_relu_0(
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 18
// CHECK:         tile.strided_view %x : memref<1x5x2x7x9x16xf32, "GM"> to memref<1x10x7x9x16xf32, strided<[10080, 1008, 144, 16, 1]>, "GM">
// CHECK:         tile.strided_view %r_out : memref<1x3x2x7x9x16xf32, "GM"> to memref<3x2x7x9x16xf32, strided<[2016, 1008, 144, 16, 1]>, "GM">
// CHECK:         tile.alloc : memref<1x2x5x9x16xf32, "L1">
// CHECK:         scf.for %nd = %c0 to %c3 step %c1 {
// the depth taps that read data: [clamp(ceil(-start / 2), 0, 2), max(min(floor((4 - start) / 2) + 1, 3), first + 1)) with start = d_out·2 - 2
// CHECK:           %[[D:.*]] = arith.remsi %nd, %c3 : index
// CHECK:           %[[S2:.*]] = arith.muli %[[D]], %c2 : index
// CHECK-NEXT:      %[[START:.*]] = arith.addi %[[S2]], %cm2 : index
// CHECK-NEXT:      %[[NEG:.*]] = arith.subi %c0, %[[START]] : index
// CHECK-NEXT:      %[[LO0:.*]] = arith.ceildivsi %[[NEG]], %c2 : index
// CHECK-NEXT:      %[[LO1:.*]] = arith.maxsi %[[LO0]], %c0 : index
// CHECK-NEXT:      %[[LO:.*]] = arith.minsi %[[LO1]], %c2 : index
// CHECK-NEXT:      %[[REST:.*]] = arith.subi %c4, %[[START]] : index
// CHECK-NEXT:      %[[HI0:.*]] = arith.floordivsi %[[REST]], %c2 : index
// CHECK-NEXT:      %[[HI1:.*]] = arith.addi %[[HI0]], %c1 : index
// CHECK-NEXT:      %[[HI2:.*]] = arith.minsi %[[HI1]], %c3 : index
// CHECK-NEXT:      %[[LO_1:.*]] = arith.addi %[[LO]], %c1 : index
// CHECK-NEXT:      %[[HI:.*]] = arith.maxsi %[[HI2]], %[[LO_1]] : index
// CHECK-NEXT:      scf.for %kd = %[[LO]] to %[[HI]] step %c1 {
// CHECK:             %[[TAP:.*]] = arith.muli %kd, %c18 : index
// CHECK-NEXT:        %[[NTH:.*]] = arith.subi %kd, %[[LO]] : index
// CHECK-NEXT:        %[[ORIGIN:.*]] = arith.muli %[[NTH]], %c18 : index
// CHECK:             tile.copy %{{.*}} to %fmap_l1
// CHECK:             scf.for %k = %c0 to %c18 step %c1 {
// CHECK:               %[[K:.*]] = arith.addi %[[ORIGIN]], %k : index
// CHECK:               %first = arith.cmpi eq, %[[K]], %c0 : index
// CHECK:               tile.load3d %fmap_l1[%k] to %a_l0a valid %{{.*}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 9 : i64, channels = 20 : i64}
// CHECK:               tile.mmad %a_l0a, %b_l0b, %c_l0c, %first
// CHECK:           tile.fixpipe %c_l0c to %{{.*}}[%nd, %co, %oh, %c0, %c0] bias %bias_l1 {{.*}} {layout = "nc1hwc0", relu = true, rows = 3 : i64}
// CHECK-LABEL: func.func @trans_data_3(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         tile.copy
// CHECK:         tile.store_5hd
