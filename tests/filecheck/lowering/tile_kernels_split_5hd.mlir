// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// A split / slice of NC1HWC0 tensors (the format engine's choice between convolutions,
// tiling/movement_5hd.py): cut in origin terms, each region mapped onto the storage
// [N, C1, H, W, C0] with C as C1 blocks and the C0 lanes whole, then the data-movement
// nests (tile_kernels_data_movement.mlir) copy whole 32-byte C0 rows.

// ---- split along C at 32 of 40 channels: blocks [0, 2) and [2, 3) ----------------------
// The second output (8 channels) takes the input's last block whole: its padding lanes
// are the input's.
func.func @split_c(%x0: memref<1x3x4x5x16xf16, "GM">, %v1_out: memref<1x2x4x5x16xf16, "GM">, %v1_out_1: memref<1x1x4x5x16xf16, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[32, 8]> : !layout.tensor<2xi64>
  %x0_1 = tile.read %x0 : memref<1x3x4x5x16xf16, "GM"> -> !layout.tensor<1x40x4x5xf16, NCHW -> NC1HWC0 [1, 3, 4, 5, 16]>
  %v1, %v1_1 = graph.split %x0_1, %v0 {axis = 1, layout.kernel = "any", layout.shared = "NC1HWC0"} : (!layout.tensor<1x40x4x5xf16, NCHW -> NC1HWC0 [1, 3, 4, 5, 16]>, !layout.tensor<2xi64>) -> (!layout.tensor<1x32x4x5xf16, NCHW -> NC1HWC0 [1, 2, 4, 5, 16]>, !layout.tensor<1x8x4x5xf16, NCHW -> NC1HWC0 [1, 1, 4, 5, 16]>)
  tile.write %v1 to %v1_out : !layout.tensor<1x32x4x5xf16, NCHW -> NC1HWC0 [1, 2, 4, 5, 16]> to memref<1x2x4x5x16xf16, "GM">
  tile.write %v1_1 to %v1_out_1 : !layout.tensor<1x8x4x5xf16, NCHW -> NC1HWC0 [1, 1, 4, 5, 16]> to memref<1x1x4x5x16xf16, "GM">
  func.return
}
// CHECK-LABEL: func.func @split_c(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 6 : i64, tile.ops = "graph.split"
// CHECK:         scf.for %[[C1:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[H:.+]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:        tile.copy %x0[%c0, %[[C1]], %[[H]], %c0, %c0] to %[[W0:[^\[]+]][%c0, %c0, %c0, %c0, %c0] : memref<1x3x4x5x16xf16, "GM"> to memref<1x1x2x5x16xf16, "UB">
// CHECK-NEXT:        tile.copy %[[W0]][%c0, %c0, %c0, %c0, %c0] to %v1_out[%c0, %[[C1]], %[[H]], %c0, %c0]
// CHECK:         scf.for %[[H2:.+]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:      tile.copy %x0[%c0, %c2, %[[H2]], %c0, %c0] to %[[W1:[^\[]+]][%c0, %c0, %c0, %c0, %c0] : memref<1x3x4x5x16xf16, "GM"> to memref<1x1x2x5x16xf16, "UB">
// CHECK-NEXT:      tile.copy %[[W1]][%c0, %c0, %c0, %c0, %c0] to %v1_out_1[%c0, %c0, %[[H2]], %c0, %c0]

// -----

// ---- slice along H, step -2: rows 5, 3, 1 of 6, any C (20) ------------------------------
// The window is rows 1..5 of each C1 block, and tile.vstride picks every second row from
// the end: whole rows of C0 lanes, never single lanes.
func.func @slice_h(%x0: memref<1x2x6x5x16xf16, "GM">, %v4_out: memref<1x2x3x5x16xf16, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[5]> : !layout.tensor<1xi64>
  %v1 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %v2 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %v3 = graph.constant dense<[-2]> : !layout.tensor<1xi64>
  %x0_1 = tile.read %x0 : memref<1x2x6x5x16xf16, "GM"> -> !layout.tensor<1x20x6x5xf16, NCHW -> NC1HWC0 [1, 2, 6, 5, 16]>
  %v4 = graph.slice %x0_1, %v0, %v1, %v2, %v3 {layout.kernel = "any", layout.shared = "NC1HWC0"} : (!layout.tensor<1x20x6x5xf16, NCHW -> NC1HWC0 [1, 2, 6, 5, 16]>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x20x3x5xf16, NCHW -> NC1HWC0 [1, 2, 3, 5, 16]>
  tile.write %v4 to %v4_out : !layout.tensor<1x20x3x5xf16, NCHW -> NC1HWC0 [1, 2, 3, 5, 16]> to memref<1x2x3x5x16xf16, "GM">
  func.return
}
// CHECK-LABEL: func.func @slice_h(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64, tile.ops = "graph.slice"
// CHECK:         scf.for %[[C1:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.copy %x0[%c0, %[[C1]], %c1, %c0, %c0] to %[[WIN:[^\[]+]][%c0, %c0, %c0, %c0, %c0] : memref<1x2x6x5x16xf16, "GM"> to memref<1x1x5x5x16xf16, "UB">
// CHECK-NEXT:      tile.vstride %[[WIN]] to %[[PICK:.+]] {steps = array<i64: 1, 1, -2, 1, 1>}
// CHECK-NEXT:      tile.copy %[[PICK]][%c0, %c0, %c0, %c0, %c0] to %v4_out[%c0, %[[C1]], %c0, %c0, %c0]
