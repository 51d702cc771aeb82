// RUN: tilegraph-opt %s -p split-cores | filecheck %s
// RUN: tilegraph-opt %s -p split-cores | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p split-cores --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// split-cores on kernels of several top-level nests, test preset: 4 vector cores.
//
// @regions: two nests (a split's outputs, say) that read only %in and write their own
// outputs: each nest's loop is shared out on its own, both from the one block index and
// count, so that no block runs a whole nest the others repeat. The launch gets
// min(4, max(6, 3)) = 4 blocks.
//
// @one_tile: the second nest is one tile in a parallel loop of one trip (a region of one
// tile, as the data-movement and concat strategies fence it): shared out too, its trip goes
// to block 0 alone instead of every block storing the same tile.
//
// @passes: the second nest reads %mid, which the first writes: block b's second nest could
// read rows another block has not written yet, so only the first nest is shared out and
// the second runs whole in every block (as before: one work loop per kernel).
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @main(%x: memref<6x8xf32, "GM">, %a: memref<6x8xf32, "GM">, %b: memref<3x8xf32, "GM">) {
    tile.launch @regions(%x, %a, %b) : memref<6x8xf32, "GM">, memref<6x8xf32, "GM">, memref<3x8xf32, "GM">
    tile.launch @passes(%x, %a, %b) : memref<6x8xf32, "GM">, memref<6x8xf32, "GM">, memref<3x8xf32, "GM">
    tile.launch @one_tile(%x, %a, %b) : memref<6x8xf32, "GM">, memref<6x8xf32, "GM">, memref<3x8xf32, "GM">
    func.return
  }
  func.func @regions(%in: memref<6x8xf32, "GM">, %out0: memref<6x8xf32, "GM">, %out1: memref<3x8xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 9 : i64} {
    %t_ub = tile.alloc : memref<1x8xf32, "UB">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c6 = arith.constant 6 : index
    scf.for %i = %c0 to %c6 step %c1 {
      tile.copy %in[%i, %c0] to %t_ub[%c0, %c0] : memref<6x8xf32, "GM"> to memref<1x8xf32, "UB">
      tile.copy %t_ub[%c0, %c0] to %out0[%i, %c0] : memref<1x8xf32, "UB"> to memref<6x8xf32, "GM">
    } {tile.parallel}
    scf.for %j = %c0 to %c3 step %c1 {
      tile.copy %in[%j, %c0] to %t_ub[%c0, %c0] : memref<6x8xf32, "GM"> to memref<1x8xf32, "UB">
      tile.copy %t_ub[%c0, %c0] to %out1[%j, %c0] : memref<1x8xf32, "UB"> to memref<3x8xf32, "GM">
    } {tile.parallel}
    func.return
  }
  func.func @one_tile(%in: memref<6x8xf32, "GM">, %out0: memref<6x8xf32, "GM">, %out1: memref<3x8xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 7 : i64} {
    %t_ub = tile.alloc : memref<1x8xf32, "UB">
    %w_ub = tile.alloc : memref<3x8xf32, "UB">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    scf.for %i = %c0 to %c6 step %c1 {
      tile.copy %in[%i, %c0] to %t_ub[%c0, %c0] : memref<6x8xf32, "GM"> to memref<1x8xf32, "UB">
      tile.copy %t_ub[%c0, %c0] to %out0[%i, %c0] : memref<1x8xf32, "UB"> to memref<6x8xf32, "GM">
    } {tile.parallel}
    scf.for %r = %c0 to %c1 step %c1 {
      tile.copy %in[%c0, %c0] to %w_ub[%c0, %c0] : memref<6x8xf32, "GM"> to memref<3x8xf32, "UB">
      tile.copy %w_ub[%c0, %c0] to %out1[%c0, %c0] : memref<3x8xf32, "UB"> to memref<3x8xf32, "GM">
    } {tile.parallel}
    func.return
  }
  func.func @passes(%in: memref<6x8xf32, "GM">, %mid: memref<6x8xf32, "GM">, %out: memref<3x8xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 9 : i64} {
    %t_ub = tile.alloc : memref<1x8xf32, "UB">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c6 = arith.constant 6 : index
    scf.for %i = %c0 to %c6 step %c1 {
      tile.copy %in[%i, %c0] to %t_ub[%c0, %c0] : memref<6x8xf32, "GM"> to memref<1x8xf32, "UB">
      tile.copy %t_ub[%c0, %c0] to %mid[%i, %c0] : memref<1x8xf32, "UB"> to memref<6x8xf32, "GM">
    } {tile.parallel}
    scf.for %j = %c0 to %c3 step %c1 {
      tile.copy %mid[%j, %c0] to %t_ub[%c0, %c0] : memref<6x8xf32, "GM"> to memref<1x8xf32, "UB">
      tile.copy %t_ub[%c0, %c0] to %out[%j, %c0] : memref<1x8xf32, "UB"> to memref<3x8xf32, "GM">
    } {tile.parallel}
    func.return
  }
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    tile.launch @regions(%x, %a, %b) {blocks = 4 : i64}
// CHECK-NEXT:    tile.launch @passes(%x, %a, %b) {blocks = 4 : i64}
// CHECK-NEXT:    tile.launch @one_tile(%x, %a, %b) {blocks = 4 : i64}
// CHECK-LABEL: func.func @regions(
// CHECK-NEXT:    %[[B:.+]] = tile.block_idx
// CHECK-NEXT:    %[[N:.+]] = tile.block_num
// CHECK-NOT:     tile.block_idx
// CHECK:         scf.for %i = %[[B]] to %c6 step %[[N]] {
// CHECK:         } {tile.parallel}
// CHECK-NEXT:    scf.for %j = %[[B]] to %c3 step %[[N]] {
// CHECK-LABEL: func.func @one_tile(
// CHECK-NEXT:    %[[B1:.+]] = tile.block_idx
// CHECK-NEXT:    %[[N1:.+]] = tile.block_num
// CHECK:         scf.for %i = %[[B1]] to %c6 step %[[N1]] {
// CHECK:         } {tile.parallel}
// CHECK-NEXT:    scf.for %r = %[[B1]] to %c1 step %[[N1]] {
// CHECK-LABEL: func.func @passes(
// CHECK-NEXT:    %[[B2:.+]] = tile.block_idx
// CHECK-NEXT:    %[[N2:.+]] = tile.block_num
// CHECK:         scf.for %i = %[[B2]] to %c6 step %[[N2]] {
// CHECK:         } {tile.parallel}
// CHECK-NEXT:    scf.for %j = %c0 to %c3 step %c1 {

// STATS: split-cores
// STATS-DAG: split-kernels{{.*}}3
// STATS-DAG: split-sibling-nests{{.*}}2
