// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// A depthwise 3-D convolution on the `test` preset: 20 channels, groups = 20, kernel
// 3x3x3, pads 1, bias and ReLU. FRACTAL_Z_3D stores the filter by the groups rule: blocks
// of e = 16 groups (a block-diagonal 16 x 16 filter each, 27 K fractals: 3 depth taps x 9),
// the second block ragged (4 valid lanes). The kernel loops over the group blocks as the
// 2-D one does: block %blk reads C1 %blk of each input plane (the merged D*C1 axis: plane
// d_in at d_in*2 + blk), its weight rows from blk*27 (then tap kd at kd*9), writes output
// C1 %blk; its valid lanes are min(20 - 16*blk, 16).
func.func @depthwise3d(%x: !layout.tensor<1x20x4x7x9xf32, NCDHW>) -> !layout.tensor<1x20x4x7x9xf32, NCDHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<20x1x3x3x3xf32, NCDHW>
  %b = graph.constant dense<0.25> : !layout.tensor<20xf32>
  %c = graph.conv %x, %w, %b {group = 20, pads = [1, 1, 1, 1, 1, 1]} : (!layout.tensor<1x20x4x7x9xf32, NCDHW>, !layout.tensor<20x1x3x3x3xf32, NCDHW>, !layout.tensor<20xf32>) -> !layout.tensor<1x20x4x7x9xf32, NCDHW>
  %r = graph.relu %c : (!layout.tensor<1x20x4x7x9xf32, NCDHW>) -> !layout.tensor<1x20x4x7x9xf32, NCDHW>
  func.return %r : !layout.tensor<1x20x4x7x9xf32, NCDHW>
}
// CHECK-LABEL: func.func @fused_conv_relu_0(
// CHECK-SAME:    %w: memref<54x1x16x16xf32, "GM">
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 24
// CHECK:         tile.strided_view %x : memref<1x4x2x7x9x16xf32, "GM"> to memref<1x8x7x9x16xf32, strided<[8064, 1008, 144, 16, 1]>, "GM">
// CHECK:         scf.for %nd = %c0 to %c4 step %c1 {
// CHECK:           scf.for %blk = %c0 to %c2 step %c1 {
// CHECK:             tile.copy %{{.*}}[%c0, %blk, %c0, %c0, %c0] to %bias_l1
// CHECK:             %[[USED:.*]] = arith.muli %blk, %c16 : index
// CHECK:             %[[REST:.*]] = arith.subi %c20, %[[USED]] : index
// CHECK:             %[[VALID:.*]] = arith.minsi %[[REST]], %c16 : index
// CHECK:             %[[BLOCK:.*]] = arith.muli %blk, %c27 : index
// CHECK:             scf.for %kd = %{{.+}} to %{{.+}} step %c1 {
// CHECK:               %[[PLANE:.*]] = arith.muli %{{.*}}, %c2 : index
// CHECK:               %[[C1:.*]] = arith.addi %[[PLANE]], %blk : index
// CHECK:               %[[TAP:.*]] = arith.muli %kd, %c9 : index
// CHECK:               tile.copy %{{.*}}[%{{.*}}, %[[C1]], %{{.*}}, %c0, %c0] to %fmap_l1
// CHECK:               %[[LANES:.*]] = arith.subi %[[VALID]], %c0 : index
// CHECK:               scf.for %k = %c0 to %c9 step %c1 {
// CHECK:                 tile.load3d %fmap_l1[%k] to %a_l0a valid %[[LANES]] {{.*}} channels = 16 : i64}
// CHECK:                 %[[K:.*]] = arith.addi %[[TAP]], %k : index
// CHECK:                 %[[ROW:.*]] = arith.addi %[[BLOCK]], %[[K]] : index
// CHECK:                 tile.copy %w[%[[ROW]], %c0, %c0, %c0] to %w_l1
// CHECK:                 tile.mmad %a_l0a, %b_l0b, %c_l0c, %first
// CHECK:             tile.fixpipe %c_l0c to %{{.*}}[%nd, %blk, %oh, %c0, %c0] bias %bias_l1 {{.*}} {layout = "nc1hwc0", relu = true, rows = 3 : i64}
