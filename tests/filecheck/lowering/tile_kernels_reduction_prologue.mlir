// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// A reduction with elementwise ops before and after it in its group is one vector kernel
// (tiling/reduction_prologue.py): per tile, the prologue's inputs are loaded at the tile's
// offsets (the [37, 1] mask broadcast along the reduced axis) and multiplied in UB, the
// vreduce reads that product, the tail (sqrt) runs on the reduced tile, which is stored.
// 37 rows in tiles of 2 on the `test` preset: the last tile is ragged (cut by the store).
func.func @p(%x: !layout.tensor<37x200xf32, ND>, %m: !layout.tensor<37x1xf32, ND>) -> !layout.tensor<37xf32, ND> {
  %a = graph.constant dense<[1]> : !layout.tensor<1xi64, ND>
  %y = graph.mul %x, %m : (!layout.tensor<37x200xf32, ND>, !layout.tensor<37x1xf32, ND>) -> !layout.tensor<37x200xf32, ND>
  %s = graph.reduce_sum %y, %a {keepdims = 0 : i64} : (!layout.tensor<37x200xf32, ND>, !layout.tensor<1xi64, ND>) -> !layout.tensor<37xf32, ND>
  %r = graph.sqrt %s : !layout.tensor<37xf32, ND>
  func.return %r : !layout.tensor<37xf32, ND>
}
// CHECK-LABEL: func.func @fused_mul_reduce_sum_sqrt_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 19 : i64, tile.ops = "graph.mul,graph.reduce_sum,graph.sqrt"
// CHECK:         %[[X:.+]] = tile.alloc : memref<2x200xf32, "UB">
// CHECK-NEXT:    %[[M:.+]] = tile.alloc : memref<2x1xf32, "UB">
// CHECK-NEXT:    %[[Y:.+]] = tile.alloc : memref<2x200xf32, "UB">
// CHECK-NEXT:    %[[S:.+]] = tile.alloc : memref<2xf32, "UB">
// CHECK-NEXT:    %[[R:.+]] = tile.alloc : memref<2xf32, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c37 step %c2 {
// CHECK-NEXT:      tile.copy %x[%[[I]], %c0] to %[[X]][%c0, %c0]
// CHECK-NEXT:      tile.copy %m[%[[I]], %c0] to %[[M]][%c0, %c0]
// CHECK-NEXT:      tile.vmul %[[X]], %[[M]] to %[[Y]]
// CHECK-NEXT:      tile.vreduce %[[Y]] to %[[S]] {kind = "sum", axes = array<i64: 1>}
// CHECK-NEXT:      tile.vsqrt %[[S]] to %[[R]]
// CHECK-NEXT:      tile.copy %[[R]][%c0] to %r_out[%[[I]]]
// CHECK-NEXT:    } {tile.parallel}

// A row of 2100 does not fit the `test` preset's UB with the prologue's tiles: the chunked
// form, the prologue (exp) run on each chunk before its vreduce. The chunk length divides
// the row (300, not the longest that fits): a ragged chunk's lanes past the row would hold
// exp(0) = 1 and add to the sum. So the loads need no pad value.
func.func @c(%x: !layout.tensor<2x2100xf32, ND>) -> !layout.tensor<2x1xf32, ND> {
  %a = graph.constant dense<[1]> : !layout.tensor<1xi64, ND>
  %e = graph.exp %x : !layout.tensor<2x2100xf32, ND>
  %s = graph.reduce_sum %e, %a {keepdims = 1 : i64} : (!layout.tensor<2x2100xf32, ND>, !layout.tensor<1xi64, ND>) -> !layout.tensor<2x1xf32, ND>
  %l = graph.log %s : !layout.tensor<2x1xf32, ND>
  func.return %l : !layout.tensor<2x1xf32, ND>
}
// CHECK-LABEL: func.func @fused_exp_reduce_sum_log_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64
// CHECK:         %[[CX:.+]] = tile.alloc : memref<1x300xf32, "UB">
// CHECK-NEXT:    %[[E:.+]] = tile.alloc : memref<1x300xf32, "UB">
// CHECK-NEXT:    %[[ACC:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK-NEXT:    %[[PART:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK-NEXT:    %[[L:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK:         scf.for %[[ROW:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.vdup %[[ACC]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      scf.for %[[C:.+]] = %c0 to %c2100 step %c300 {
// CHECK-NEXT:        tile.copy %x[%[[ROW]], %[[C]]] to %[[CX]][%c0, %c0] :
// CHECK-NEXT:        tile.vexp %[[CX]] to %[[E]]
// CHECK-NEXT:        tile.vreduce %[[E]] to %[[PART]] {kind = "sum", axes = array<i64: 1>}
// CHECK-NEXT:        tile.vadd %[[ACC]], %[[PART]] to %[[ACC]]
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.vln %[[ACC]] to %[[L]]
// CHECK-NEXT:      tile.copy %[[L]][%c0, %c0] to %l_out[%[[ROW]], %c0]
// CHECK-NEXT:    } {tile.parallel}
