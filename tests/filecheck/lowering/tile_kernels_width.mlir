// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// Width tiling on the `test` preset (16 KiB L1, 4 KiB L0A): one 70-pixel output row of a
// 3x3 convolution needs an img2col of 5 fractals (L0A's half holds 2), so the output width is
// cut into tiles of 24 columns (M = 24 pixels) and a ragged tail of 22. Each tile's input
// window is 3 rows x 26 columns (the halo and the left/right padding columns, filled with
// zeros by the load: its column start `ow - 1` is -1 for the first tile), so load3d runs
// with no left padding, 24 pixels a row, and fixpipe writes 1 row x 24 columns at (oh, ow).
// The window of both C1 (2 x 3 x 26 x 64 B) is too big for L1 beside the weights: it comes
// one C1 at a time (the `kc` loop), each a chunk of 9 K fractals; the accumulator starts on
// the first K step of the first chunk only.
func.func @wide(%x: !layout.tensor<1x20x5x70xf32, NCHW>) -> !layout.tensor<1x8x5x70xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<24x20x3x3xf32, NCHW>
  %c = graph.conv2d %x, %w {pads = [1, 1, 1, 1]} : (!layout.tensor<1x20x5x70xf32, NCHW>, !layout.tensor<24x20x3x3xf32, NCHW>) -> !layout.tensor<1x24x5x70xf32, NCHW>
  %r = graph.relu %c : !layout.tensor<1x24x5x70xf32, NCHW>
  %w2 = graph.constant dense<0.5> : !layout.tensor<8x24x1x1xf32, NCHW>
  %c2 = graph.conv2d %r, %w2 : (!layout.tensor<1x24x5x70xf32, NCHW>, !layout.tensor<8x24x1x1xf32, NCHW>) -> !layout.tensor<1x8x5x70xf32, NCHW>
  func.return %c2 : !layout.tensor<1x8x5x70xf32, NCHW>
}
// CHECK-LABEL: func.func @fused_trans_data_conv2d_relu_0(
// CHECK-SAME:    tile.tiles = 30
// CHECK:         %[[FMAP:.+]] = tile.alloc : memref<1x1x3x26x16xf32, "L1">
// CHECK:         %[[CM1:.+]] = arith.constant -1 : index
// CHECK:         scf.for %[[OH:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:      scf.for %[[OW:.+]] = %c0 to %c70 step %c24 {
// CHECK-NEXT:        scf.for %[[CO:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:          scf.for %[[KC:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:            %[[H:.+]] = arith.addi %[[OH]], %[[CM1]] : index
// CHECK-NEXT:            %[[W:.+]] = arith.addi %[[OW]], %[[CM1]] : index
// CHECK-NEXT:            %[[C:.+]] = arith.muli %[[KC]], %c16 : index
// CHECK-NEXT:            tile.load_5hd %x[%c0, %[[C]], %[[H]], %[[W]]] to %[[FMAP]]
// CHECK:                 scf.for %[[K:.+]] = %c0 to %c9 step %c1 {
// CHECK:                   %[[FIRST:first.*]] = arith.cmpi eq, {{.+}}, %c0 : index
// CHECK-NEXT:              tile.load3d %[[FMAP]][%[[K]]] to {{.+}} valid {{.+}} {{{.+}}pad_left = 0 : i64, out_width = 24 : i64, channels = 20 : i64}
// CHECK:                   tile.mmad {{.+}}, %[[FIRST]]
// CHECK:           tile.fixpipe {{.+}} to %r_out[%c0, %[[CO]], %[[OH]], %[[OW]], %c0] {layout = "nc1hwc0", relu = true, rows = 1 : i64, cols = 24 : i64} : memref<1x2x16x16xf32, "L0C"> to memref<1x2x5x70x16xf32, "GM">
