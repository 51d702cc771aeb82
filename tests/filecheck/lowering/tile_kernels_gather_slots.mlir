// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},inject-sync' | filecheck %s --check-prefix=SYNC

// Gather of short rows (tiling/gather.py) whose table does not fit UB (`test` preset: UB
// 8 KiB): a detector's boxes, 16-byte rows of a [3000, 4] table picked by 50 int64
// indices. Per index a scalar read and a row DMA into a slot of one 32-byte block (8 f32)
// of rows_ub, so each row's UB address is aligned; the tile's slots packed by a vstride
// window (the first 4 elements of each) and stored at once. The last tile is ragged: its
// row loop runs min(32, 50 - t) times, its store is cut at the output's end.
func.func @gather_slots(%in0: memref<3000x4xf32, "GM">, %in1: memref<50xi64, "GM">, %v1_out: memref<50x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<3000x4xf32, "GM"> -> !layout.tensor<3000x4xf32>
  %in1_1 = tile.read %in1 : memref<50xi64, "GM"> -> !layout.tensor<50xi64>
  %v1 = graph.gather %in0_1, %in1_1 {axis = 0, layout.kernel = "origin"} : (!layout.tensor<3000x4xf32>, !layout.tensor<50xi64>) -> !layout.tensor<50x4xf32>
  tile.write %v1 to %v1_out : !layout.tensor<50x4xf32> to memref<50x4xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_slots(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64, tile.ops = "graph.gather"
// CHECK-DAG:     %[[ROWS:.+]] = tile.alloc : memref<32x8xf32, "UB">
// CHECK-DAG:     %[[PACKED:.+]] = tile.alloc : memref<32x4xf32, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<32xi64, "UB">
// CHECK:         scf.for %[[T:.+]] = %c0 to %c50 step %c32 {
// CHECK-NEXT:      tile.copy_flat %in1[%[[T]]] to %[[IDX]][%c0] {count = 32 : i64}
// CHECK-NEXT:      %[[OUT:.+]] = arith.muli %[[T]], %c4 : index
// CHECK-NEXT:      %[[NEG:.+]] = arith.muli %[[T]], %cm1 : index
// CHECK-NEXT:      %[[LEFT:.+]] = arith.addi %[[NEG]], %c50 : index
// CHECK-NEXT:      %[[N:.+]] = arith.minsi %c32, %[[LEFT]] : index
// CHECK-NEXT:      scf.for %[[J:.+]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT:        %row = tile.get_value %[[IDX]][%[[J]]] {bound = 3000 : i64} : memref<32xi64, "UB">
// CHECK-NEXT:        %[[SRC:.+]] = arith.muli %row, %c4 : index
// CHECK-NEXT:        %[[SLOT:.+]] = arith.muli %[[J]], %c8 : index
// CHECK-NEXT:        tile.copy_flat %in0[%[[SRC]]] to %[[ROWS]][%[[SLOT]]] {count = 4 : i64, partial}
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.vstride %[[ROWS]] to %[[PACKED]] {steps = array<i64: 1, 1>} : memref<32x8xf32, "UB"> to memref<32x4xf32, "UB">
// CHECK-NEXT:      tile.copy_flat %[[PACKED]][%c0] to %v1_out[%[[OUT]]] {count = 128 : i64}
// CHECK-NEXT:    } {tile.parallel}

// The pack waits for the row DMAs (MTE2 -> V) and the store for the pack (V -> MTE3);
// the next tile's rows wait until the pack has read the slots (V -> MTE2).
// SYNC-LABEL: func.func @gather_slots(
// SYNC:           tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
// SYNC-NEXT:      scf.for
// SYNC:           tile.set_flag {src = "MTE2", dst = "V", event = 0 : i64}
// SYNC:           tile.wait_flag {src = "MTE2", dst = "V", event = 0 : i64}
// SYNC:           tile.vstride
// SYNC-NEXT:      tile.set_flag {src = "V", dst = "MTE3", event = 0 : i64}
// SYNC-NEXT:      tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
// SYNC-NEXT:      tile.wait_flag {src = "V", dst = "MTE3", event = 0 : i64}
// SYNC-NEXT:      tile.copy_flat %[[P:.+]][%c0] to %v1_out
