// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// ReverseSequence (tiling/reverse_sequence.py) on the `test` preset: the gather kernel's
// tiles over the T x B rows in order, each row's source computed on the scalar unit from
// its step t and entry b: len = min(lens[b], T), src = t < len ? len - 1 - t : t (the
// lengths loaded into UB once).

// ---- time-major [T = 7, B = 5, 40] f32, lengths an int64 input: 35 rows shared by the 4
// vector cores in tiles of 9, a ragged last tile of 8 (its row loop runs min(9, 35 - r0)
// times, its store cut at the output's end). Row r is (t, b) = divmod(r, 5).
func.func @time_major(%v0: memref<7x5x40xf32, "GM">, %in0: memref<5xi64, "GM">, %v1_out: memref<7x5x40xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<7x5x40xf32, "GM"> -> !layout.tensor<7x5x40xf32>
  %in0_1 = tile.read %in0 : memref<5xi64, "GM"> -> !layout.tensor<5xi64>
  %v1 = graph.reverse_sequence %v0_1, %in0_1 {batch_axis = 1, time_axis = 0, layout.kernel = "origin"} : (!layout.tensor<7x5x40xf32>, !layout.tensor<5xi64>) -> !layout.tensor<7x5x40xf32>
  tile.write %v1 to %v1_out : !layout.tensor<7x5x40xf32> to memref<7x5x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @time_major(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.reverse_sequence"
// CHECK:         %[[LENS:.+]] = tile.alloc : memref<5xi64, "UB">
// CHECK:         %[[ROWS:.+]] = tile.alloc : memref<9x40xf32, "UB">
// CHECK:         tile.copy_flat %in0[%c0] to %[[LENS]][%c0] {count = 5 : i64} : memref<5xi64, "GM"> to memref<5xi64, "UB">
// CHECK-NEXT:    scf.for %[[T:.+]] = %c0 to %c35 step %c9 {
// CHECK-NEXT:      %[[OUT:.+]] = arith.muli %[[T]], %c40 : index
// CHECK-NEXT:      %[[NEG:.+]] = arith.muli %[[T]], %cm1 : index
// CHECK-NEXT:      %[[LEFT:.+]] = arith.addi %[[NEG]], %c35 : index
// CHECK-NEXT:      %[[N:.+]] = arith.minsi %c9, %[[LEFT]] : index
// CHECK-NEXT:      scf.for %[[J:.+]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT:        %[[R:.+]] = arith.addi %[[T]], %[[J]] : index
// CHECK-NEXT:        %[[STEP:.+]] = arith.floordivsi %[[R]], %c5 : index
// CHECK-NEXT:        %[[ENTRY:.+]] = arith.remsi %[[R]], %c5 : index
// CHECK-NEXT:        %[[L:.+]] = tile.get_value %[[LENS]][%[[ENTRY]]] : memref<5xi64, "UB">
// CHECK-NEXT:        %len = arith.minsi %[[L]], %c7 : index
// CHECK-NEXT:        %[[IN:.+]] = arith.cmpi slt, %[[STEP]], %len : index
// CHECK-NEXT:        %[[LAST:.+]] = arith.addi %len, %cm1 : index
// CHECK-NEXT:        %[[BACK:.+]] = arith.subi %[[LAST]], %[[STEP]] : index
// CHECK-NEXT:        %[[SRC:.+]] = arith.select %[[IN]], %[[BACK]], %[[STEP]] : index
// CHECK-NEXT:        %[[SRCB:.+]] = arith.muli %[[SRC]], %c5 : index
// CHECK-NEXT:        %[[ROW:.+]] = arith.addi %[[SRCB]], %[[ENTRY]] : index
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[ROW]], %c40 : index
// CHECK-NEXT:        %[[DST:.+]] = arith.muli %[[J]], %c40 : index
// CHECK-NEXT:        tile.copy_flat %v0[%[[AT]]] to %[[ROWS]][%[[DST]]] {count = 40 : i64, partial} : memref<7x5x40xf32, "GM"> to memref<9x40xf32, "UB">
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.copy_flat %[[ROWS]][%c0] to %v1_out[%[[OUT]]] {count = 360 : i64} : memref<9x40xf32, "UB"> to memref<7x5x40xf32, "GM">
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- batch-major [B = 2, T = 3, 8]: row r is (b, t) = divmod(r, 3), its source row
// b * 3 + src.
func.func @batch_major(%v0: memref<2x3x8xf32, "GM">, %in0: memref<2xi32, "GM">, %v1_out: memref<2x3x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<2x3x8xf32, "GM"> -> !layout.tensor<2x3x8xf32>
  %in0_1 = tile.read %in0 : memref<2xi32, "GM"> -> !layout.tensor<2xi32>
  %v1 = graph.reverse_sequence %v0_1, %in0_1 {batch_axis = 0, time_axis = 1, layout.kernel = "origin"} : (!layout.tensor<2x3x8xf32>, !layout.tensor<2xi32>) -> !layout.tensor<2x3x8xf32>
  tile.write %v1 to %v1_out : !layout.tensor<2x3x8xf32> to memref<2x3x8xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @batch_major(
// CHECK:         %[[ENTRY:.+]] = arith.floordivsi %{{.+}}, %c3 : index
// CHECK-NEXT:    %[[STEP:.+]] = arith.remsi %{{.+}}, %c3 : index
// CHECK-NEXT:    %[[L:.+]] = tile.get_value %{{.+}}[%[[ENTRY]]] : memref<2xi32, "UB">
// CHECK:         %[[SRC:.+]] = arith.select %{{.+}}, %{{.+}}, %[[STEP]] : index
// CHECK-NEXT:    %[[BASE:.+]] = arith.muli %[[ENTRY]], %c3 : index
// CHECK-NEXT:    arith.addi %[[BASE]], %[[SRC]] : index
