// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// RMS norm (tiling/reduction.py, tiling/reduction_chunks.py) on the `test` preset (UB 8 KiB):
// layer norm's program without the centring. Inputs as lower-graph-to-kernels writes them.

// ---- rows of 48 fit: one tile per image (5 rows x 48), the square, its row sum, the mean's
// 1/48, epsilon, rsqrt, then x * rstd * gamma; gamma copied once before the loop.
func.func @rms_norm_rows(%x: memref<6x5x48xf32, "GM">, %g: memref<48xf32, "GM">, %out: memref<6x5x48xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<6x5x48xf32, "GM"> -> !layout.tensor<6x5x48xf32>
  %g1 = tile.read %g : memref<48xf32, "GM"> -> !layout.tensor<48xf32>
  %y = graph.rms_norm %x1, %g1 {axis = -1 : i64, epsilon = 1.0e-06} : (!layout.tensor<6x5x48xf32>, !layout.tensor<48xf32>) -> !layout.tensor<6x5x48xf32>
  tile.write %y to %out : !layout.tensor<6x5x48xf32> to memref<6x5x48xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @rms_norm_rows(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 6 : i64, tile.ops = "graph.rms_norm"
// CHECK:         tile.copy %g[%c0] to %[[G:.+]][%c0]
// CHECK:         scf.for %[[N:.+]] = %c0 to %c6 step %c1 {
// CHECK-NEXT:      tile.copy %x[%[[N]], %c0, %c0] to %[[X:.+]][%c0, %c0, %c0]
// CHECK-NEXT:      tile.vmul %[[X]], %[[X]] to %[[SQ:[^ ]+]]
// CHECK-NEXT:      tile.vreduce %[[SQ]] to %[[R:[^ ]+]] {kind = "sum", axes = array<i64: 2>} : memref<1x5x48xf32, "UB"> to memref<1x5x1xf32, "UB">
// CHECK-NEXT:      tile.vmuls %[[R]], 0.020833333333333332
// CHECK-NEXT:      tile.vadds %[[R]], 9.9999999747524271e-07
// CHECK-NEXT:      tile.vrsqrt %[[R]] to %[[R]]
// CHECK-NEXT:      tile.vmul %[[X]], %[[R]] to %[[O:[^ ]+]]
// CHECK-NEXT:      tile.vmul %[[O]], %[[G]] to %[[O]]
// CHECK-NEXT:      tile.copy %[[O]][%c0, %c0, %c0] to %out[%[[N]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- a row of 1000 does not fit: two chunked passes (no mean pass), 1000 = 2 x 336 + 328
// (the ragged chunk's lanes past the row load as 0 and add nothing to the squares); two
// accumulators (the sum and a chunk's part), not layer norm's three.
func.func @rms_norm_chunked(%x: memref<2x1000xf32, "GM">, %g: memref<1000xf32, "GM">, %out: memref<2x1000xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<2x1000xf32, "GM"> -> !layout.tensor<2x1000xf32>
  %g1 = tile.read %g : memref<1000xf32, "GM"> -> !layout.tensor<1000xf32>
  %y = graph.rms_norm %x1, %g1 {axis = -1 : i64, epsilon = 1.0e-06} : (!layout.tensor<2x1000xf32>, !layout.tensor<1000xf32>) -> !layout.tensor<2x1000xf32>
  tile.write %y to %out : !layout.tensor<2x1000xf32> to memref<2x1000xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @rms_norm_chunked(
// CHECK-COUNT-5: tile.alloc
// CHECK-NOT:     tile.alloc
// CHECK:         scf.for %[[N:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.vdup %[[SUM:[^ ]+]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      scf.for %[[R1:.+]] = %c0 to %c1000 step %c336 {
// CHECK-NEXT:        tile.copy %x[%[[N]], %[[R1]]] to %[[X:[^ ]+]][%c0, %c0]
// CHECK-NEXT:        tile.vmul %[[X]], %[[X]] to %[[C:[^ ]+]]
// CHECK-NEXT:        tile.vreduce %[[C]] to %[[PART:[^ ]+]] {kind = "sum"
// CHECK-NEXT:        tile.vadd %[[SUM]], %[[PART]] to %[[SUM]]
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.vmuls %[[SUM]], 1.000000e-03
// CHECK-NEXT:      tile.vadds %[[SUM]], 9.9999999747524271e-07
// CHECK-NEXT:      tile.vrsqrt %[[SUM]] to %[[SUM]]
// CHECK-NEXT:      scf.for %[[R2:.+]] = %c0 to %c1000 step %c336 {
// CHECK-NEXT:        tile.copy %x[%[[N]], %[[R2]]] to %[[X]][%c0, %c0]
// CHECK-NEXT:        tile.copy %g[%[[R2]]] to %[[G:[^ ]+]][%c0]
// CHECK-NEXT:        tile.vmul %[[X]], %[[SUM]] to %[[C]]
// CHECK-NEXT:        tile.vmul %[[C]], %[[G]] to %[[C]]
// CHECK-NEXT:        tile.copy %[[C]][%c0, %c0] to %out[%[[N]], %[[R2]]]
