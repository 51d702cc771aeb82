// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Nearest resize (tiling/resize.py) on the `test` preset (UB 8 KiB, tiles at most half of
// it): each tile loads the window of input rows its output rows read (GM -> UB) and
// tile.vpick gathers the tile out of it by compile-time row and column tables; row tiles
// whose tables agree are one tile.parallel loop. Inputs as lower-graph-to-kernels writes
// them after O2 (the scales inlined as a compile-time constant), with ragged tails.

// ---- x2, asymmetric, floor (YOLOv8's upsampling): 26 output rows in tiles of 24 + 2 ----
// A plane does not fit: the rows split. The first tile reads input rows 0..11, the ragged
// last one rows 12..12; each is a nest of its own (a loop of one trip).
func.func @resize_1(%in0: memref<1x5x13x17xf32, "GM">, %v1_out: memref<1x5x26x34xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1.0, 1.0, 2.0, 2.0]> : !layout.tensor<4xf32>
  %in0_1 = tile.read %in0 : memref<1x5x13x17xf32, "GM"> -> !layout.tensor<1x5x13x17xf32, NCHW>
  %v1 = graph.resize %in0_1, none, %v0 {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", layout.kernel = "origin"} : (!layout.tensor<1x5x13x17xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<1x5x26x34xf32>
  tile.write %v1 to %v1_out : !layout.tensor<1x5x26x34xf32> to memref<1x5x26x34xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @resize_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 10 : i64, tile.ops = "graph.resize"
// CHECK-DAG:     %[[WIN:.+]] = tile.alloc : memref<1x1x12x17xf32, "UB">
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<1x1x24x34xf32, "UB">
// CHECK-DAG:     %[[WIN2:.+]] = tile.alloc : memref<1x1x1x17xf32, "UB">
// CHECK-DAG:     %[[OUT2:.+]] = tile.alloc : memref<1x1x2x34xf32, "UB">
// CHECK:         scf.for %[[C:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:      tile.copy %in0[%c0, %[[C]], %c0, %c0] to %[[WIN]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.vpick %[[WIN]] to %[[OUT]] {indices = array<i64: 0, 0, 0, 0, 1, 1, 2, 2, {{.*}}, 11, 11, 0, 0, 1, 1, {{.*}}, 16, 16>}
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %[[C]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}
// CHECK:         scf.for %[[D:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:      tile.copy %in0[%c0, %[[D]], %c12, %c0] to %[[WIN2]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.vpick %[[WIN2]] to %[[OUT2]] {indices = array<i64: 0, 0, 0, 0, 0, 0, 1, 1, {{.*}}>}
// CHECK-NEXT:      tile.copy %[[OUT2]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %[[D]], %c24, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- x1.5, asymmetric, floor: 90 output rows of a 60-row plane --------------------------
// The table repeats every 3 output rows (2 input rows). 45-row tiles would fit UB but leave
// 2 of the 4 vector cores idle; one core's share is 23 rows, and of the heights up to that
// 18 (a multiple of 3) gives the fewest tiles plus nests: 5 tiles with the same relative
// table, whose windows advance by 12 input rows: one loop.
func.func @resize_2(%in0: memref<1x1x60x8xf32, "GM">, %v1_out: memref<1x1x90x12xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1.0, 1.0, 1.5, 1.5]> : !layout.tensor<4xf32>
  %in0_1 = tile.read %in0 : memref<1x1x60x8xf32, "GM"> -> !layout.tensor<1x1x60x8xf32, NCHW>
  %v1 = graph.resize %in0_1, none, %v0 {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", layout.kernel = "origin"} : (!layout.tensor<1x1x60x8xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<1x1x90x12xf32>
  tile.write %v1 to %v1_out : !layout.tensor<1x1x90x12xf32> to memref<1x1x90x12xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @resize_2(
// CHECK-SAME:    tile.tiles = 5 : i64
// CHECK-DAG:     %[[WIN:.+]] = tile.alloc : memref<1x1x12x8xf32, "UB">
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<1x1x18x12xf32, "UB">
// CHECK:         scf.for %[[R:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:      %[[SRC:.+]] = arith.muli %[[R]], %c12 : index
// CHECK-NEXT:      tile.copy %in0[%c0, %c0, %[[SRC]], %c0] to %[[WIN]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.vpick %[[WIN]] to %[[OUT]] {indices = array<i64: 0, 0, 0, 0, 1, 2, 2, 3, {{.*}}, 10, 10, 11, 0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6, 7>}
// CHECK-NEXT:      %[[DST:.+]] = arith.muli %[[R]], %c18 : index
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %c0, %[[DST]], %c0]
// CHECK-NEXT:    } {tile.parallel}
// CHECK-NOT:     scf.for

// -----

// ---- x1.5, align_corners, ceil, whole planes: 13 channels in tiles of 11 + 2 -------------
// Whole planes fit UB: the tile takes several channels (the ragged last tile is cut at the
// output's edge), the row table is the whole plane's.
func.func @resize_3(%in0: memref<2x13x5x6xf32, "GM">, %v1_out: memref<2x13x7x9xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1.0, 1.0, 1.5, 1.5]> : !layout.tensor<4xf32>
  %in0_1 = tile.read %in0 : memref<2x13x5x6xf32, "GM"> -> !layout.tensor<2x13x5x6xf32, NCHW>
  %v1 = graph.resize %in0_1, none, %v0 {mode = "nearest", coordinate_transformation_mode = "align_corners", nearest_mode = "ceil", layout.kernel = "origin"} : (!layout.tensor<2x13x5x6xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<2x13x7x9xf32>
  tile.write %v1 to %v1_out : !layout.tensor<2x13x7x9xf32> to memref<2x13x7x9xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @resize_3(
// CHECK-SAME:    tile.tiles = 4 : i64
// CHECK-DAG:     %[[WIN:.+]] = tile.alloc : memref<1x11x5x6xf32, "UB">
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<1x11x7x9xf32, "UB">
// CHECK:         scf.for %[[N:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[C:.+]] = %c0 to %c13 step %c11 {
// CHECK-NEXT:        tile.copy %in0[%[[N]], %[[C]], %c0, %c0] to %[[WIN]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:        tile.vpick %[[WIN]] to %[[OUT]] {indices = array<i64: 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1, 2, 2, 3, 4, 4, 0, 1, 2, 2, 3, 4, 4, 5, 5>}
// CHECK-NEXT:        tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %v1_out[%[[N]], %[[C]], %c0, %c0]
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}
