// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Cumulative sum (tiling/scan.py) on the `test` preset (UB 8 KiB, tiles at most half of
// it). Inputs as lower-graph-to-kernels writes them after O2 (the axis inlined).

// ---- a reverse, exclusive cum_sum over 1000: chunks of 504 with a carry ------------------
// The axis does not fit: a sequential chunk loop (not tile.parallel) walks the chunks from
// the axis' end; the carry starts at 0 and adds each chunk's total. The ragged chunk
// (504..999) is loaded with 0 in its last 8 lanes, which a reverse scan reads first.
func.func @cum_sum_1(%in0: memref<2x1000xf32, "GM">, %v1_out: memref<2x1000xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<1> : !layout.tensor<i64>
  %in0_1 = tile.read %in0 : memref<2x1000xf32, "GM"> -> !layout.tensor<2x1000xf32>
  %v1 = graph.cum_sum %in0_1, %v0 {exclusive = 1, reverse = 1, layout.kernel = "origin"} : (!layout.tensor<2x1000xf32>, !layout.tensor<i64>) -> !layout.tensor<2x1000xf32>
  tile.write %v1 to %v1_out : !layout.tensor<2x1000xf32> to memref<2x1000xf32, "GM">
  func.return
}

// CHECK-LABEL: func.func @cum_sum_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.cum_sum"
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<1x504xf32, "UB">
// CHECK-DAG:     %[[Y:.+]] = tile.alloc : memref<1x504xf32, "UB">
// CHECK-DAG:     %[[CARRY:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK-DAG:     %[[TOTAL:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.vdup %[[CARRY]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      scf.for %[[K:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:        %[[A:.+]] = arith.muli %[[K]], %cm504 : index
// CHECK-NEXT:        %[[AT:.+]] = arith.addi %[[A]], %c504 : index
// CHECK-NEXT:        tile.copy %in0[%[[I]], %[[AT]]] to %[[X]][%c0, %c0] {pad = 0.000000e+00 : f64}
// CHECK-NEXT:        tile.vscan %[[X]] to %[[Y]] {kind = "sum", axis = 1 : i64, exclusive = 1 : i64, reverse = 1 : i64}
// CHECK-NEXT:        tile.vadd %[[Y]], %[[CARRY]] to %[[Y]]
// CHECK-NEXT:        tile.copy %[[Y]][%c0, %c0] to %v1_out[%[[I]], %[[AT]]]
// CHECK-NEXT:        tile.vreduce %[[X]] to %[[TOTAL]] {kind = "sum", axes = array<i64: 1>}
// CHECK-NEXT:        tile.vadd %[[CARRY]], %[[TOTAL]] to %[[CARRY]]
// CHECK-NEXT:      }
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- a cum_sum whose axis fits: 37 rows of 50 in tiles of 9 (the last ragged) ------------
// Every tile scans on its own; the tile loop is tile.parallel.
func.func @cum_sum_2(%in0: memref<37x50xf32, "GM">, %v1_out: memref<37x50xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<1> : !layout.tensor<i64>
  %in0_1 = tile.read %in0 : memref<37x50xf32, "GM"> -> !layout.tensor<37x50xf32>
  %v1 = graph.cum_sum %in0_1, %v0 {layout.kernel = "origin"} : (!layout.tensor<37x50xf32>, !layout.tensor<i64>) -> !layout.tensor<37x50xf32>
  tile.write %v1 to %v1_out : !layout.tensor<37x50xf32> to memref<37x50xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @cum_sum_2(
// CHECK-SAME:    tile.tiles = 5 : i64
// CHECK:         scf.for %[[I:.+]] = %c0 to %c37 step %c9 {
// CHECK-NEXT:      tile.copy %in0[%[[I]], %c0] to %[[X:.+]][%c0, %c0]
// CHECK-NEXT:      tile.vscan %[[X]] to %[[Y:.+]] {kind = "sum", axis = 1 : i64, exclusive = 0 : i64, reverse = 0 : i64} : memref<9x50xf32, "UB"> to memref<9x50xf32, "UB">
// CHECK-NEXT:      tile.copy %[[Y]][%c0, %c0] to %v1_out[%[[I]], %c0]
// CHECK-NEXT:    } {tile.parallel}
