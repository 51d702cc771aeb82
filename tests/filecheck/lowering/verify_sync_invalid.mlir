// RUN: tilegraph-opt %s -p verify-sync --split-input-file --verify-diagnostics | filecheck %s
// RUN: not tilegraph-opt %s -p verify-sync --split-input-file 2>&1 | filecheck %s --check-prefix=CLI
// RUN: tilegraph-opt %s -p 'verify-sync{max-trips=2}' --split-input-file --verify-diagnostics | filecheck %s
// RUN: not tilegraph-opt %s -p 'verify-sync{max-trips=-1}' 2>&1 | filecheck %s --check-prefix=BAD

// A negative walk length is refused before any kernel is read:
// BAD: error: pass 'verify-sync': max-trips must be 0 (every iteration) or more, got -1

// What verify-sync refuses: kernels whose flags do not order what their pipes do. The
// add + relu kernel of inject_sync.mlir (tiled by two rows on the test preset), each
// chunk with one piece of its synchronisation removed. One message per chunk, naming the
// pass, the kernel and what is unordered; from the command line one `error:` line and a
// non-zero exit code.

// The wait for V -> MTE3 removed: nothing holds the store back, so MTE3 runs ahead into
// its next row and raises MTE3 -> V again before V has taken the first.
builtin.module attributes {tilegraph.target = {platform = "test", precision = "origin"}} {
  func.func @add_relu(%in: memref<64x100xf32, "GM">, %in2: memref<64x100xf32, "GM">, %out: memref<64x100xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 32 : i64, tile.ops = "graph.add,graph.relu"} {
    %a_ub = tile.alloc : memref<2x100xf32, "UB">
    %b_ub = tile.alloc : memref<2x100xf32, "UB">
    %c_ub = tile.alloc : memref<2x100xf32, "UB">
    %d_ub = tile.alloc : memref<2x100xf32, "UB">
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c2 = arith.constant 2 : index
    tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
    tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
    scf.for %i0 = %c0 to %c64 step %c2 {
      tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
      tile.copy %in[%i0, %c0] to %a_ub[%c0, %c0] : memref<64x100xf32, "GM"> to memref<2x100xf32, "UB">
      tile.copy %in2[%i0, %c0] to %b_ub[%c0, %c0] : memref<64x100xf32, "GM"> to memref<2x100xf32, "UB">
      tile.set_flag {src = "MTE2", dst = "V", event = 0 : i64}
      tile.wait_flag {src = "MTE2", dst = "V", event = 0 : i64}
      tile.vadd %a_ub, %b_ub to %c_ub : memref<2x100xf32, "UB">, memref<2x100xf32, "UB"> to memref<2x100xf32, "UB">
      tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
      tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
      tile.pipe_barrier {pipe = "V"}
      tile.vrelu %c_ub to %d_ub : memref<2x100xf32, "UB"> to memref<2x100xf32, "UB">
      tile.set_flag {src = "V", dst = "MTE3", event = 0 : i64}
      tile.copy %d_ub[%c0, %c0] to %out[%i0, %c0] : memref<2x100xf32, "UB"> to memref<64x100xf32, "GM">
      tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
    } {tile.parallel}
    tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
    tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
    func.return
  }
}
// CHECK: verify-sync: @add_relu: event 0 of MTE3 -> V raised again before it was awaited
// CLI: error: pass 'verify-sync': @add_relu: event 0 of MTE3 -> V raised again before it was awaited
// CLI-NOT: Traceback

// -----

// The V barrier removed: the relu reads the add's result with nothing between them.
builtin.module attributes {tilegraph.target = {platform = "test", precision = "origin"}} {
  func.func @add_relu(%in: memref<64x100xf32, "GM">, %in2: memref<64x100xf32, "GM">, %out: memref<64x100xf32, "GM">) attributes {tile.kernel = "vector", tile.tiles = 32 : i64, tile.ops = "graph.add,graph.relu"} {
    %a_ub = tile.alloc : memref<2x100xf32, "UB">
    %b_ub = tile.alloc : memref<2x100xf32, "UB">
    %c_ub = tile.alloc : memref<2x100xf32, "UB">
    %d_ub = tile.alloc : memref<2x100xf32, "UB">
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c2 = arith.constant 2 : index
    tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
    tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
    scf.for %i0 = %c0 to %c64 step %c2 {
      tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
      tile.copy %in[%i0, %c0] to %a_ub[%c0, %c0] : memref<64x100xf32, "GM"> to memref<2x100xf32, "UB">
      tile.copy %in2[%i0, %c0] to %b_ub[%c0, %c0] : memref<64x100xf32, "GM"> to memref<2x100xf32, "UB">
      tile.set_flag {src = "MTE2", dst = "V", event = 0 : i64}
      tile.wait_flag {src = "MTE2", dst = "V", event = 0 : i64}
      tile.vadd %a_ub, %b_ub to %c_ub : memref<2x100xf32, "UB">, memref<2x100xf32, "UB"> to memref<2x100xf32, "UB">
      tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
      tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
      tile.vrelu %c_ub to %d_ub : memref<2x100xf32, "UB"> to memref<2x100xf32, "UB">
      tile.set_flag {src = "V", dst = "MTE3", event = 0 : i64}
      tile.wait_flag {src = "V", dst = "MTE3", event = 0 : i64}
      tile.copy %d_ub[%c0, %c0] to %out[%i0, %c0] : memref<2x100xf32, "UB"> to memref<64x100xf32, "GM">
      tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
    } {tile.parallel}
    tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
    tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
    func.return
  }
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: verify-sync: @add_relu: 'tile.vrelu' on V reads %c_ub (slot 0) written by 'tile.vadd' on V without waiting for it
