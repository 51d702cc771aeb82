// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | tilegraph-opt | filecheck %s

// Pooling in column tiles on the `test` preset (8 KiB UB, half a budget): one output row of
// one channel block needs 3 input rows x 41 columns x 16 lanes x 4 B (7.7 KiB), so the output
// width (20) is cut into tiles of 7 columns, the last of 6. A tile's window (15 columns)
// starts at input column 2·ow - 1 (the load pads outside the image with 0) and `vpool` is
// told the tile's first output pixel (oh, ow): average pooling divides by the taps inside
// the image there. The printed form parses back (second RUN line).
func.func @p(%x: !layout.tensor<1x20x9x42xf32, NCHW>) -> !layout.tensor<1x20x4x20xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<20x20x3x3xf32, NCHW>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x20x9x42xf32, NCHW>, !layout.tensor<20x20x3x3xf32, NCHW>) -> !layout.tensor<1x20x7x40xf32, NCHW>
  %r = graph.relu %c : !layout.tensor<1x20x7x40xf32, NCHW>
  %p = graph.avg_pool %r {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (!layout.tensor<1x20x7x40xf32, NCHW>) -> !layout.tensor<1x20x4x20xf32, NCHW>
  func.return %p : !layout.tensor<1x20x4x20xf32, NCHW>
}
// CHECK-LABEL: func.func @fused_avg_pool_trans_data_1(
// CHECK:         %[[WIN:.+]] = tile.alloc : memref<1x1x3x15x16xf32, "UB">
// CHECK:         scf.for %[[OH:.+]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %[[OW:.+]] = %c0 to %c20 step %c7 {
// CHECK:             %[[W0:.+]] = arith.muli %[[OW]], %c2 : index
// CHECK-NEXT:        %[[W:.+]] = arith.addi %[[W0]], %cm1 : index
// CHECK-NEXT:        tile.copy %r[%c0, %{{.+}}, %{{.+}}, %[[W]], %c0] to %[[WIN]][%c0, %c0, %c0, %c0, %c0] {pad = 0.000000e+00 : f64}
// CHECK-NEXT:        tile.vpool %[[WIN]][%[[OH]], %[[OW]]] to %{{.+}} {kind = "avg"{{.*}}height = 7 : i64, width = 40 : i64}
// CHECK:             tile.store_5hd %{{.+}} to %p_out[%c0, %{{.+}}, %[[OH]], %[[OW]]]
