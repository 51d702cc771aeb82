// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics | filecheck %s

// tile.fixpipe's conversions (FIXPIPE_CONVERSIONS): an i32 accumulator leaves as i32, or
// with a deq scale (N1·16 f32/f16 values in L1) as f32 or f16, or requantised as i8 (an
// nd matrix, or an nc1hwc0 destination of C0 = 32, with its zero point); an f32 one as
// f32, f16 or bf16 without a deq scale. One located message per chunk; the legal forms round-trip.

func.func @deq(%c: memref<2x1x16x16xi32, "L0C">, %o: memref<1x2x4x4x16xf16, "GM">, %b: memref<1x2x1x1x16xi32, "L1">, %s: memref<1x2x1x1x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] bias %b : memref<1x2x1x1x16xi32, "L1"> deq %s : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", rows = 4 : i64} : memref<2x1x16x16xi32, "L0C"> to memref<1x2x4x4x16xf16, "GM">
  func.return
}
// CHECK: tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] bias %b : memref<1x2x1x1x16xi32, "L1"> deq %s : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", rows = 4 : i64} : memref<2x1x16x16xi32, "L0C"> to memref<1x2x4x4x16xf16, "GM">

// -----

func.func @requant(%c: memref<2x1x16x16xi32, "L0C">, %o: memref<1x1x4x4x32xi8, "GM">, %s: memref<1x2x1x1x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] deq %s : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", relu = true, rows = 4 : i64, zero_point = -3 : i64} : memref<2x1x16x16xi32, "L0C"> to memref<1x1x4x4x32xi8, "GM">
  func.return
}
// CHECK: tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] deq %s : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", relu = true, rows = 4 : i64, zero_point = -3 : i64} : memref<2x1x16x16xi32, "L0C"> to memref<1x1x4x4x32xi8, "GM">

// -----

func.func @zero_point_into_f16(%c: memref<2x1x16x16xi32, "L0C">, %o: memref<1x2x4x4x16xf16, "GM">, %s: memref<1x2x1x1x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] deq %s : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", rows = 4 : i64, zero_point = 1 : i64} : memref<2x1x16x16xi32, "L0C"> to memref<1x2x4x4x16xf16, "GM">
  func.return
}
// CHECK: {{.*}}fixpipe_deq.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @zero_point_into_f16: 'tile.fixpipe': a zero point needs an i8 destination

// -----

func.func @i32_to_f32_without_deq(%c: memref<1x1x16x16xi32, "L0C">, %g: memref<16x16xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] {layout = "nd"} : memref<1x1x16x16xi32, "L0C"> to memref<16x16xf32, "GM">
  func.return
}
// CHECK: {{.*}}fixpipe_deq.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @i32_to_f32_without_deq: 'tile.fixpipe': an i32 accumulator without a deq scale leaves as i32, not f32

// -----

func.func @i32_to_i8_nd(%c: memref<1x1x16x16xi32, "L0C">, %g: memref<16x16xi8, "GM">, %s: memref<16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] deq %s : memref<16xf32, "L1"> {layout = "nd", zero_point = 5 : i64} : memref<1x1x16x16xi32, "L0C"> to memref<16x16xi8, "GM">
  func.return
}
// A requantised matmul writes its int8 result as an ND matrix.
// CHECK: tile.fixpipe %c to %g[%c0, %c0] deq %s : memref<16xf32, "L1"> {layout = "nd", zero_point = 5 : i64} : memref<1x1x16x16xi32, "L0C"> to memref<16x16xi8, "GM">

// -----

func.func @i32_to_i8_nz(%c: memref<1x1x16x16xi32, "L0C">, %g: memref<1x1x16x16xi8, "GM">, %s: memref<16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0, %c0, %c0] deq %s : memref<16xf32, "L1"> {layout = "nz"} : memref<1x1x16x16xi32, "L0C"> to memref<1x1x16x16xi8, "GM">
  func.return
}
// CHECK: {{^// -+$}}
// CHECK-NEXT: {{.*}}fixpipe_deq.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @i32_to_i8_nz: 'tile.fixpipe': an i8 result is written as nd, or as nc1hwc0 with C0 = 32, not nz with 16 lanes

// -----

func.func @f32_with_deq(%c: memref<1x1x16x16xf32, "L0C">, %g: memref<16x16xf32, "GM">, %s: memref<16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] deq %s : memref<16xf32, "L1"> {layout = "nd"} : memref<1x1x16x16xf32, "L0C"> to memref<16x16xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}fixpipe_deq.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @f32_with_deq: 'tile.fixpipe': an f32 accumulator with a deq scale leaves as nothing, not f32

// -----

func.func @deq_too_short(%c: memref<2x1x16x16xi32, "L0C">, %g: memref<16x32xf32, "GM">, %s: memref<16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] deq %s : memref<16xf32, "L1"> {layout = "nd"} : memref<2x1x16x16xi32, "L0C"> to memref<16x32xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}fixpipe_deq.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @deq_too_short: 'tile.fixpipe': the deq scale holds 16 values, the accumulator has 32 columns

// -----

func.func @deq_in_ub(%c: memref<1x1x16x16xi32, "L0C">, %g: memref<16x16xf32, "GM">, %s: memref<16xf32, "UB">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] deq %s : memref<16xf32, "UB"> {layout = "nd"} : memref<1x1x16x16xi32, "L0C"> to memref<16x16xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}fixpipe_deq.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @deq_in_ub: 'tile.fixpipe': the deq scale must be in L1, but it is in UB
