// RUN: tilegraph-opt %s -p verify-sync --split-input-file --verify-diagnostics | filecheck %s
// RUN: not tilegraph-opt %s -p verify-sync --split-input-file 2>&1 | filecheck %s --check-prefix=CLI

// verify-sync across the blocks of a launch (lowering/analysis/barrier_check.py): a
// vector kernel on two blocks of 310P, each storing its row of %h and then loading all
// of %h (the exchange of a recurrent layer over the cores). Within a block the flags
// order the store before the load; across blocks only an all-core barrier does.

// With the soft barrier between the store and the load: accepted.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "origin"}} {
  func.func @main(%h: memref<2x16xf32, "GM">, %out: memref<4x16xf32, "GM">, %ws: memref<16xi32, "GM">) {
    tile.launch @exchange(%h, %out, %ws) {blocks = 2 : i64} : memref<2x16xf32, "GM">, memref<4x16xf32, "GM">, memref<16xi32, "GM">
    func.return
  }
  func.func @exchange(%h: memref<2x16xf32, "GM">, %out: memref<4x16xf32, "GM">, %ws: memref<16xi32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 1 : i64, tile.blocks = 2 : i64} {
    %c0 = arith.constant 0 : index
    %block = tile.block_idx
    %c2 = arith.constant 2 : index
    %two = arith.muli %block, %c2 : index
    %row = tile.alloc : memref<1x16xf32, "UB">
    %all = tile.alloc : memref<2x16xf32, "UB">
    %ub_ws = tile.alloc : memref<16xi32, "UB">
    tile.copy %row[%c0, %c0] to %h[%block, %c0] : memref<1x16xf32, "UB"> to memref<2x16xf32, "GM">
    tile.sync_all %ws, %ub_ws : memref<16xi32, "GM">, memref<16xi32, "UB"> {mode = "soft", cores = "all"}
    tile.set_flag {src = "MTE3", dst = "MTE2", event = 0 : i64}
    tile.wait_flag {src = "MTE3", dst = "MTE2", event = 0 : i64}
    tile.copy %h[%c0, %c0] to %all[%c0, %c0] : memref<2x16xf32, "GM"> to memref<2x16xf32, "UB">
    tile.set_flag {src = "MTE2", dst = "MTE3", event = 0 : i64}
    tile.wait_flag {src = "MTE2", dst = "MTE3", event = 0 : i64}
    tile.copy %all[%c0, %c0] to %out[%two, %c0] : memref<2x16xf32, "UB"> to memref<4x16xf32, "GM">
    func.return
  }
}
// CHECK: func.func @exchange

// -----

// The barrier removed: block 1 may load block 0's row before block 0 has stored it.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "origin"}} {
  func.func @main(%h: memref<2x16xf32, "GM">, %out: memref<4x16xf32, "GM">) {
    tile.launch @exchange(%h, %out) {blocks = 2 : i64} : memref<2x16xf32, "GM">, memref<4x16xf32, "GM">
    func.return
  }
  func.func @exchange(%h: memref<2x16xf32, "GM">, %out: memref<4x16xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 1 : i64, tile.blocks = 2 : i64} {
    %c0 = arith.constant 0 : index
    %block = tile.block_idx
    %c2 = arith.constant 2 : index
    %two = arith.muli %block, %c2 : index
    %row = tile.alloc : memref<1x16xf32, "UB">
    %all = tile.alloc : memref<2x16xf32, "UB">
    tile.copy %row[%c0, %c0] to %h[%block, %c0] : memref<1x16xf32, "UB"> to memref<2x16xf32, "GM">
    tile.set_flag {src = "MTE3", dst = "MTE2", event = 0 : i64}
    tile.wait_flag {src = "MTE3", dst = "MTE2", event = 0 : i64}
    tile.copy %h[%c0, %c0] to %all[%c0, %c0] : memref<2x16xf32, "GM"> to memref<2x16xf32, "UB">
    tile.set_flag {src = "MTE2", dst = "MTE3", event = 0 : i64}
    tile.wait_flag {src = "MTE2", dst = "MTE3", event = 0 : i64}
    tile.copy %all[%c0, %c0] to %out[%two, %c0] : memref<2x16xf32, "UB"> to memref<4x16xf32, "GM">
    func.return
  }
}
// CHECK:      verify-sync: @exchange: block 1 reads GM %h that block 0 writes, with no all-core barrier (tile.sync_all) between them
// CHECK-NEXT:   writer (block 0): tile.copy %row[%c0, %c0] to %h[%block, %c0]
// CHECK-NEXT:   reader (block 1): tile.copy %h[%c0, %c0] to %all[%c0, %c0]
// CLI: error: pass 'verify-sync': @exchange: block 1 reads GM %h that block 0 writes, with no all-core barrier (tile.sync_all) between them
// CLI-NOT: Traceback
