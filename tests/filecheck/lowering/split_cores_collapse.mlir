// RUN: tilegraph-opt %s -p split-cores | filecheck %s
// RUN: tilegraph-opt %s -p split-cores,split-cores | filecheck %s
// RUN: tilegraph-opt %s -p split-cores | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p split-cores --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// split-cores on hand-written tiled kernels (its direct input; split_cores.mlir runs
// tile-kernels first), test preset: 4 vector cores.
//
// @grid: a perfect nest of two parallel loops, %m (3 trips) x %n (5 trips). Shared alone,
// %m leaves the busiest of the 4 cores ceil(3/4)/3 = 1/3 of the work and %n ceil(5/4)/5 =
// 2/5; collapsed, the 15 joint iterations leave it ceil(15/4)/15 = 4/15, the least: the nest
// becomes one loop %mn over 0..15 (n = mn rem 5, m = mn floordiv 5: the innermost loop
// varies fastest), and block b of n runs mn = b, b + n, ... (lower bound 0 and step 1: the
// block index and the block count themselves). Its launch runs min(4, 15) = 4 blocks.
//
// @serial: its loop is not tile.parallel (an accumulation, say): nothing to share, one block,
// and its launch gets no block count.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @main(%x: memref<3x5xf32, "GM">, %y: memref<3x5xf32, "GM">) {
    tile.launch @grid(%x, %y) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
    tile.launch @serial(%x, %y) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
    func.return
  }
  func.func @grid(%in: memref<3x5xf32, "GM">, %out: memref<3x5xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 15 : i64} {
    %t_ub = tile.alloc : memref<1x1xf32, "UB">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    scf.for %m = %c0 to %c3 step %c1 {
      scf.for %n = %c0 to %c5 step %c1 {
        tile.copy %in[%m, %n] to %t_ub[%c0, %c0] : memref<3x5xf32, "GM"> to memref<1x1xf32, "UB">
        tile.copy %t_ub[%c0, %c0] to %out[%m, %n] : memref<1x1xf32, "UB"> to memref<3x5xf32, "GM">
      } {tile.parallel}
    } {tile.parallel}
    func.return
  }
  func.func @serial(%in: memref<3x5xf32, "GM">, %out: memref<3x5xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 3 : i64} {
    %t_ub = tile.alloc : memref<1x5xf32, "UB">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %m = %c0 to %c3 step %c1 {
      tile.copy %in[%m, %c0] to %t_ub[%c0, %c0] : memref<3x5xf32, "GM"> to memref<1x5xf32, "UB">
      tile.copy %t_ub[%c0, %c0] to %out[%c0, %c0] : memref<1x5xf32, "UB"> to memref<3x5xf32, "GM">
    }
    func.return
  }
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    tile.launch @grid(%x, %y) {blocks = 4 : i64} :
// CHECK-NEXT:    tile.launch @serial(%x, %y) :
// CHECK-LABEL: func.func @grid(
// CHECK-NEXT:    %[[B:.+]] = tile.block_idx
// CHECK-NEXT:    %[[N:.+]] = tile.block_num
// CHECK-NOT:     tile.block_idx
// CHECK:         %[[UB:.+]] = arith.constant 15 : index
// CHECK-NEXT:    %{{.+}} = arith.constant 1 : index
// CHECK-NEXT:    scf.for %mn = %[[B]] to %[[UB]] step %[[N]] {
// CHECK:           %[[C5:.+]] = arith.constant 5 : index
// CHECK-NEXT:      %n = arith.remsi %mn, %[[C5]] : index
// CHECK-NEXT:      %m = arith.floordivsi %mn, %[[C5]] : index
// CHECK-NEXT:      tile.copy %in[%m, %n] to %t_ub
// CHECK-NEXT:      tile.copy %t_ub[%c0, %c0] to %out[%m, %n]
// CHECK-NEXT:    } {tile.parallel}
// CHECK-NEXT:    func.return
// CHECK-LABEL: func.func @serial(
// CHECK-NOT:     tile.block_idx
// CHECK:         scf.for %m = %c0 to %c3 step %c1 {
// CHECK-NOT:     tile.block_idx
// CHECK:         func.return

// STATS:      split-cores (ran 1x)
// STATS-NEXT:   collapsed-nests       1
// STATS-NEXT:   split-kernels         1
// STATS-NEXT:   blocks                4
// STATS-NEXT:   single-block-kernels  1
