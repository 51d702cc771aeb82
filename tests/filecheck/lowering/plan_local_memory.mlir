// RUN: tilegraph-opt %s --split-input-file -p plan-local-memory | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p plan-local-memory,plan-local-memory | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p plan-local-memory | tilegraph-opt --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p plan-local-memory --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// plan-local-memory on hand-written tiled kernels (test preset: UB 8 KiB, L0A 4 KiB, ...).
// Every on-chip buffer gets `address` (and `addresses`, one per slot, when multi-buffered);
// each kernel records its use per scope. Planning twice gives the same plan; the planned IR
// parses back.

// ---- two loop nests: the second reuses the first one's UB ----------------------------------
// %s_ub (1x100xf32: 400 B, 416 B with the 32 B alignment) is loaded before both nests and
// read in both: live throughout. %a_ub and %b_ub (800 B each) live in the first nest only,
// %c_ub and %d_ub (1600 B each) in the second: the second nest's buffers take the first
// nest's bytes. Peak = %s + %c + %d = 416 + 3200 = 3616 B, the most live at once.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @two_nests(%s: memref<1x100xf32, "GM">, %x: memref<64x100xf32, "GM">, %y: memref<64x100xf32, "GM">, %out: memref<64x100xf32, "GM">, %out2: memref<64x100xf32, "GM">) attributes {tile.kernel = "vector"} {
    %s_ub = tile.alloc : memref<1x100xf32, "UB">
    %a_ub = tile.alloc : memref<2x100xf32, "UB">
    %b_ub = tile.alloc : memref<2x100xf32, "UB">
    %c_ub = tile.alloc : memref<4x100xf32, "UB">
    %d_ub = tile.alloc : memref<4x100xf32, "UB">
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c64 = arith.constant 64 : index
    tile.copy %s[%c0, %c0] to %s_ub[%c0, %c0] : memref<1x100xf32, "GM"> to memref<1x100xf32, "UB">
    scf.for %i = %c0 to %c64 step %c2 {
      tile.copy %x[%i, %c0] to %a_ub[%c0, %c0] : memref<64x100xf32, "GM"> to memref<2x100xf32, "UB">
      tile.vadd %a_ub, %s_ub to %b_ub : memref<2x100xf32, "UB">, memref<1x100xf32, "UB"> to memref<2x100xf32, "UB">
      tile.copy %b_ub[%c0, %c0] to %out[%i, %c0] : memref<2x100xf32, "UB"> to memref<64x100xf32, "GM">
    }
    scf.for %j = %c0 to %c64 step %c4 {
      tile.copy %y[%j, %c0] to %c_ub[%c0, %c0] : memref<64x100xf32, "GM"> to memref<4x100xf32, "UB">
      tile.vadd %c_ub, %s_ub to %d_ub : memref<4x100xf32, "UB">, memref<1x100xf32, "UB"> to memref<4x100xf32, "UB">
      tile.copy %d_ub[%c0, %c0] to %out2[%j, %c0] : memref<4x100xf32, "UB"> to memref<64x100xf32, "GM">
    }
    func.return
  }
}
// CHECK-LABEL: func.func @two_nests(
// CHECK-SAME:    tile.local_memory = {UB = 3616 : i64}
// CHECK-NEXT:    %s_ub = tile.alloc {address = 3200 : i64} : memref<1x100xf32, "UB">
// CHECK-NEXT:    %a_ub = tile.alloc {address = 0 : i64} : memref<2x100xf32, "UB">
// CHECK-NEXT:    %b_ub = tile.alloc {address = 800 : i64} : memref<2x100xf32, "UB">
// CHECK-NEXT:    %c_ub = tile.alloc {address = 0 : i64} : memref<4x100xf32, "UB">
// CHECK-NEXT:    %d_ub = tile.alloc {address = 1600 : i64} : memref<4x100xf32, "UB">

// -----

// ---- a cube K loop with multi-buffered L1 and L0A buffers ----------------------------------
// L0 addresses are multiples of 512 B. %a_l1 and %a_l0a have two slots each (marked by
// hand here; multi-buffer marks them from the loads): two addresses, `address` the first.
// The L0C accumulator and the single-slot buffers get one address.
builtin.module attributes {tilegraph.target = {platform = "test"}} {
  func.func @k_loop(%a: memref<16x64xf32, "GM">, %b: memref<8x1x16x8xf32, "GM">, %c: memref<16x16xf32, "GM">) attributes {tile.kernel = "cube"} {
    %a_l1 = tile.alloc {multi_buffer = 2 : i64} : memref<1x1x16x8xf32, "L1">
    %b_l1 = tile.alloc : memref<1x1x16x8xf32, "L1">
    %a_l0a = tile.alloc {multi_buffer = 2 : i64} : memref<1x1x16x8xf32, "L0A">
    %b_l0b = tile.alloc : memref<1x1x16x8xf32, "L0B">
    %c_l0c = tile.alloc : memref<1x1x16x16xf32, "L0C">
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %first = arith.constant true
    scf.for %k = %c0 to %c8 step %c1 {
      %col = arith.muli %k, %c8 : index
      tile.nd2nz %a[%c0, %col] to %a_l1 : memref<16x64xf32, "GM"> to memref<1x1x16x8xf32, "L1">
      tile.load2d %a_l1[%c0, %c0] to %a_l0a {mode = "swap"} : memref<1x1x16x8xf32, "L1"> to memref<1x1x16x8xf32, "L0A">
      tile.copy %b[%k, %c0, %c0, %c0] to %b_l1[%c0, %c0, %c0, %c0] : memref<8x1x16x8xf32, "GM"> to memref<1x1x16x8xf32, "L1">
      tile.load2d %b_l1[%c0, %c0] to %b_l0b {mode = "copy"} : memref<1x1x16x8xf32, "L1"> to memref<1x1x16x8xf32, "L0B">
      %init = arith.cmpi eq, %k, %c0 : index
      tile.mmad %a_l0a, %b_l0b, %c_l0c, %init : memref<1x1x16x8xf32, "L0A">, memref<1x1x16x8xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
    }
    tile.fixpipe %c_l0c to %c[%c0, %c0] {layout = "nd"} : memref<1x1x16x16xf32, "L0C"> to memref<16x16xf32, "GM">
    func.return
  }
}
// CHECK-LABEL: func.func @k_loop(
// CHECK-SAME:    tile.local_memory = {L1 = 1536 : i64, L0A = 1024 : i64, L0B = 512 : i64, L0C = 1024 : i64}
// CHECK-NEXT:    %a_l1 = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 512>} : memref<1x1x16x8xf32, "L1">
// CHECK-NEXT:    %b_l1 = tile.alloc {address = 1024 : i64} : memref<1x1x16x8xf32, "L1">
// CHECK-NEXT:    %a_l0a = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 512>} : memref<1x1x16x8xf32, "L0A">
// CHECK-NEXT:    %b_l0b = tile.alloc {address = 0 : i64} : memref<1x1x16x8xf32, "L0B">
// CHECK-NEXT:    %c_l0c = tile.alloc {address = 0 : i64} : memref<1x1x16x16xf32, "L0C">

// STATS:      plan-local-memory (ran 1x)
// STATS-NEXT:   kernels          2
// STATS-NEXT:   buffers          10
// STATS-NEXT:   slots            12
// STATS-NEXT:   peak-UB-bytes    3616
// STATS-NEXT:   peak-L1-bytes    1536
// STATS-NEXT:   peak-L0A-bytes   1024
// STATS-NEXT:   peak-L0B-bytes   512
// STATS-NEXT:   peak-L0C-bytes   1024
