// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// apply_rotary (tiling/rotary.py) on the `test` preset (UB 8 KiB): rows of x with the same
// rows of the tables (their broadcast head axis read at 0); the halves are UB -> UB windows
// of the x row: from column 4 ([x2, 0]) and to column 4 ([0, x1]); then
// x * cos + ([0, x1] - [x2, 0]) * sin. Inputs as lower-graph-to-kernels writes them.
func.func @rotary_rows(%x: memref<2x3x70x8xf32, "GM">, %c: memref<2x1x70x8xf32, "GM">, %s: memref<2x1x70x8xf32, "GM">, %out: memref<2x3x70x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<2x3x70x8xf32, "GM"> -> !layout.tensor<2x3x70x8xf32>
  %c1 = tile.read %c : memref<2x1x70x8xf32, "GM"> -> !layout.tensor<2x1x70x8xf32>
  %s1 = tile.read %s : memref<2x1x70x8xf32, "GM"> -> !layout.tensor<2x1x70x8xf32>
  %y = graph.apply_rotary %x1, %c1, %s1 : (!layout.tensor<2x3x70x8xf32>, !layout.tensor<2x1x70x8xf32>, !layout.tensor<2x1x70x8xf32>) -> !layout.tensor<2x3x70x8xf32>
  tile.write %y to %out : !layout.tensor<2x3x70x8xf32> to memref<2x3x70x8xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @rotary_rows(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = {{[0-9]+}} : i64, tile.ops = "graph.apply_rotary"
// CHECK-COUNT-5: tile.alloc
// CHECK:         scf.for %[[B:[^ ]+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[H:[^ ]+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:        scf.for %[[R:[^ ]+]] = %c0 to %c70 step %{{.+}} {
// CHECK-NEXT:          tile.copy %x[%[[B]], %[[H]], %[[R]], %c0] to %[[X:[^ ]+]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:          tile.copy %c[%[[B]], %c0, %[[R]], %c0] to %[[C:[^ ]+]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:          tile.copy %s[%[[B]], %c0, %[[R]], %c0] to %[[S:[^ ]+]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:          tile.copy %[[X]][%c0, %c0, %c0, %c4] to %[[HI:[^ ]+]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:          tile.copy %[[X]][%c0, %c0, %c0, %c0] to %[[LO:[^ ]+]][%c0, %c0, %c0, %c4]
// CHECK-NEXT:          tile.vsub %[[LO]], %[[HI]] to %[[LO]]
// CHECK-NEXT:          tile.vmul %[[LO]], %[[S]] to %[[LO]]
// CHECK-NEXT:          tile.vmul %[[X]], %[[C]] to %[[C]]
// CHECK-NEXT:          tile.vadd %[[C]], %[[LO]] to %[[C]]
// CHECK-NEXT:          tile.copy %[[C]][%c0, %c0, %c0, %c0] to %out[%[[B]], %[[H]], %[[R]], %c0]
