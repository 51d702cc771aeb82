// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test}' | filecheck %s

// GatherND (tiling/gather_nd.py) on the `test` preset: the rows of tiling/gather.py, each
// named by an index tuple. 35 tuples of depth 2 into a [6, 9, 24] tensor: the index tile
// holds two values per row (18 for a tile of 9), each read on the scalar unit and wrapped
// against its own axis (bounds 6 and 9), combined row-major (i * 9 + j) into the row of
// the [54, 24] view that one DMA copies; a ragged last tile of 8.
func.func @gather_nd_1(%v0: memref<6x9x24xf32, "GM">, %in0: memref<5x7x2xi64, "GM">, %v1_out: memref<5x7x24xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<6x9x24xf32, "GM"> -> !layout.tensor<6x9x24xf32>
  %in0_1 = tile.read %in0 : memref<5x7x2xi64, "GM"> -> !layout.tensor<5x7x2xi64>
  %v1 = graph.gather_nd %v0_1, %in0_1 {batch_dims = 0, layout.kernel = "origin"} : (!layout.tensor<6x9x24xf32>, !layout.tensor<5x7x2xi64>) -> !layout.tensor<5x7x24xf32>
  tile.write %v1 to %v1_out : !layout.tensor<5x7x24xf32> to memref<5x7x24xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_nd_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.gather_nd"
// CHECK-DAG:     %[[ROWS:.+]] = tile.alloc : memref<9x24xf32, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<9x2xi64, "UB">
// CHECK:         scf.for %[[T:.+]] = %c0 to %c35 step %c9 {
// CHECK-NEXT:      %[[AT:.+]] = arith.muli %[[T]], %c2 : index
// CHECK-NEXT:      tile.copy_flat %in0[%[[AT]]] to %[[IDX]][%c0] {count = 18 : i64}
// CHECK:           scf.for %[[J:.+]] = %c0 to %{{.+}} step %c1 {
// CHECK-NEXT:        %[[I:.+]] = tile.get_value %[[IDX]][%[[J]], %c0] {bound = 6 : i64}
// CHECK-NEXT:        %[[K:.+]] = tile.get_value %[[IDX]][%[[J]], %c1] {bound = 9 : i64}
// CHECK-NEXT:        %[[SCALED:.+]] = arith.muli %[[I]], %c9 : index
// CHECK-NEXT:        %row = arith.addi %[[SCALED]], %[[K]] : index
// CHECK-NEXT:        %[[SRC:.+]] = arith.muli %row, %c24 : index
// CHECK-NEXT:        %[[DST:.+]] = arith.muli %[[J]], %c24 : index
// CHECK-NEXT:        tile.copy_flat %v0[%[[SRC]]] to %[[ROWS]][%[[DST]]] {count = 24 : i64, partial}
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.copy_flat %[[ROWS]][%c0] to %v1_out[%{{.+}}] {count = 216 : i64}
// CHECK-NEXT:    } {tile.parallel}
