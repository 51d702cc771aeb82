// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// GatherElements along the last axis of [13, 50] by [13, 17] indices on the `test` preset:
// per tile of outer rows, the rows' axis slices and index rows in by flat DMAs, a vtake
// along axis 1, the picked elements out. 13 rows: tiles of 8, the last ragged (5 rows:
// zeros loaded past the end, the store cut at the output's end).
func.func @gather(%x: !layout.tensor<13x50xf32>, %i: !layout.tensor<13x17xi64>) -> !layout.tensor<13x17xf32> {
  %y = graph.gather_elements %x, %i {axis = 1} : (!layout.tensor<13x50xf32>, !layout.tensor<13x17xi64>) -> !layout.tensor<13x17xf32>
  func.return %y : !layout.tensor<13x17xf32>
}
// CHECK-LABEL: func.func @gather_elements_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         %table_ub = tile.alloc : memref<8x50x1xf32, "UB">
// CHECK:         %idx_ub = tile.alloc : memref<8x17x1xi64, "UB">
// CHECK:         scf.for %o = %c0 to %c13 step %c8 {
// CHECK:           tile.copy_flat %x[{{.*}}] to %table_ub[%c0] {count = 400 : i64}
// CHECK:           tile.copy_flat %i[{{.*}}] to %idx_ub[%c0] {count = 136 : i64}
// CHECK:           tile.vtake %table_ub, %idx_ub to %rows_ub {axis = 1 : i64}
// CHECK:           tile.copy_flat %rows_ub[%c0] to %y_out[{{.*}}] {count = 136 : i64}
// CHECK:         } {tile.parallel}

// ScatterElements along axis 1 of [3, 10, 5] (inner 5): the axis slices in, the updates
// and indices in, a vput into the slices, the slices out whole (all 3 rows: one tile).
func.func @scatter(%x: !layout.tensor<3x10x5xf32>, %i: !layout.tensor<3x4x5xi64>, %u: !layout.tensor<3x4x5xf32>) -> !layout.tensor<3x10x5xf32> {
  %y = graph.scatter_elements %x, %i, %u {axis = 1} : (!layout.tensor<3x10x5xf32>, !layout.tensor<3x4x5xi64>, !layout.tensor<3x4x5xf32>) -> !layout.tensor<3x10x5xf32>
  func.return %y : !layout.tensor<3x10x5xf32>
}
// CHECK-LABEL: func.func @scatter_elements_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         %table_ub = tile.alloc : memref<3x10x5xf32, "UB">
// CHECK:         tile.copy_flat %x[%c0] to %table_ub[%c0] {count = 150 : i64}
// CHECK:         tile.copy_flat %u[%c0] to %rows_ub[%c0] {count = 60 : i64}
// CHECK:         tile.vput %rows_ub, %idx_ub to %table_ub {axis = 1 : i64}
// CHECK:         tile.copy_flat %table_ub[%c0] to %y_out[%c0] {count = 150 : i64}

// A graph network's message sum (torch's scatter_add: ScatterElements along axis 0 with
// reduction add): the same kernel, its vput combining repeated positions in order.
func.func @scatter_add(%x: !layout.tensor<5x8xf32>, %i: !layout.tensor<24x8xi64>, %u: !layout.tensor<24x8xf32>) -> !layout.tensor<5x8xf32> {
  %y = graph.scatter_elements %x, %i, %u {axis = 0, reduction = "add"} : (!layout.tensor<5x8xf32>, !layout.tensor<24x8xi64>, !layout.tensor<24x8xf32>) -> !layout.tensor<5x8xf32>
  func.return %y : !layout.tensor<5x8xf32>
}
// CHECK-LABEL: func.func @scatter_elements_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         tile.copy_flat %u[%c0] to %rows_ub[%c0] {count = 192 : i64}
// CHECK:         tile.vput %rows_ub, %idx_ub to %table_ub {axis = 1 : i64, reduction = "add"}
// CHECK:         tile.copy_flat %table_ub[%c0] to %y_out[%c0] {count = 40 : i64}

// An axis slice too long for UB (elements_blocks.py): GatherElements along axis 1 of
// [3, 1100] (4400 B a slice over the test preset's 4 KiB budget) by 39 indices. Few
// elements, and the test preset charges no GM latency: by the cost model's figures a DMA
// per element is cheaper than every core loading the slice block by block
// (tile_kernels_elements_blocks.mlir shows the blocks on ascend910b). Each element's index
// read from GM on the scalar unit (wrapped), the element loaded and stored; the elements
// over the cores.
func.func @gather_long(%x: !layout.tensor<3x1100xf32>, %i: !layout.tensor<3x13xi64>) -> !layout.tensor<3x13xf32> {
  %y = graph.gather_elements %x, %i {axis = 1} : (!layout.tensor<3x1100xf32>, !layout.tensor<3x13xi64>) -> !layout.tensor<3x13xf32>
  func.return %y : !layout.tensor<3x13xf32>
}
// CHECK-LABEL: func.func @gather_elements_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         scf.for %t = %c0 to %c39 step %c1 {
// CHECK:           tile.get_value %i[{{.*}}] {bound = 1100 : i64} : memref<3x13xi64, "GM">
// CHECK:           tile.copy_flat %x[%row] to %rows_ub[%c0] {count = 1 : i64, partial}
// CHECK:           tile.copy_flat %rows_ub[%c0] to %y_out[%t] {count = 1 : i64}
// CHECK:         } {tile.parallel}

// TAPAS's segment max (torch's scatter_reduce) scaled down: ScatterElements of 33 updates
// into a flat [1500]. The axis in 4 blocks over the test preset's 4 cores, each loaded
// once, every index applied to it in order on the scalar unit (scatter_rows {elements}),
// stored once.
func.func @segment_max(%x: !layout.tensor<1500xf32>, %i: !layout.tensor<33xi64>, %u: !layout.tensor<33xf32>) -> !layout.tensor<1500xf32> {
  %y = graph.scatter_elements %x, %i, %u {axis = 0, reduction = "max"} : (!layout.tensor<1500xf32>, !layout.tensor<33xi64>, !layout.tensor<33xf32>) -> !layout.tensor<1500xf32>
  func.return %y : !layout.tensor<1500xf32>
}
// CHECK-LABEL: func.func @scatter_elements_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         %block_ub = tile.alloc : memref<375x1xf32, "UB">
// CHECK:         scf.for %k = %c0 to %c1500 step %c375 {
// CHECK:           tile.copy_flat %x[%k] to %block_ub[%c0] {count = 375 : i64}
// CHECK:           tile.copy_flat %i[%c0] to %idx_ub[%c0] {count = 33 : i64}
// CHECK:           tile.copy_flat %u[%c0] to %upd_ub[%c0] {count = 33 : i64}
// CHECK:           tile.scatter_rows %upd_ub, %idx_ub to %block_ub[%k] {depth = array<i64: 1500>, reduction = "max", elements}
// CHECK:           tile.copy_flat %block_ub[%c0] to %y_out[%k] {count = 375 : i64}
// CHECK:         } {tile.parallel}
