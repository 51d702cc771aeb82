// RUN: tilegraph-opt %s -p verify-sync --pass-statistics 2>&1 | filecheck %s

// verify-sync accepts the add + relu kernel as inject-sync synchronised it
// (inject_sync.mlir) and changes nothing: the pipe-queue checker finds every dependence
// ordered, on every block of the kernel's launches.

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
      tile.wait_flag {src = "V", dst = "MTE3", event = 0 : i64}
      tile.copy %d_ub[%c0, %c0] to %out[%i0, %c0] : memref<2x100xf32, "UB"> to memref<64x100xf32, "GM">
      tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
    } {tile.parallel}
    tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
    tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
    func.return
  }
}

// CHECK:      verify-sync (ran 1x)
// CHECK-NEXT:   kernels  1
// CHECK:      func.func @add_relu(
// CHECK:        tile.wait_flag {src = "MTE2", dst = "V", event = 0 : i64}
// CHECK-NEXT:   tile.vadd
