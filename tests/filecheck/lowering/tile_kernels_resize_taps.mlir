// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Linear resize (tiling/resize_taps.py) on the `test` preset (UB 8 KiB, tiles at most half
// of it): each tile loads the window of input rows its output rows' taps read, tile.vtaps
// weighs two rows per output row, then two columns per output column (the tables: the
// graph level's axis weights). Row tiles with the same relative taps and weights are one
// tile.parallel loop. Inputs as lower-graph-to-kernels writes them after O2 (the scales
// inlined as a compile-time constant).

// ---- bilinear x2, half_pixel: whole planes fit, one tile per channel ---------------------
// (4 channels: as many tiles as the `test` preset has vector cores; with 3 the rows split)
// Output row 0 clips at the top edge (input row 0 alone: weights 1, 0), row 1 reads rows
// 0 and 1 by 0.75 / 0.25, row 2 by 0.25 / 0.75, ...
func.func @resize_1(%in0: memref<1x4x13x7xf32, "GM">, %v1_out: memref<1x4x26x14xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1.0, 1.0, 2.0, 2.0]> : !layout.tensor<4xf32>
  %in0_1 = tile.read %in0 : memref<1x4x13x7xf32, "GM"> -> !layout.tensor<1x4x13x7xf32, NCHW>
  %v1 = graph.resize %in0_1, none, %v0 {mode = "linear", layout.kernel = "origin"} : (!layout.tensor<1x4x13x7xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<1x4x26x14xf32>
  tile.write %v1 to %v1_out : !layout.tensor<1x4x26x14xf32> to memref<1x4x26x14xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @resize_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.resize"
// CHECK:         scf.for %[[C:.+]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:      tile.copy %in0[%c0, %[[C]], %c0, %c0] to %[[WIN:.+]][%c0, %c0, %c0, %c0] : memref<1x4x13x7xf32, "GM"> to memref<1x1x13x7xf32, "UB">
// CHECK-NEXT:      tile.vtaps %[[WIN]] to %[[ROWS:.+]] {axis = 2 : i64, indices = array<i64: 0, 0, 0, 1, 0, 1, 1, 2, {{.*}}, 11, 12, 12, 12>, weights = array<f64: 1.000000e+00, 0.000000e+00, 7.500000e-01, 2.500000e-01, 2.500000e-01, 7.500000e-01, {{.*}}>} : memref<1x1x13x7xf32, "UB"> to memref<1x1x26x7xf32, "UB">
// CHECK-NEXT:      tile.vtaps %[[ROWS]] to %[[OUT:.+]] {axis = 3 : i64, indices = array<i64: 0, 0, 0, 1, {{.*}}, 5, 6, 6, 6>, {{.*}}} : memref<1x1x26x7xf32, "UB"> to memref<1x1x26x14xf32, "UB">
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %[[C]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- bilinear x2 of 40 rows: the rows split, 80 output rows in tiles of 22 ----------------
// The first tile clips at the top (a window of 12 rows), the two interior tiles share
// their taps (a window of 13 rows from input row 10, advancing by 11: one loop), the
// ragged last tile (14 rows) reads the last 8 input rows.
func.func @resize_2(%in0: memref<1x2x40x12xf32, "GM">, %v1_out: memref<1x2x80x24xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1.0, 1.0, 2.0, 2.0]> : !layout.tensor<4xf32>
  %in0_1 = tile.read %in0 : memref<1x2x40x12xf32, "GM"> -> !layout.tensor<1x2x40x12xf32, NCHW>
  %v1 = graph.resize %in0_1, none, %v0 {mode = "linear", layout.kernel = "origin"} : (!layout.tensor<1x2x40x12xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<1x2x80x24xf32>
  tile.write %v1 to %v1_out : !layout.tensor<1x2x80x24xf32> to memref<1x2x80x24xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @resize_2(
// CHECK-SAME:    tile.tiles = 8 : i64
// CHECK:         scf.for %[[C:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.copy %in0[%c0, %[[C]], %c0, %c0] to %[[WIN:.+]][%c0, %c0, %c0, %c0] : memref<1x2x40x12xf32, "GM"> to memref<1x1x12x12xf32, "UB">
// CHECK-NEXT:      tile.vtaps %[[WIN]] to %[[ROWS:.+]] {axis = 2 : i64, {{.*}}} : memref<1x1x12x12xf32, "UB"> to memref<1x1x22x12xf32, "UB">
// CHECK-NEXT:      tile.vtaps %[[ROWS]] to %[[OUT:.+]] {axis = 3 : i64, {{.*}}} : memref<1x1x22x12xf32, "UB"> to memref<1x1x22x24xf32, "UB">
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %[[C]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}
// CHECK:         scf.for %[[C2:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[R:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        %[[M:.+]] = arith.muli %[[R]], %c11 : index
// CHECK-NEXT:        %[[SRC:.+]] = arith.addi %[[M]], %c10 : index
// CHECK-NEXT:        tile.copy %in0[%c0, %[[C2]], %[[SRC]], %c0] to %[[WIN2:.+]][%c0, %c0, %c0, %c0] : memref<1x2x40x12xf32, "GM"> to memref<1x1x13x12xf32, "UB">
// CHECK-NEXT:        tile.vtaps %[[WIN2]] to %[[ROWS2:.+]] {axis = 2 : i64, indices = array<i64: 0, 1, 1, 2, 1, 2, {{.*}}>, weights = array<f64: 2.500000e-01, 7.500000e-01, 7.500000e-01, 2.500000e-01, {{.*}}>}
// CHECK-NEXT:        tile.vtaps %[[ROWS2]] to %[[OUT2:.+]] {axis = 3 : i64, {{.*}}}
// CHECK-NEXT:        %[[M2:.+]] = arith.muli %[[R]], %c22 : index
// CHECK-NEXT:        %[[DST:.+]] = arith.addi %[[M2]], %c22 : index
// CHECK-NEXT:        tile.copy %[[OUT2]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %[[C2]], %[[DST]], %c0]
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}
// CHECK:         tile.copy %in0[%c0, %{{.+}}, %c32, %c0] to %{{.+}} : memref<1x2x40x12xf32, "GM"> to memref<1x1x8x12xf32, "UB">
// CHECK:         tile.copy %{{.+}} to %v1_out[%c0, %{{.+}}, %c66, %c0] : memref<1x1x14x24xf32, "UB"> to memref<1x2x80x24xf32, "GM">
