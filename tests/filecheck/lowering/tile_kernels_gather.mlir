// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test},inject-sync' | filecheck %s --check-prefix=SYNC

// Gather (tiling/gather.py) on the `test` preset (UB 8 KiB, tiles at most half of it):
// per tile of indices, one load of the index tile, then per index a scalar read of it
// (tile.get_value: negative indices wrap, `bound` = the axis size) and a DMA of the row it
// picks into the tile (copy_flat {partial}), then one store of the tile. Inputs as
// lower-graph-to-kernels writes them after O2.

// ---- an embedding lookup: 35 int32 ids into a 37 x 40 table. 24 rows (168 B a row and
// its index) would fit UB, but 2 tiles would leave 2 of the 4 vector cores idle: tiles of 9
// (one core's share of the 35 rows), and a ragged last tile of 8: its row loop runs
// min(9, 35 - t) times, its store is cut at the output's end.
func.func @gather_1(%v0: memref<37x40xf32, "GM">, %in0: memref<5x7xi32, "GM">, %v1_out: memref<5x7x40xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<37x40xf32, "GM"> -> !layout.tensor<37x40xf32>
  %in0_1 = tile.read %in0 : memref<5x7xi32, "GM"> -> !layout.tensor<5x7xi32>
  %v1 = graph.gather %v0_1, %in0_1 {axis = 0, layout.kernel = "origin"} : (!layout.tensor<37x40xf32>, !layout.tensor<5x7xi32>) -> !layout.tensor<5x7x40xf32>
  tile.write %v1 to %v1_out : !layout.tensor<5x7x40xf32> to memref<5x7x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.gather"
// CHECK-DAG:     %[[ROWS:.+]] = tile.alloc : memref<9x40xf32, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<9xi32, "UB">
// CHECK:         scf.for %[[T:.+]] = %c0 to %c35 step %c9 {
// CHECK-NEXT:      tile.copy_flat %in0[%[[T]]] to %[[IDX]][%c0] {count = 9 : i64} : memref<5x7xi32, "GM"> to memref<9xi32, "UB">
// CHECK-NEXT:      %[[OUT:.+]] = arith.muli %[[T]], %c40 : index
// CHECK-NEXT:      %[[NEG:.+]] = arith.muli %[[T]], %cm1 : index
// CHECK-NEXT:      %[[LEFT:.+]] = arith.addi %[[NEG]], %c35 : index
// CHECK-NEXT:      %[[N:.+]] = arith.minsi %c9, %[[LEFT]] : index
// CHECK-NEXT:      scf.for %[[J:.+]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT:        %row = tile.get_value %[[IDX]][%[[J]]] {bound = 37 : i64} : memref<9xi32, "UB">
// CHECK-NEXT:        %[[SRC:.+]] = arith.muli %row, %c40 : index
// CHECK-NEXT:        %[[DST:.+]] = arith.muli %[[J]], %c40 : index
// CHECK-NEXT:        tile.copy_flat %v0[%[[SRC]]] to %[[ROWS]][%[[DST]]] {count = 40 : i64, partial} : memref<37x40xf32, "GM"> to memref<9x40xf32, "UB">
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.copy_flat %[[ROWS]][%c0] to %v1_out[%[[OUT]]] {count = 360 : i64} : memref<9x40xf32, "UB"> to memref<5x7x40xf32, "GM">
// CHECK-NEXT:    } {tile.parallel}

// The scalar unit waits for the index tile (MTE2 -> S) and frees it for the next tile's
// load (S -> MTE2); the row DMAs it issues need no flag (it reads their offsets first).
// SYNC-LABEL: func.func @gather_1(
// SYNC:         scf.for
// SYNC:           tile.copy_flat %in0
// SYNC-NEXT:      tile.set_flag {src = "MTE2", dst = "S", event = 0 : i64}
// SYNC:           tile.wait_flag {src = "MTE2", dst = "S", event = 0 : i64}
// SYNC:           scf.for
// SYNC-NEXT:        %row = tile.get_value
// SYNC-NOT:         flag
// SYNC:             tile.copy_flat %v0
// SYNC-NEXT:      }
// SYNC:           tile.set_flag {src = "S", dst = "MTE2", event = 0 : i64}

// -----

// ---- compile-time indices (inlined by lower-graph-to-kernels): the CLS-token pick
// x[:, 0] needs no scalar read; per outer position, one row DMA at a constant offset.
func.func @gather_2(%in0: memref<2x9x16xf32, "GM">, %v1_out: memref<2x16xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<0> : !layout.tensor<i64>
  %in0_1 = tile.read %in0 : memref<2x9x16xf32, "GM"> -> !layout.tensor<2x9x16xf32>
  %v1 = graph.gather %in0_1, %v0 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<2x9x16xf32>, !layout.tensor<i64>) -> !layout.tensor<2x16xf32>
  tile.write %v1 to %v1_out : !layout.tensor<2x16xf32> to memref<2x16xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_2(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64
// CHECK-NOT:     tile.get_value
// CHECK:         scf.for %[[O:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      %[[DST:.+]] = arith.muli %[[O]], %c16 : index
// CHECK-NEXT:      %[[SRC:.+]] = arith.muli %[[O]], %c144 : index
// CHECK-NEXT:      tile.copy_flat %in0[%[[SRC]]] to %[[ROW:.+]][%c0] {count = 16 : i64, partial} :
// CHECK-NEXT:      tile.copy_flat %[[ROW]][%c0] to %v1_out[%[[DST]]] {count = 16 : i64} :
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- along the last axis the rows are single elements (4 B, under a DMA block): through
// UB (tiling/gather_ub.py). The indices are loaded and broadcast once; per tile of 72 outer
// rows (a ragged last one of 12: its load fills zeros past the table, its store is cut),
// one load of the table slice, a vtake, one store.
func.func @gather_3(%in0: memref<300x5xf32, "GM">, %in1: memref<3xi64, "GM">, %v1_out: memref<300x3xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<300x5xf32, "GM"> -> !layout.tensor<300x5xf32>
  %in1_1 = tile.read %in1 : memref<3xi64, "GM"> -> !layout.tensor<3xi64>
  %v1 = graph.gather %in0_1, %in1_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<300x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<300x3xf32>
  tile.write %v1 to %v1_out : !layout.tensor<300x3xf32> to memref<300x3xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_3(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 5 : i64, tile.ops = "graph.gather"
// CHECK-DAG:     %[[TABLE:.+]] = tile.alloc : memref<72x5x1xf32, "UB">
// CHECK-DAG:     %[[ROWS:.+]] = tile.alloc : memref<72x3x1xf32, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<1x3x1xi64, "UB">
// CHECK-DAG:     %[[POS:.+]] = tile.alloc : memref<72x3x1xi64, "UB">
// CHECK-NOT:     tile.get_value
// CHECK:         tile.copy_flat %in1[%c0] to %[[IDX]][%c0] {count = 3 : i64}
// CHECK-NEXT:    tile.vbrc %[[IDX]] to %[[POS]]
// CHECK-NEXT:    scf.for %[[O:.+]] = %c0 to %c300 step %c72 {
// CHECK-NEXT:      %[[SRC:.+]] = arith.muli %[[O]], %c5 : index
// CHECK-NEXT:      tile.copy_flat %in0[%[[SRC]]] to %[[TABLE]][%c0] {count = 360 : i64}
// CHECK-NEXT:      tile.vtake %[[TABLE]], %[[POS]] to %[[ROWS]] {axis = 1 : i64}
// CHECK-NEXT:      %[[DST:.+]] = arith.muli %[[O]], %c3 : index
// CHECK-NEXT:      tile.copy_flat %[[ROWS]][%c0] to %v1_out[%[[DST]]] {count = 216 : i64}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- a constant index along a last axis of size 1 (silero's state pick, [1, 40, 1]):
// the picked positions are compile-time vpick tables; no index load.
func.func @gather_4(%in0: memref<1x40x1xf32, "GM">, %v1_out: memref<1x40xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<0> : !layout.tensor<i64>
  %in0_1 = tile.read %in0 : memref<1x40x1xf32, "GM"> -> !layout.tensor<1x40x1xf32>
  %v1 = graph.gather %in0_1, %v0 {axis = 2, layout.kernel = "origin"} : (!layout.tensor<1x40x1xf32>, !layout.tensor<i64>) -> !layout.tensor<1x40xf32>
  tile.write %v1 to %v1_out : !layout.tensor<1x40xf32> to memref<1x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_4(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 1 : i64
// CHECK:         tile.copy_flat %in0[%c0] to %[[T:.+]][%c0] {count = 40 : i64}
// CHECK-NEXT:    tile.vpick %[[T]] to %[[R:.+]] {indices = array<i64: 0, 1, 2, {{.*}}, 39, 0, 0>}
// CHECK-NEXT:    tile.copy_flat %[[R]][%c0] to %v1_out[%c0] {count = 40 : i64}

// -----

// ---- BERT's input_ids.view(-1, S) before the embedding (tiling/gather_views.py): the
// reshape moves no bytes of the row-major ids, so the kernel loads its index tiles from
// the reshape's source %in0 ([2, 3, 7], read flat as the [6, 7] view) and writes the 42
// rows as before; no reshape is left, no copy of the ids is made.
func.func @gather_5(%in0: memref<2x3x7xi64, "GM">, %v2: memref<37x40xf32, "GM">, %v3_out: memref<6x7x40xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[-1, 7]> : !layout.tensor<2xi64>
  %in0_1 = tile.read %in0 : memref<2x3x7xi64, "GM"> -> !layout.tensor<2x3x7xi64>
  %v2_1 = tile.read %v2 : memref<37x40xf32, "GM"> -> !layout.tensor<37x40xf32>
  %v1 = graph.reshape %in0_1, %v0 {layout.kernel = "origin"} : (!layout.tensor<2x3x7xi64>, !layout.tensor<2xi64>) -> !layout.tensor<6x7xi64>
  %v3 = graph.gather %v2_1, %v1 {axis = 0, layout.kernel = "origin"} : (!layout.tensor<37x40xf32>, !layout.tensor<6x7xi64>) -> !layout.tensor<6x7x40xf32>
  tile.write %v3 to %v3_out : !layout.tensor<6x7x40xf32> to memref<6x7x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_5(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.reshape,graph.gather"
// CHECK-NOT:     graph.reshape
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<11xi64, "UB">
// CHECK:         scf.for %[[T:.+]] = %c0 to %c42 step %c11 {
// CHECK-NEXT:      tile.copy_flat %in0[%[[T]]] to %[[IDX]][%c0] {count = 11 : i64} : memref<2x3x7xi64, "GM"> to memref<11xi64, "UB">
// CHECK:             %row = tile.get_value %[[IDX]][%{{.+}}] {bound = 37 : i64}
// CHECK:             tile.copy_flat %v2[%{{.+}}] to %{{.+}} {count = 40 : i64, partial}
// CHECK:           tile.copy_flat %{{.+}}[%c0] to %v3_out[%{{.+}}] {count = 440 : i64}
// CHECK:         } {tile.parallel}

// -----

// ---- a reshape of a table held as NC1HWC0 (its bytes are not the [4, 36] view's): the
// gather cannot read it flat, and says so (the kernel stays on the host).
func.func @gather_6(%in0: memref<1x1x6x6x16xf32, "GM">, %in1: memref<3xi64, "GM">, %v2_out: memref<3x36xf32, "GM">) attributes {tile.kernel = "vector"} {
  %s = graph.constant dense<[4, 36]> : !layout.tensor<2xi64>
  %x = tile.read %in0 : memref<1x1x6x6x16xf32, "GM"> -> !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>
  %i = tile.read %in1 : memref<3xi64, "GM"> -> !layout.tensor<3xi64>
  %t = graph.reshape %x, %s {layout.kernel = "origin"} : (!layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>, !layout.tensor<2xi64>) -> !layout.tensor<4x36xf32>
  %v2 = graph.gather %t, %i {axis = 0, layout.kernel = "origin"} : (!layout.tensor<4x36xf32>, !layout.tensor<3xi64>) -> !layout.tensor<3x36xf32>
  tile.write %v2 to %v2_out : !layout.tensor<3x36xf32> to memref<3x36xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_6(
// CHECK-SAME:    tile.kernel = "host", tile.host_reason = "a gather of a tensor that is not row-major"
// CHECK-NEXT:    graph.constant
// CHECK-NEXT:    tile.read
