// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// YOLOv10's box gather (`torch.gather(boxes, 1, idx.repeat(1, 1, 4))`): GatherElements along
// axis 1 of [3, 8400, 4] by [3, 300, 4] on ascend910b (elements_blocks.py). A slice (134 KB)
// does not fit the 96 KiB budget, and 3600 element DMAs would cost more than the blocks: per
// outer position, index tiles of 32 rows over the cores (the last shifted back: min(k, 268)),
// per tile the axis in two blocks of 4200 anchors (the budget the index tile leaves, evened)
// one after the other, each block's elements taken by the scalar unit's gather_rows, the
// tile stored once.
func.func @boxes(%x: !layout.tensor<3x8400x4xf32>, %i: !layout.tensor<3x300x4xi64>) -> !layout.tensor<3x300x4xf32> {
  %y = graph.gather_elements %x, %i {axis = 1} : (!layout.tensor<3x8400x4xf32>, !layout.tensor<3x300x4xi64>) -> !layout.tensor<3x300x4xf32>
  func.return %y : !layout.tensor<3x300x4xf32>
}
// CHECK-LABEL: func.func @gather_elements_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         %block_ub = tile.alloc : memref<4200x4xf32, "UB">
// CHECK:         %idx_ub = tile.alloc : memref<32x4xi64, "UB">
// CHECK:         %rows_ub = tile.alloc : memref<32x4xf32, "UB">
// CHECK:         scf.for %o = %c0 to %c3 step %c1 {
// CHECK:           scf.for %k = %c0 to %c320 step %c32 {
// CHECK:             %at = arith.minsi %k, %c268 : index
// CHECK:             tile.copy_flat %i[{{.*}}] to %idx_ub[%c0] {count = 128 : i64}
// CHECK:             scf.for %j = %c0 to %c8400 step %c4200 {
// CHECK:               tile.copy_flat %x[{{.*}}] to %block_ub[%c0] {count = 16800 : i64}
// CHECK:               tile.gather_rows %block_ub[%j], %idx_ub to %rows_ub {bound = 8400 : i64}
// CHECK:             }
// CHECK:             tile.copy_flat %rows_ub[%c0] to %y_out[{{.*}}] {count = 128 : i64}
// CHECK:           } {tile.parallel}
// CHECK:         } {tile.parallel}
