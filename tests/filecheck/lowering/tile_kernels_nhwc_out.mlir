// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// A convolution's NC1HWC0 result made channels-last (tiling/nhwc_out.py): TransData
// NC1HWC0 -> NCHW, reshape-like ops and a transpose whose composite order is NHWC run as
// one kernel. Per (n, c1) and window of pixels, the [pixels, C0] rows of the 5HD map are
// loaded and stored at channel c1 * C0 of each output row; the store's window is cut at C,
// so the padding lanes of the last C1 block are never stored.

// ---- ViT patch embedding: [2, 20, 3, 5] -> flatten(2) -> transpose(1, 2) = [2, 15, 20] -
func.func @flatten_transpose(%x0: memref<2x2x3x5x16xf32, "GM">, %v2_out: memref<2x15x20xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2, 20, 15]> : !layout.tensor<3xi64>
  %x0_1 = tile.read %x0 : memref<2x2x3x5x16xf32, "GM"> -> !layout.tensor<2x20x3x5xf32, NCHW -> NC1HWC0 [2, 2, 3, 5, 16]>
  %x0_2 = layout.trans_data %x0_1 : !layout.tensor<2x20x3x5xf32, NCHW -> NC1HWC0 [2, 2, 3, 5, 16]> -> !layout.tensor<2x20x3x5xf32, NCHW>
  %v1 = graph.reshape %x0_2, %v0 {layout.kernel = "origin"} : (!layout.tensor<2x20x3x5xf32, NCHW>, !layout.tensor<3xi64>) -> !layout.tensor<2x20x15xf32>
  %v2 = graph.transpose %v1 {perm = [0, 2, 1], layout.kernel = "origin"} : (!layout.tensor<2x20x15xf32>) -> !layout.tensor<2x15x20xf32>
  tile.write %v2 to %v2_out : !layout.tensor<2x15x20xf32> to memref<2x15x20xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @flatten_transpose(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64
// CHECK-DAG:     %[[SRC:.+]] = tile.strided_view %x0 : memref<2x2x3x5x16xf32, "GM"> to memref<2x2x15x16xf32
// CHECK-DAG:     %[[DST:.+]] = tile.strided_view %v2_out : memref<2x15x20xf32, "GM"> to memref<2x1x15x20xf32
// CHECK-DAG:     %[[ROWS:.+]] = tile.alloc : memref<1x1x15x16xf32, "UB">
// CHECK:         scf.for %[[N:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[C:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        tile.copy %[[SRC]][%[[N]], %[[C]], %c0, %c0] to %[[ROWS]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[C]], %c16 : index
// CHECK-NEXT:        tile.copy %[[ROWS]][%c0, %c0, %c0, %c0] to %[[DST]][%[[N]], %c0, %c0, %[[AT]]]
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- audio feature extractor: [1, 32, 1, 200] -> squeeze(2) -> transpose(1, 2) -------
// 200 pixel rows of 64 bytes are more than one window of the test preset's UB: windows
// of 64 pixels, the last one ragged (8).
func.func @squeeze_transpose(%x0: memref<1x2x1x200x16xf32, "GM">, %v2_out: memref<1x200x32xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %x0_1 = tile.read %x0 : memref<1x2x1x200x16xf32, "GM"> -> !layout.tensor<1x32x1x200xf32, NCHW -> NC1HWC0 [1, 2, 1, 200, 16]>
  %x0_2 = layout.trans_data %x0_1 : !layout.tensor<1x32x1x200xf32, NCHW -> NC1HWC0 [1, 2, 1, 200, 16]> -> !layout.tensor<1x32x1x200xf32, NCHW>
  %v1 = graph.squeeze %x0_2, %v0 {layout.kernel = "origin"} : (!layout.tensor<1x32x1x200xf32, NCHW>, !layout.tensor<1xi64>) -> !layout.tensor<1x32x200xf32>
  %v2 = graph.transpose %v1 {perm = [0, 2, 1], layout.kernel = "origin"} : (!layout.tensor<1x32x200xf32>) -> !layout.tensor<1x200x32xf32>
  tile.write %v2 to %v2_out : !layout.tensor<1x200x32xf32> to memref<1x200x32xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @squeeze_transpose(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 8 : i64
// CHECK-DAG:     %[[ROWS:.+]] = tile.alloc : memref<1x1x64x16xf32, "UB">
// CHECK:         scf.for %[[C:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[P:.+]] = %c0 to %c200 step %c64 {
// CHECK-NEXT:        tile.copy %{{.+}}[%c0, %[[C]], %[[P]], %c0] to %[[ROWS]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[C]], %c16 : index
// CHECK-NEXT:        tile.copy %[[ROWS]][%c0, %c0, %c0, %c0] to %{{.+}}[%c0, %c0, %[[P]], %[[AT]]]
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}

// (A pixel shuffle has no channels-last order: tile_kernels_view_chains.mlir runs it as a
// permute.)
