// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test}' | filecheck %s

// A GatherElements whose ids index a row lookup (tiling/elements_lookup.py: Data2VecText's
// token-type ids picked by position, then embedded) on the `test` preset: per tile of
// outer positions the GatherElements' slices in, its vtake into ids_ub, then per id a
// scalar read of it (tile.get_value, wrapped against the table's 2 rows) and the row DMA
// it picks (copy_flat {partial}), one store. The last tile (7 = 3 x 2 + 1) runs
// min(2, 7 - o) positions. Input as lower-graph-to-kernels writes it.
func.func @lookup(%in0: memref<7x40xi64, "GM">, %in1: memref<7x5xi64, "GM">, %in2: memref<2x32xf32, "GM">, %v2_out: memref<7x5x32xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<7x40xi64, "GM"> -> !layout.tensor<7x40xi64>
  %in1_1 = tile.read %in1 : memref<7x5xi64, "GM"> -> !layout.tensor<7x5xi64>
  %in2_1 = tile.read %in2 : memref<2x32xf32, "GM"> -> !layout.tensor<2x32xf32>
  %v1 = graph.gather_elements %in0_1, %in1_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<7x40xi64>, !layout.tensor<7x5xi64>) -> !layout.tensor<7x5xi64>
  %v2 = graph.gather %in2_1, %v1 {axis = 0, layout.kernel = "origin"} : (!layout.tensor<2x32xf32>, !layout.tensor<7x5xi64>) -> !layout.tensor<7x5x32xf32>
  tile.write %v2 to %v2_out : !layout.tensor<7x5x32xf32> to memref<7x5x32xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @lookup(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.gather_elements,graph.gather"
// CHECK-DAG:     %[[TABLE:.+]] = tile.alloc : memref<2x40x1xi64, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<2x5x1xi64, "UB">
// CHECK-DAG:     %[[IDS:.+]] = tile.alloc : memref<2x5x1xi64, "UB">
// CHECK-DAG:     %[[EMB:.+]] = tile.alloc : memref<10x32xf32, "UB">
// CHECK:         scf.for %[[O:.+]] = %c0 to %c7 step %c2 {
// CHECK:           tile.copy_flat %in0[{{.+}}] to %[[TABLE]][%c0] {count = 80 : i64}
// CHECK-NEXT:      tile.copy_flat %in1[{{.+}}] to %[[IDX]][%c0] {count = 10 : i64}
// CHECK-NEXT:      tile.vtake %[[TABLE]], %[[IDX]] to %[[IDS]] {axis = 1 : i64}
// CHECK:           %[[N:.+]] = arith.minsi %c2, {{.+}} : index
// CHECK-NEXT:      scf.for %[[P:.+]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT:        scf.for %[[K:.+]] = %c0 to %c5 step %c1 {
// CHECK:               %row = tile.get_value %[[IDS]][%[[P]], %[[K]], %c0] {bound = 2 : i64}
// CHECK-NEXT:          %[[SRC:.+]] = arith.muli %row, %c32 : index
// CHECK:               tile.copy_flat %in2[%[[SRC]]] to %[[EMB]][{{.+}}] {count = 32 : i64, partial}
// CHECK:           tile.copy_flat %[[EMB]][%c0] to %v2_out[{{.+}}] {count = 320 : i64}
// CHECK-NEXT:    } {tile.parallel}
