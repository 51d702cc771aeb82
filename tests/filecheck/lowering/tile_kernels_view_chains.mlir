// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// Chains of reshapes and transposes as one permute (tiling/view_chains.py): the chain's
// axes are factorised into runs of the source (a size and a stride each), the kernel
// loads a window of the source through a strided view of those runs, transposes it on
// the vector unit and stores it into a row-major view of the output.

// ---- a pixel shuffle (ESPCN, r = 2) of a 5HD map of 4 channels in one C0 block -------
// The channels are lanes 0..3 of the block, split into r x r = (2 at stride 2, 2 at
// stride 1); H and W keep their 5HD strides (48, 16); the padding lanes are never read.
func.func @pixel_shuffle(%x0: memref<1x1x2x3x16xf32, "GM">, %v4_out: memref<1x1x4x6xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1, 1, 2, 2, 2, 3]> : !layout.tensor<6xi64>
  %v3 = graph.constant dense<[1, 1, 4, 6]> : !layout.tensor<4xi64>
  %x0_1 = tile.read %x0 : memref<1x1x2x3x16xf32, "GM"> -> !layout.tensor<1x4x2x3xf32, NCHW -> NC1HWC0 [1, 1, 2, 3, 16]>
  %x0_2 = layout.trans_data %x0_1 : !layout.tensor<1x4x2x3xf32, NCHW -> NC1HWC0 [1, 1, 2, 3, 16]> -> !layout.tensor<1x4x2x3xf32, NCHW>
  %v1 = graph.reshape %x0_2, %v0 {layout.kernel = "origin"} : (!layout.tensor<1x4x2x3xf32, NCHW>, !layout.tensor<6xi64>) -> !layout.tensor<1x1x2x2x2x3xf32>
  %v2 = graph.transpose %v1 {perm = [0, 1, 4, 2, 5, 3], layout.kernel = "origin"} : (!layout.tensor<1x1x2x2x2x3xf32>) -> !layout.tensor<1x1x2x2x3x2xf32>
  %v4 = graph.reshape %v2, %v3 {layout.kernel = "origin"} : (!layout.tensor<1x1x2x2x3x2xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x1x4x6xf32>
  tile.write %v4 to %v4_out : !layout.tensor<1x1x4x6xf32> to memref<1x1x4x6xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @pixel_shuffle(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 1 : i64
// CHECK:         %[[SRC:.+]] = tile.strided_view %x0 : memref<1x1x2x3x16xf32, "GM"> to memref<2x3x2x2xf32, strided<[48, 16, 2, 1]>, "GM">
// CHECK-NEXT:    %[[DST:.+]] = tile.strided_view %v4_out : memref<1x1x4x6xf32, "GM"> to memref<2x2x3x2xf32, strided<[12, 6, 2, 1]>, "GM">
// CHECK:         tile.copy %[[SRC]][%c0, %c0, %c0, %c0] to %[[IN:.+]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:    tile.vtranspose %[[IN]] to %[[OUT:.+]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-NEXT:    tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %[[DST]][%c0, %c0, %c0, %c0]

// -----

// ---- a window partition (CLAP): transpose, reshape splitting the moved axis, transpose ---
// [2, 4, 3, 30] -> (0, 2, 1, 3) -> [2, 3, 4, 5, 6] -> (0, 2, 1, 4, 3): the 30 is cut into
// 5 x 6, which swap; the 4 and the 3 swap twice, so 2 x 4 x 3 is one run of 24 (a batch of
// [5, 6] -> [6, 5] transposes, 6 per tile on the test preset).
func.func @window_partition(%x0: memref<2x4x3x30xf32, "GM">, %v3_out: memref<2x4x3x6x5xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2, 3, 4, 5, 6]> : !layout.tensor<5xi64>
  %x = tile.read %x0 : memref<2x4x3x30xf32, "GM"> -> !layout.tensor<2x4x3x30xf32>
  %v1 = graph.transpose %x {perm = [0, 2, 1, 3]} : (!layout.tensor<2x4x3x30xf32>) -> !layout.tensor<2x3x4x30xf32>
  %v2 = graph.reshape %v1, %v0 : (!layout.tensor<2x3x4x30xf32>, !layout.tensor<5xi64>) -> !layout.tensor<2x3x4x5x6xf32>
  %v3 = graph.transpose %v2 {perm = [0, 2, 1, 4, 3]} : (!layout.tensor<2x3x4x5x6xf32>) -> !layout.tensor<2x4x3x6x5xf32>
  tile.write %v3 to %v3_out : !layout.tensor<2x4x3x6x5xf32> to memref<2x4x3x6x5xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @window_partition(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64
// CHECK:         %[[SRC:.+]] = tile.strided_view %x0 : memref<2x4x3x30xf32, "GM"> to memref<24x5x6xf32, strided<[30, 6, 1]>, "GM">
// CHECK-NEXT:    %[[DST:.+]] = tile.strided_view %v3_out : memref<2x4x3x6x5xf32, "GM"> to memref<24x6x5xf32, strided<[30, 5, 1]>, "GM">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c24 step %c6 {
// CHECK-NEXT:      tile.copy %[[SRC]][%[[I]], %c0, %c0] to %[[IN:.+]][%c0, %c0, %c0]
// CHECK-NEXT:      tile.vtranspose %[[IN]] to %[[OUT:.+]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0] to %[[DST]][%[[I]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- a trimmed frame (SEW): 5HD [1, 2, 1, 9, 16] -> NCHW, squeeze(2), the last frame dropped -
// 32 channels fill their two C0 blocks: the channel axis is the atoms C1 (stride 144) and
// C0 (stride 1); the slice shortens the frame atom (9 -> 8, stride 16). Per C1 block, the
// [8 frames, 16 lanes] window is transposed into the [16 channels, 8 frames] rows.
func.func @trim(%x0: memref<1x2x1x9x16xf32, "GM">, %v2_out: memref<1x32x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %s0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %s1 = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %s2 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %x0_1 = tile.read %x0 : memref<1x2x1x9x16xf32, "GM"> -> !layout.tensor<1x32x1x9xf32, NCHW -> NC1HWC0 [1, 2, 1, 9, 16]>
  %x0_2 = layout.trans_data %x0_1 : !layout.tensor<1x32x1x9xf32, NCHW -> NC1HWC0 [1, 2, 1, 9, 16]> -> !layout.tensor<1x32x1x9xf32, NCHW>
  %v1 = graph.squeeze %x0_2, %v0 {layout.kernel = "origin"} : (!layout.tensor<1x32x1x9xf32, NCHW>, !layout.tensor<1xi64>) -> !layout.tensor<1x32x9xf32>
  %v2 = graph.slice %v1, %s0, %s1, %s2 {layout.kernel = "origin"} : (!layout.tensor<1x32x9xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x32x8xf32>
  tile.write %v2 to %v2_out : !layout.tensor<1x32x8xf32> to memref<1x32x8xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @trim(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64
// CHECK:         %[[SRC:.+]] = tile.strided_view %x0 : memref<1x2x1x9x16xf32, "GM"> to memref<2x8x16xf32, strided<[144, 16, 1]>, "GM">
// CHECK-NEXT:    %[[DST:.+]] = tile.strided_view %v2_out : memref<1x32x8xf32, "GM"> to memref<2x16x8xf32, strided<[128, 8, 1]>, "GM">
// CHECK:         scf.for %[[C:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.copy %[[SRC]][%[[C]], %c0, %c0] to %[[IN:.+]][%c0, %c0, %c0]
// CHECK-NEXT:      tile.vtranspose %[[IN]] to %[[OUT:.+]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0] to %[[DST]][%[[C]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}
