// RUN: tilegraph-opt %s -p plan-local-memory --split-input-file --verify-diagnostics | filecheck %s
// RUN: not tilegraph-opt %s -p plan-local-memory --split-input-file 2>&1 | filecheck %s --check-prefix=CLI

// What plan-local-memory refuses: buffers that do not fit their scope when live together
// (each one alone passes the tile.alloc verifier). One message per chunk, naming the
// kernel, the scope, the bytes needed and held, and the buffers live at the peak; from the
// command line one `error:` line and a non-zero exit code.

// Three UB buffers of 3000 B (3008 B aligned) live in the same loop: 9024 B > 8 KiB.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @three_tiles(%x: memref<750x8xf32, "GM">, %out: memref<750x8xf32, "GM">) attributes {tile.kernel = "vector"} {
    %a_ub = tile.alloc : memref<750xf32, "UB">
    %b_ub = tile.alloc : memref<750xf32, "UB">
    %c_ub = tile.alloc : memref<750xf32, "UB">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %i = %c0 to %c8 step %c1 {
      tile.copy_flat %x[%i] to %a_ub[%c0] {count = 750 : i64} : memref<750x8xf32, "GM"> to memref<750xf32, "UB">
      tile.vexp %a_ub to %b_ub : memref<750xf32, "UB"> to memref<750xf32, "UB">
      tile.vadd %a_ub, %b_ub to %c_ub : memref<750xf32, "UB">, memref<750xf32, "UB"> to memref<750xf32, "UB">
      tile.copy_flat %c_ub[%c0] to %out[%i] {count = 750 : i64} : memref<750xf32, "UB"> to memref<750x8xf32, "GM">
    }
    func.return
  }
}
// CHECK: plan-local-memory: @three_tiles: UB needs 9024 B but holds 8192 B on test; live at the peak: %a_ub (3000 B), %b_ub (3000 B), %c_ub (3000 B)
// CLI: error: pass 'plan-local-memory': @three_tiles: UB needs 9024 B but holds 8192 B on test; live at the peak: %a_ub (3000 B), %b_ub (3000 B), %c_ub (3000 B)
// CLI-NOT: Traceback

// -----

// A multi-buffered L0A buffer of 3 KiB: two slots need 6 KiB of the 4 KiB.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @double_l0a(%l1: memref<2x3x16x8xf32, "L1">, %b: memref<3x2x16x8xf32, "L0B">, %c: memref<2x2x16x16xf32, "L0C">) attributes {tile.kernel = "cube"} {
    %a_l0a = tile.alloc {multi_buffer = 2 : i64} : memref<2x3x16x8xf32, "L0A">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %true = arith.constant true
    scf.for %i = %c0 to %c4 step %c1 {
      tile.load2d %l1[%c0, %c0] to %a_l0a {mode = "copy"} : memref<2x3x16x8xf32, "L1"> to memref<2x3x16x8xf32, "L0A">
      tile.mmad %a_l0a, %b, %c, %true : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
    }
    func.return
  }
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: plan-local-memory: @double_l0a: L0A needs 6144 B but holds 4096 B on test; live at the peak: %a_l0a (2 slots x 3072 B)
