// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Selections along an axis (tiling/axis_select.py) on the `test` preset (UB 8 KiB, tiles
// at most half of it): arg_max / arg_min and top_k hold the selected axis whole in a tile,
// split before it; one_hot tiles its output. Inputs as lower-graph-to-kernels writes them
// after O2 (k, depth and the on / off values inlined), with ragged tails.

// ---- arg_min over 29, select_last, keepdims 0: 50 rows in tiles of 13 + 13 + 13 + 11 ----
// (32 rows would fit UB; the tiles are shared over the test preset's 4 vector cores)
func.func @arg_min_1(%in0: memref<50x29xf32, "GM">, %v0_out: memref<50xi64, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<50x29xf32, "GM"> -> !layout.tensor<50x29xf32>
  %v0 = graph.arg_min %in0_1 {axis = 1, keepdims = 0, select_last_index = 1, layout.kernel = "origin"} : (!layout.tensor<50x29xf32>) -> !layout.tensor<50xi64>
  tile.write %v0 to %v0_out : !layout.tensor<50xi64> to memref<50xi64, "GM">
  func.return
}
// CHECK-LABEL: func.func @arg_min_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.arg_min"
// CHECK:         scf.for %[[I:.+]] = %c0 to %c50 step %c13 {
// CHECK-NEXT:      tile.copy %in0[%[[I]], %c0] to %[[X:.+]][%c0, %c0] : memref<50x29xf32, "GM"> to memref<13x29xf32, "UB">
// CHECK-NEXT:      tile.varg %[[X]] to %[[A:.+]] {kind = "min", axis = 1 : i64, select_last = 1 : i64} : memref<13x29xf32, "UB"> to memref<13xi64, "UB">
// CHECK-NEXT:      tile.copy %[[A]][%c0] to %v0_out[%[[I]]]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- top_k, k = 4 smallest along the middle axis: one kernel, two outputs ----------------
// tile.vtopk writes the positions, tile.vtake gathers the values by them; each is stored
// to its own GM output. 5 planes in tiles of 2 + 2 + 1 (over the 4 vector cores: a
// core's share of 2 planes).
func.func @top_k_2(%in0: memref<5x37x9xf32, "GM">, %v1_out: memref<5x4x9xf32, "GM">, %v1_out_1: memref<5x4x9xi64, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %in0_1 = tile.read %in0 : memref<5x37x9xf32, "GM"> -> !layout.tensor<5x37x9xf32>
  %v1, %v1_1 = graph.top_k %in0_1, %v0 {axis = 1, largest = 0, layout.kernel = "origin"} : (!layout.tensor<5x37x9xf32>, !layout.tensor<1xi64>) -> (!layout.tensor<5x4x9xf32>, !layout.tensor<5x4x9xi64>)
  tile.write %v1 to %v1_out : !layout.tensor<5x4x9xf32> to memref<5x4x9xf32, "GM">
  tile.write %v1_1 to %v1_out_1 : !layout.tensor<5x4x9xi64> to memref<5x4x9xi64, "GM">
  func.return
}
// CHECK-LABEL: func.func @top_k_2(
// CHECK-SAME:    tile.tiles = 3 : i64, tile.ops = "graph.top_k"
// CHECK:         scf.for %[[I:.+]] = %c0 to %c5 step %c2 {
// CHECK-NEXT:      tile.copy %in0[%[[I]], %c0, %c0] to %[[X:.+]][%c0, %c0, %c0] : memref<5x37x9xf32, "GM"> to memref<2x37x9xf32, "UB">
// CHECK-NEXT:      tile.vtopk %[[X]] to %[[IDX:.+]] {axis = 1 : i64, largest = 0 : i64} : memref<2x37x9xf32, "UB"> to memref<2x4x9xi64, "UB">
// CHECK-NEXT:      tile.vtake %[[X]], %[[IDX]] to %[[V:.+]] {axis = 1 : i64}
// CHECK-NEXT:      tile.copy %[[V]][%c0, %c0, %c0] to %v1_out[%[[I]], %c0, %c0]
// CHECK-NEXT:      tile.copy %[[IDX]][%c0, %c0, %c0] to %v1_out_1[%[[I]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- one_hot, depth 310 inserted at axis 1: tiles of 20 positions (the last 10) ----------
// Each tile reloads the indices under it; tile.vonehot compares them with the positions
// from the tile's offset along the new axis.
func.func @one_hot_3(%in0: memref<6x45xi64, "GM">, %v2_out: memref<6x310x45xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v1 = graph.constant dense<310> : !layout.tensor<i64>
  %v0 = graph.constant dense<[-0.5, 2.0]> : !layout.tensor<2xf32>
  %in0_1 = tile.read %in0 : memref<6x45xi64, "GM"> -> !layout.tensor<6x45xi64>
  %v2 = graph.one_hot %in0_1, %v1, %v0 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<6x45xi64>, !layout.tensor<i64>, !layout.tensor<2xf32>) -> !layout.tensor<6x310x45xf32>
  tile.write %v2 to %v2_out : !layout.tensor<6x310x45xf32> to memref<6x310x45xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @one_hot_3(
// CHECK-SAME:    tile.tiles = 96 : i64, tile.ops = "graph.one_hot"
// CHECK:         scf.for %[[I:.+]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:      scf.for %[[D:.+]] = %c0 to %c310 step %c20 {
// CHECK-NEXT:        tile.copy %in0[%[[I]], %c0] to %[[IDX:.+]][%c0, %c0] : memref<6x45xi64, "GM"> to memref<1x45xi64, "UB">
// CHECK-NEXT:        tile.vonehot %[[IDX]][%[[D]]] to %[[OUT:.+]] {axis = 1 : i64, depth = 310 : i64, on = 2.000000e+00 : f64, off = -5.000000e-01 : f64} : memref<1x45xi64, "UB"> to memref<1x20x45xf32, "UB">
// CHECK-NEXT:        tile.copy %[[OUT]][%c0, %c0, %c0] to %v2_out[%[[I]], %[[D]], %c0]
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}
