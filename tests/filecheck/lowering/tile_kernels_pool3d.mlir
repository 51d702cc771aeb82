// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels,tile-kernels' | filecheck %s

// A 3-D average pooling over NDC1HWC0 on the `test` preset (8 KiB of UB): 20 channels (the
// second C1 has 4 valid lanes), kernel 3x3x3, strides [1, 2, 2], pads 1, the padding not
// counted. Input and output are addressed as [N, D*C1, H, W, C0] (plane d of block c at
// d*2 + c). A 40-pixel row does not fit UB: tiles of 1 row x 7 columns (balanced: 20 = 7 +
// 7 + 6) of one channel block. The 5 output planes run in 3 loops of constant bounds: plane
// 0 sees taps 1..2 (tap 0 is in the depth padding; divisor 1/2), planes 1..3 all 3 taps
// (1/3), plane 4 taps 0..1 (1/2). Each tap: the 2-D window into UB (zeros outside the
// image), `vpool` with the per-pixel H x W divisor, `vadd` into the plane's accumulator.
func.func @avg_pool3d(%x: !layout.tensor<1x20x5x6x40xf32, NCDHW -> NDC1HWC0 [1, 5, 2, 6, 40, 16]>) -> !layout.tensor<1x20x5x3x20xf32, NCDHW -> NDC1HWC0 [1, 5, 2, 3, 20, 16]> {
  %y = graph.avg_pool %x {kernel_shape = [3, 3, 3], strides = [1, 2, 2], pads = [1, 1, 1, 1, 1, 1]} : (!layout.tensor<1x20x5x6x40xf32, NCDHW -> NDC1HWC0 [1, 5, 2, 6, 40, 16]>) -> !layout.tensor<1x20x5x3x20xf32, NCDHW -> NDC1HWC0 [1, 5, 2, 3, 20, 16]>
  func.return %y : !layout.tensor<1x20x5x3x20xf32, NCDHW -> NDC1HWC0 [1, 5, 2, 3, 20, 16]>
}
// CHECK-LABEL: func.func @avg_pool_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 90
// CHECK:         %window_ub = tile.alloc : memref<1x1x3x15x16xf32, "UB">
// CHECK:         %acc_ub = tile.alloc : memref<1x1x1x7x16xf32, "UB">
// CHECK:         %[[IN:.*]] = tile.strided_view %x : memref<1x5x2x6x40x16xf32, "GM"> to memref<1x10x6x40x16xf32, strided<[38400, 3840, 640, 16, 1]>, "GM">
// CHECK:         %[[OUT:.*]] = tile.strided_view %y_out : memref<1x5x2x3x20x16xf32, "GM"> to memref<1x10x3x20x16xf32, strided<[9600, 960, 320, 16, 1]>, "GM">
// CHECK:         scf.for %c = %c0 to %c2 step %c1 {
// CHECK:           scf.for %oh = %c0 to %c3 step %c1 {
// CHECK:             scf.for %ow = %c0 to %c20 step %c7 {
// CHECK:               tile.vdup %acc_ub {value = 0.000000e+00 : f64}
// CHECK:               scf.for %kd = %c1 to %c3 step %c1 {
// CHECK:                 tile.copy %[[IN]][%c0, %{{.*}}, %{{.*}}, %{{.*}}, %c0] to %window_ub[%c0, %c0, %c0, %c0, %c0] {pad = 0.000000e+00 : f64}
// CHECK:                 tile.vpool %window_ub[%oh, %ow] to %pool_ub {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 6 : i64, width = 40 : i64}
// CHECK:                 tile.vadd %acc_ub, %pool_ub to %acc_ub
// CHECK:               tile.vmuls %acc_ub, 5.000000e-01 : f64 to %acc_ub
// CHECK:               tile.copy %acc_ub[%c0, %c0, %c0, %c0, %c0] to %[[OUT]][%c0, %c, %oh, %ow, %c0]
// CHECK:               scf.for %od = %c1 to %c4 step %c1 {
// CHECK:                 scf.for %kd_1 = %c0 to %c3 step %c1 {
// CHECK:                   tile.vpool
// CHECK:                   tile.vadd
// CHECK:                 tile.vmuls %acc_ub, 0.33333333333333331 : f64 to %acc_ub
// CHECK:                 %[[PLANE:.*]] = arith.muli %od, %c2 : index
// CHECK:                 %[[AT:.*]] = arith.addi %[[PLANE]], %c : index
// CHECK:                 tile.copy %acc_ub[%c0, %c0, %c0, %c0, %c0] to %[[OUT]][%c0, %[[AT]], %oh, %ow, %c0]
// CHECK:               scf.for %kd_2 = %c0 to %c2 step %c1 {
// CHECK:               tile.vmuls %acc_ub, 5.000000e-01 : f64 to %acc_ub
