// RUN: tilegraph-opt %s --split-input-file -p multi-buffer | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p multi-buffer --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// multi-buffer on hand-written kernels (test preset: UB 8 KiB): which loads it marks when
// the scope cannot hold every extra slot, the per-kernel switch, and the loads it leaves.

// ---- the costlier load wins the room --------------------------------------------------------
// UB: %w_ub 512 B (loaded once, before the loop: not a candidate), %big_ub 2048 B (a 2 KiB
// load, read by V), %small_ub 1536 B (a 1.5 KiB load, stored by MTE3), %out_ub 2048 B:
// 6144 B. Doubling %big_ub fills UB exactly (8192 B); doubling %small_ub as well would need
// 9728 B. %big_ub's load costs more, so it gets the slots and %small_ub is skipped (taken
// the other way round, %small_ub would fit and then %big_ub would not).
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @prefer_costly(%w: memref<1x128xf32, "GM">, %x: memref<16x128xf32, "GM">, %y: memref<1536xf32, "GM">, %out: memref<16x128xf32, "GM">, %out2: memref<1536xf32, "GM">) attributes {tile.kernel = "vector"} {
    %w_ub = tile.alloc : memref<1x128xf32, "UB">
    %big_ub = tile.alloc : memref<4x128xf32, "UB">
    %small_ub = tile.alloc : memref<384xf32, "UB">
    %out_ub = tile.alloc : memref<4x128xf32, "UB">
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c96 = arith.constant 96 : index
    tile.copy %w[%c0, %c0] to %w_ub[%c0, %c0] : memref<1x128xf32, "GM"> to memref<1x128xf32, "UB">
    scf.for %i = %c0 to %c16 step %c4 {
      tile.copy %x[%i, %c0] to %big_ub[%c0, %c0] : memref<16x128xf32, "GM"> to memref<4x128xf32, "UB">
      tile.vmul %big_ub, %w_ub to %out_ub : memref<4x128xf32, "UB">, memref<1x128xf32, "UB"> to memref<4x128xf32, "UB">
      tile.copy %out_ub[%c0, %c0] to %out[%i, %c0] : memref<4x128xf32, "UB"> to memref<16x128xf32, "GM">
      %j = arith.muli %i, %c96 : index
      tile.copy_flat %y[%j] to %small_ub[%c0] {count = 384 : i64} : memref<1536xf32, "GM"> to memref<384xf32, "UB">
      tile.copy_flat %small_ub[%c0] to %out2[%j] {count = 384 : i64} : memref<384xf32, "UB"> to memref<1536xf32, "GM">
    }
    func.return
  }
}
// CHECK-LABEL: func.func @prefer_costly(
// CHECK-NEXT:    %w_ub = tile.alloc : memref<1x128xf32, "UB">
// CHECK-NEXT:    %big_ub = tile.alloc {multi_buffer = 2 : i64} : memref<4x128xf32, "UB">
// CHECK-NEXT:    %small_ub = tile.alloc : memref<384xf32, "UB">
// CHECK-NEXT:    %out_ub = tile.alloc : memref<4x128xf32, "UB">

// STATS:      multi-buffer (ran 1x)
// STATS-NEXT:   candidates        2
// STATS-NEXT:   marked            1
// STATS-NEXT:   skipped-capacity  1

// -----

// ---- switched off for one kernel -------------------------------------------------------------
// `tile.multi_buffer = 1` on the kernel overrides the pass option: nothing is marked.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @off(%x: memref<16x128xf32, "GM">, %out: memref<16x128xf32, "GM">) attributes {tile.kernel = "vector", tile.multi_buffer = 1 : i64} {
    %a_ub = tile.alloc : memref<4x128xf32, "UB">
    %b_ub = tile.alloc : memref<4x128xf32, "UB">
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    scf.for %i = %c0 to %c16 step %c4 {
      tile.copy %x[%i, %c0] to %a_ub[%c0, %c0] : memref<16x128xf32, "GM"> to memref<4x128xf32, "UB">
      tile.vexp %a_ub to %b_ub : memref<4x128xf32, "UB"> to memref<4x128xf32, "UB">
      tile.copy %b_ub[%c0, %c0] to %out[%i, %c0] : memref<4x128xf32, "UB"> to memref<16x128xf32, "GM">
    }
    func.return
  }
}
// CHECK-LABEL: func.func @off(
// CHECK-SAME:    tile.multi_buffer = 1 : i64
// CHECK-NOT:     {multi_buffer
// CHECK:         func.return

// STATS:      multi-buffer (ran 1x)
// STATS-NEXT:   kernels-off  1

// -----

// ---- loads that slots would break or not help -----------------------------------------------
// %carried_ub is read before it is loaded in the loop body (the load prepares the next
// iteration: with two slots, that iteration would read the other slot). %after_ub is
// loaded in a loop but read after it (no loop holds all its uses: no slot loop). %once_ub's
// loop runs once. %dead_ub is loaded but no other pipe reads it. None is marked.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @not_candidates(%x: memref<16x128xf32, "GM">, %out: memref<16x128xf32, "GM">) attributes {tile.kernel = "vector"} {
    %carried_ub = tile.alloc : memref<4x128xf32, "UB">
    %after_ub = tile.alloc : memref<4x128xf32, "UB">
    %once_ub = tile.alloc : memref<4x128xf32, "UB">
    %dead_ub = tile.alloc : memref<4x128xf32, "UB">
    %r_ub = tile.alloc : memref<4x128xf32, "UB">
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    scf.for %i = %c0 to %c16 step %c4 {
      tile.vexp %carried_ub to %r_ub : memref<4x128xf32, "UB"> to memref<4x128xf32, "UB">
      tile.copy %r_ub[%c0, %c0] to %out[%i, %c0] : memref<4x128xf32, "UB"> to memref<16x128xf32, "GM">
      %next = arith.addi %i, %c4 : index
      tile.copy %x[%next, %c0] to %carried_ub[%c0, %c0] : memref<16x128xf32, "GM"> to memref<4x128xf32, "UB">
      tile.copy %x[%i, %c0] to %dead_ub[%c0, %c0] : memref<16x128xf32, "GM"> to memref<4x128xf32, "UB">
    }
    scf.for %i = %c0 to %c16 step %c4 {
      tile.copy %x[%i, %c0] to %after_ub[%c0, %c0] : memref<16x128xf32, "GM"> to memref<4x128xf32, "UB">
    }
    tile.vexp %after_ub to %r_ub : memref<4x128xf32, "UB"> to memref<4x128xf32, "UB">
    scf.for %i = %c0 to %c4 step %c4 {
      tile.copy %x[%i, %c0] to %once_ub[%c0, %c0] : memref<16x128xf32, "GM"> to memref<4x128xf32, "UB">
      tile.vexp %once_ub to %r_ub : memref<4x128xf32, "UB"> to memref<4x128xf32, "UB">
    }
    func.return
  }
}
// CHECK-LABEL: func.func @not_candidates(
// CHECK-NOT:     {multi_buffer
// CHECK:         func.return

// STATS:      multi-buffer (ran 1x)
// STATS-NEXT:   (nothing to report)
