// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2{small-channel=true},lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=REGULAR

// A small-channel (C04) stem on the `test` preset: 3 channels, 7x7, stride 2, pad 3, batch 2.
// In small-channel mode the prologue's load_5hd brings the NCHW rows into an NC1HWC0_C04
// window (1, 1, rows, W, 4) in L1, load3d runs in c04 mode and the K loop covers
// ceil(4·7·7, 16) = 13 fractals (each holds 4 kernel positions x 4 channels), against
// 1 C1 x 49 taps = 49 fractals on the regular cube path. (The test preset is decoupled: the
// conv runs on the AIC part of a mix kernel.)
func.func @stem(%x: !layout.tensor<2x3x12x12xf32, NCHW>) -> !layout.tensor<2x20x6x6xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<20x3x7x7xf32, NCHW>
  %c = graph.conv2d %x, %w {strides = [2, 2], pads = [3, 3, 3, 3]} : (!layout.tensor<2x3x12x12xf32, NCHW>, !layout.tensor<20x3x7x7xf32, NCHW>) -> !layout.tensor<2x20x6x6xf32, NCHW>
  %r = graph.relu %c : !layout.tensor<2x20x6x6xf32, NCHW>
  func.return %r : !layout.tensor<2x20x6x6xf32, NCHW>
}
// CHECK-LABEL: func.func @fused_trans_data_conv2d_relu{{.*}}_mix_aic(
// CHECK-SAME:    memref<13x2x16x16xf32, "GM">
// CHECK-DAG:     %[[FMAP:.+]] = tile.alloc : memref<1x1x{{[0-9]+}}x12x4xf32, "L1">
// CHECK:         scf.for {{.+}} = %c0 to %c2 step %c1 {
// CHECK:           tile.load_5hd %x[{{.+}}] to %[[FMAP]] : memref<2x3x12x12xf32, "GM"> to memref<1x1x{{[0-9]+}}x12x4xf32, "L1">
// CHECK:           scf.for {{.+}} = %c0 to %c13 step
// CHECK:             tile.load3d %[[FMAP]][{{.+}}] to {{.+}} {kernel_shape = array<i64: 7, 7>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_left = 3 : i64, out_width = 6 : i64, channels = 3 : i64, c04}
// CHECK:             tile.mmad

// REGULAR-LABEL: func.func @fused_trans_data_conv2d_relu{{.*}}_mix_aic(
// REGULAR-SAME:    memref<49x2x16x16xf32, "GM">
// REGULAR-NOT:     c04
// REGULAR:         tile.load_5hd %x[{{.+}}] to {{.+}} : memref<2x3x12x12xf32, "GM"> to memref<1x1x{{[0-9]+}}x12x16xf32, "L1">
// REGULAR:         scf.for {{.+}} = %c0 to %c49 step
