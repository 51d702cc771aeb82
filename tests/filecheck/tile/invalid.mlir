// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of tile ops: each case must fail with exactly the verifier's message.
// (xDSL has no `expected-error` annotations; as in the other *_invalid.mlir tests the
// located messages are checked, one per chunk, in order.)

// A UB buffer above 192 KiB does not fit the default preset (ascend910b).
func.func @ub_too_big() {
  %b = tile.alloc : memref<192x257xf32, "UB">
  func.return
}
// CHECK: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.alloc' (%b) in @ub_too_big: 'tile.alloc': a [192, 257] f32 buffer needs 197376 B, but UB holds 196608 B on ascend910b

// -----

// 16 KiB fits 910B's UB but not the `test` preset's 8 KiB.
module attributes {tilegraph.target = {platform = "test"}} {
  func.func @ub_too_big_for_test() {
    %b = tile.alloc : memref<64x64xf32, "UB">
    func.return
  }
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.alloc' (%b) in @ub_too_big_for_test: 'tile.alloc': a [64, 64] f32 buffer needs 16384 B, but UB holds 8192 B on test

// -----

// An unknown platform name is reported, not crashed on.
module attributes {tilegraph.target = {platform = "gpu"}} {
  func.func @unknown_platform() {
    %b = tile.alloc : memref<4xf32, "UB">
    func.return
  }
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.alloc' (%b) in @unknown_platform: tilegraph.target: unknown platform 'gpu'; valid platforms: ascend910b, ascend310p, test, ascend950

// -----

// L0A is 64 KiB on 910B.
func.func @l0a_too_big() {
  %b = tile.alloc : memref<5x16x16x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.alloc' (%b) in @l0a_too_big: 'tile.alloc': a [5, 16, 16, 16] f32 buffer needs 81920 B, but L0A holds 65536 B on ascend910b

// -----

// Buffers have static shapes.
func.func @dynamic_alloc() {
  %b = tile.alloc : memref<?x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.alloc' (%b) in @dynamic_alloc: 'tile.alloc': buffers have static shapes

// -----

// Constant data must have the buffer's shape.
func.func @constant_shape() {
  %w = tile.constant <f32, [3], [1.0, 2.0, 3.0]> : memref<4xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.constant' (%w) in @constant_shape: 'tile.constant': data of shape [3] for a [4] buffer

// -----

// tile.read: the buffer must hold the tensor.
func.func @read_mismatch(%x: memref<2x4xf32, "GM">) {
  %t = tile.read %x : memref<2x4xf32, "GM"> -> !layout.tensor<4x2xf32>
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.read' (%t) in @read_mismatch: 'tile.read': buffer memref<2x4xf32, "GM"> does not hold tensor !layout.tensor<4x2xf32> (storage shape [4, 2])

// -----

// Vector ops work on UB only.
func.func @vector_in_l1(%a: memref<4x16xf32, "L1">, %b: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vadd %a, %b to %y : memref<4x16xf32, "L1">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vadd' in @vector_in_l1: 'tile.vadd': operand #0 must be in UB, but it is in L1

// -----

func.func @vector_dst_in_gm(%a: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "GM">) {
  tile.vexp %a to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vexp' in @vector_dst_in_gm: 'tile.vexp': operand #1 must be in UB, but it is in GM

// -----

// A binary operand must broadcast to the destination.
func.func @no_broadcast(%a: memref<4x16xf32, "UB">, %b: memref<4x8xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vadd %a, %b to %y : memref<4x16xf32, "UB">, memref<4x8xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vadd' in @no_broadcast: 'tile.vadd': operand [4, 8] does not broadcast to [4, 16]

// -----

func.func @no_broadcast_rank(%a: memref<4x16xf32, "UB">, %b: memref<2x4x16xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vmul %a, %b to %y : memref<4x16xf32, "UB">, memref<2x4x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vmul' in @no_broadcast_rank: 'tile.vmul': operand [2, 4, 16] does not broadcast to [4, 16]

// -----

func.func @unary_no_broadcast(%a: memref<3x16xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vexp %a to %y : memref<3x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vexp' in @unary_no_broadcast: 'tile.vexp': operand [3, 16] does not broadcast to [4, 16]

// -----

func.func @scalar_no_broadcast(%a: memref<4x15xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vadds %a, 1.000000e+00 : f64 to %y : memref<4x15xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vadds' in @scalar_no_broadcast: 'tile.vadds': operand [4, 15] does not broadcast to [4, 16]

// -----

func.func @vsel_no_broadcast(%m: memref<4x16xi1, "UB">, %a: memref<4x16xf32, "UB">, %b: memref<2x16xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vsel %m, %a, %b to %y : memref<4x16xi1, "UB">, memref<4x16xf32, "UB">, memref<2x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vsel' in @vsel_no_broadcast: 'tile.vsel': operand [2, 16] does not broadcast to [4, 16]

// -----

func.func @vcmp_bad_predicate(%a: memref<4x16xf32, "UB">, %m: memref<4x16xi1, "UB">) {
  tile.vcmp %a, %a to %m {predicate = "less"} : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xi1, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vcmp' in @vcmp_bad_predicate: 'tile.vcmp': predicate must be one of ['eq', 'ne', 'lt', 'le', 'gt', 'ge']

// -----

// vreduce: the result keeps (or drops) the reduced dims, nothing else.
func.func @vreduce_shape(%a: memref<4x16xf32, "UB">, %y: memref<4x1xf32, "UB">) {
  tile.vreduce %a to %y {kind = "sum", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<4x1xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vreduce' in @vreduce_shape: 'tile.vreduce': reducing [4, 16] over [0] gives [1, 16] or [16], not [4, 1]

// -----

func.func @vreduce_kind(%a: memref<4x16xf32, "UB">, %y: memref<1x16xf32, "UB">) {
  tile.vreduce %a to %y {kind = "mean", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<1x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vreduce' in @vreduce_kind: 'tile.vreduce': kind must be one of ['sum', 'max', 'min', 'prod']

// -----

// vtranspose: perm must be a permutation mapping the source shape to the result's.
func.func @vtranspose_perm(%a: memref<4x16xf32, "UB">, %y: memref<16x4xf32, "UB">) {
  tile.vtranspose %a to %y {perm = array<i64: 0, 0>} : memref<4x16xf32, "UB"> to memref<16x4xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vtranspose' in @vtranspose_perm: 'tile.vtranspose': perm [0, 0] does not map [4, 16] to [16, 4]

// -----

func.func @vtranspose_shape(%a: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "UB">) {
  tile.vtranspose %a to %y {perm = array<i64: 1, 0>} : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vtranspose' in @vtranspose_shape: 'tile.vtranspose': perm [1, 0] does not map [4, 16] to [4, 16]

// -----

// vstride: the result's elements in steps of the source must stay inside it.
func.func @vstride_past_the_source(%a: memref<4x16xf32, "UB">, %y: memref<3x16xf32, "UB">) {
  tile.vstride %a to %y {steps = array<i64: 2, 1>} : memref<4x16xf32, "UB"> to memref<3x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vstride' in @vstride_past_the_source: 'tile.vstride': dim 0: 3 elements in steps of 2 read past the source's 4

// -----

// vpick: every index inside its dim of the source.
func.func @vpick_past_the_source(%a: memref<4x2xf32, "UB">, %y: memref<2x2xf32, "UB">) {
  tile.vpick %a to %y {indices = array<i64: 0, 4, 1, 0>} : memref<4x2xf32, "UB"> to memref<2x2xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.vpick' in @vpick_past_the_source: 'tile.vpick': dim 0: indices must lie in [0, 4), got [0, 4]

// -----

// mmad: operands in L0A / L0B, accumulator in L0C.
func.func @mmad_from_ub(%a: memref<1x1x16x8xf32, "UB">, %b: memref<1x1x16x8xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x8xf32, "UB">, memref<1x1x16x8xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_from_ub: 'tile.mmad': the left operand must be in L0A, but it is in UB

// -----

func.func @mmad_b_in_l0a(%a: memref<1x1x16x8xf32, "L0A">, %b: memref<1x1x16x8xf32, "L0A">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x8xf32, "L0A">, memref<1x1x16x8xf32, "L0A">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_b_in_l0a: 'tile.mmad': the right operand must be in L0B, but it is in L0A

// -----

func.func @mmad_c_in_ub(%a: memref<1x1x16x8xf32, "L0A">, %b: memref<1x1x16x8xf32, "L0B">, %c: memref<1x1x16x16xf32, "UB">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x8xf32, "L0A">, memref<1x1x16x8xf32, "L0B">, memref<1x1x16x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_c_in_ub: 'tile.mmad': the accumulator must be in L0C, but it is in UB

// -----

// f16 inputs accumulate in f32.
func.func @mmad_f16_acc(%a: memref<1x1x16x16xf16, "L0A">, %b: memref<1x1x16x16xf16, "L0B">, %c: memref<1x1x16x16xf16, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x16xf16, "L0A">, memref<1x1x16x16xf16, "L0B">, memref<1x1x16x16xf16, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_f16_acc: 'tile.mmad': f16 inputs accumulate in f32, not f16

// -----

func.func @mmad_i8_acc(%a: memref<1x1x16x32xi8, "L0A">, %b: memref<1x1x16x32xi8, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x32xi8, "L0A">, memref<1x1x16x32xi8, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_i8_acc: 'tile.mmad': i8 inputs accumulate in i32, not f32

// -----

// A ragged mmad's valid rows (MmadParams m) lie within the rows its buffers hold.
func.func @mmad_m_past_the_block(%a: memref<2x1x16x8xf32, "L0A">, %b: memref<1x1x16x8xf32, "L0B">, %c: memref<1x2x16x16xf32, "L0C">, %i: i1) {
  %m = arith.constant 33 : index
  tile.mmad %a, %b, %c, %i m %m : memref<2x1x16x8xf32, "L0A">, memref<1x1x16x8xf32, "L0B">, memref<1x2x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_m_past_the_block: 'tile.mmad': m = 33 is outside the 32 the buffers hold

// -----

// A ragged L1 -> L0B load's valid columns lie within the N fractals of its destination.
func.func @load2d_valid_past_the_block(%l1: memref<1x2x16x16xf32, "L1">, %b: memref<1x2x16x16xf32, "L0B">) {
  %c0 = arith.constant 0 : index
  %n = arith.constant 40 : index
  tile.load2d %l1[%c0, %c0] to %b valid %n {mode = "copy"} : memref<1x2x16x16xf32, "L1"> to memref<1x2x16x16xf32, "L0B">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load2d' in @load2d_valid_past_the_block: 'tile.load2d': valid = 40 is outside the 32 the buffers hold

// -----

func.func @load2d_k_past_the_block(%l1: memref<1x2x16x16xf32, "L1">, %b: memref<1x2x16x16xf32, "L0B">) {
  %c0 = arith.constant 0 : index
  %k = arith.constant 17 : index
  tile.load2d %l1[%c0, %c0] to %b k %k {mode = "copy"} : memref<1x2x16x16xf32, "L1"> to memref<1x2x16x16xf32, "L0B">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load2d' in @load2d_k_past_the_block: 'tile.load2d': k = 17 is outside the 16 the buffers hold

// -----

func.func @nd2nz_rows_past_the_window(%g: memref<40x40xf32, "GM">, %nz: memref<2x2x16x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  %r = arith.constant 33 : index
  tile.nd2nz %g[%c0, %c0] to %nz rows %r : memref<40x40xf32, "GM"> to memref<2x2x16x16xf32, "L1">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.nd2nz' in @nd2nz_rows_past_the_window: 'tile.nd2nz': rows = 33 is outside the 32 the buffers hold

// -----

func.func @fixpipe_valid_nc1hwc0(%c: memref<2x2x16x16xf32, "L0C">, %o: memref<1x2x4x8x16xf32, "GM">) {
  %c0 = arith.constant 0 : index
  %m = arith.constant 16 : index
  tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] m %m {layout = "nc1hwc0", rows = 4 : i64} : memref<2x2x16x16xf32, "L0C"> to memref<1x2x4x8x16xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_valid_nc1hwc0: 'tile.fixpipe': valid m / n are for the nd and nz layouts

// -----

func.func @mmad_mixed(%a: memref<1x1x16x16xf16, "L0A">, %b: memref<1x1x16x8xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x16xf16, "L0A">, memref<1x1x16x8xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_mixed: 'tile.mmad': operands are f16 and f32; the cube takes two of f16, bf16, f32, i8

// -----

// ZZ (M1,K1,16,K0) x ZN (K1,N1,16,K0) -> NZ (N1,M1,16,16): K1, K0, N1 and M1 must chain.
func.func @mmad_k_mismatch(%a: memref<2x3x16x8xf32, "L0A">, %b: memref<2x2x16x8xf32, "L0B">, %c: memref<2x2x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<2x3x16x8xf32, "L0A">, memref<2x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_k_mismatch: 'tile.mmad': shapes [2, 3, 16, 8] x [2, 2, 16, 8] -> [2, 2, 16, 16] do not chain (ZZ (M1,K1,16,K0) x ZN (K1,N1,16,K0) -> NZ (N1,M1,16,16))

// -----

func.func @mmad_c_mismatch(%a: memref<2x3x16x8xf32, "L0A">, %b: memref<3x1x16x8xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<2x3x16x8xf32, "L0A">, memref<3x1x16x8xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_c_mismatch: 'tile.mmad': shapes [2, 3, 16, 8] x [3, 1, 16, 8] -> [1, 1, 16, 16] do not chain (ZZ (M1,K1,16,K0) x ZN (K1,N1,16,K0) -> NZ (N1,M1,16,16))

// -----

func.func @mmad_not_fractal(%a: memref<16x8xf32, "L0A">, %b: memref<16x8xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<16x8xf32, "L0A">, memref<16x8xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @mmad_not_fractal: 'tile.mmad': operands must be fractal (4-D)

// -----

// tile.copy: only the DMA paths that exist.
func.func @copy_l0a_to_gm(%a: memref<1x1x16x8xf32, "L0A">, %g: memref<1x1x16x8xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.copy %a[%c0, %c0, %c0, %c0] to %g[%c0, %c0, %c0, %c0] : memref<1x1x16x8xf32, "L0A"> to memref<1x1x16x8xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.copy' in @copy_l0a_to_gm: 'tile.copy': no DMA path from L0A to GM (paths: GM->UB, GM->L1, UB->GM, L1->UB, UB->L1, L1->GM, UB->UB)

// -----

func.func @copy_gm_to_gm(%a: memref<4xf32, "GM">, %g: memref<4xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.copy %a[%c0] to %g[%c0] : memref<4xf32, "GM"> to memref<4xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.copy' in @copy_gm_to_gm: 'tile.copy': no DMA path from GM to GM (paths: GM->UB, GM->L1, UB->GM, L1->UB, UB->L1, L1->GM, UB->UB)

// -----

func.func @copy_offsets(%g: memref<8x40xf32, "GM">, %u: memref<4x16xf32, "UB">) {
  %c0 = arith.constant 0 : index
  tile.copy %g[%c0] to %u[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.copy' in @copy_offsets: 'tile.copy': expected 2 offsets on each side

// -----

func.func @copy_rank(%g: memref<8x40xf32, "GM">, %u: memref<1x4x16xf32, "UB">) {
  %c0 = arith.constant 0 : index
  tile.copy %g[%c0, %c0] to %u[%c0, %c0, %c0] : memref<8x40xf32, "GM"> to memref<1x4x16xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.copy' in @copy_rank: 'tile.copy': source and destination have ranks 2 and 3; they must match

// -----

func.func @copy_flat_l1_to_l0a(%l: memref<64xf32, "L1">, %a: memref<1x1x16x8xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.copy_flat %l[%c0] to %a[%c0] {count = 64 : i64} : memref<64xf32, "L1"> to memref<1x1x16x8xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.copy_flat' in @copy_flat_l1_to_l0a: 'tile.copy_flat': no DMA path from L1 to L0A

// -----

// tile.get_value reads an integer buffer in UB or GM (the scalar unit's loads), one index
// per dim.
func.func @get_value_l1(%g: memref<8xi64, "L1">) {
  %c0 = arith.constant 0 : index
  %v = tile.get_value %g[%c0] : memref<8xi64, "L1">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.get_value' (%v) in @get_value_l1: 'tile.get_value': the buffer must be in UB or GM, but it is in L1

// -----

func.func @get_value_float(%u: memref<8xf32, "UB">) {
  %c0 = arith.constant 0 : index
  %v = tile.get_value %u[%c0] : memref<8xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.get_value' (%v) in @get_value_float: 'tile.get_value': reads an integer buffer

// -----

func.func @get_value_rank(%u: memref<2x8xi32, "UB">) {
  %c0 = arith.constant 0 : index
  %v = tile.get_value %u[%c0] {bound = 4 : i64} : memref<2x8xi32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.get_value' (%v) in @get_value_rank: 'tile.get_value': expected 2 indices

// -----

// nd2nz: GM -> L1 (or UB) NZ, one offset per source dim.
func.func @nd2nz_to_l0a(%g: memref<8x40xf32, "GM">, %u: memref<1x1x16x8xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.nd2nz %g[%c0, %c0] to %u : memref<8x40xf32, "GM"> to memref<1x1x16x8xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.nd2nz' in @nd2nz_to_l0a: 'tile.nd2nz': the destination must be in L1 or UB, but it is in L0A

// -----

func.func @nd2nz_offsets(%g: memref<8x40xf32, "GM">, %l: memref<1x1x16x8xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.nd2nz %g[%c0] to %l : memref<8x40xf32, "GM"> to memref<1x1x16x8xf32, "L1">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.nd2nz' in @nd2nz_offsets: 'tile.nd2nz': expected one offset per source dim

// -----

func.func @nd2nz_not_nz(%g: memref<8x40xf32, "GM">, %l: memref<16x8xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.nd2nz %g[%c0, %c0] to %l : memref<8x40xf32, "GM"> to memref<16x8xf32, "L1">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.nd2nz' in @nd2nz_not_nz: 'tile.nd2nz': the destination must be NZ (C1, R1, 16, C0)

// -----

// load_5hd: NCHW GM -> NC1HWC0 in L1 or UB.
func.func @load5hd_to_l0a(%g: memref<1x3x6x6xf32, "GM">, %l: memref<1x1x6x6x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load_5hd %g[%c0, %c0, %c0, %c0] to %l : memref<1x3x6x6xf32, "GM"> to memref<1x1x6x6x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load_5hd' in @load5hd_to_l0a: 'tile.load_5hd': the destination must be in L1 or UB, but it is in L0A

// -----

func.func @load5hd_rank(%g: memref<1x3x6x6xf32, "GM">, %l: memref<1x6x6x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.load_5hd %g[%c0, %c0, %c0, %c0] to %l : memref<1x3x6x6xf32, "GM"> to memref<1x6x6x16xf32, "L1">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load_5hd' in @load5hd_rank: 'tile.load_5hd': moves an NCHW window into a 5-D buffer

// -----

func.func @load5hd_offsets(%g: memref<1x3x6x6xf32, "GM">, %l: memref<1x1x6x6x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  tile.load_5hd %g[%c0, %c0] to %l : memref<1x3x6x6xf32, "GM"> to memref<1x1x6x6x16xf32, "L1">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load_5hd' in @load5hd_offsets: 'tile.load_5hd': expected 4 offsets (n, c, h, w)

// -----

// store_5hd: NC1HWC0 UB/L1 -> NCHW GM.
func.func @store5hd_from_l0c(%t: memref<1x1x6x6x16xf32, "L0C">, %g: memref<1x3x6x6xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.store_5hd %t to %g[%c0, %c0, %c0, %c0] : memref<1x1x6x6x16xf32, "L0C"> to memref<1x3x6x6xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.store_5hd' in @store5hd_from_l0c: 'tile.store_5hd': the source must be in UB or L1, but it is in L0C

// -----

func.func @store5hd_to_ub(%t: memref<1x1x6x6x16xf32, "L1">, %g: memref<1x3x6x6xf32, "UB">) {
  %c0 = arith.constant 0 : index
  tile.store_5hd %t to %g[%c0, %c0, %c0, %c0] : memref<1x1x6x6x16xf32, "L1"> to memref<1x3x6x6xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.store_5hd' in @store5hd_to_ub: 'tile.store_5hd': the destination must be in GM, but it is in UB

// -----

func.func @store5hd_negative_end(%t: memref<1x1x6x6x16xf32, "L1">, %g: memref<1x3x6x6xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.store_5hd %t to %g[%c0, %c0, %c0, %c0] {channel_end = -1 : i64} : memref<1x1x6x6x16xf32, "L1"> to memref<1x3x6x6xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.store_5hd' in @store5hd_negative_end: 'tile.store_5hd': channel_end must not be negative

// -----

func.func @store5hd_rank(%t: memref<1x1x6x6x16xf32, "L1">, %g: memref<3x6x6xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.store_5hd %t to %g[%c0, %c0, %c0] : memref<1x1x6x6x16xf32, "L1"> to memref<3x6x6xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.store_5hd' in @store5hd_rank: 'tile.store_5hd': moves a 5-D tile into a 4-D NCHW buffer

// -----

func.func @store5hd_offsets(%t: memref<1x1x6x6x16xf32, "L1">, %g: memref<1x3x6x6xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.store_5hd %t to %g[%c0, %c0, %c0] : memref<1x1x6x6x16xf32, "L1"> to memref<1x3x6x6xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.store_5hd' in @store5hd_offsets: 'tile.store_5hd': expected 4 offsets (n, c, h, w)

// -----

// load2d: L1 -> L0A/L0B, a known mode, fractal operands.
func.func @load2d_mode(%l: memref<2x2x16x8xf32, "L1">, %a: memref<1x1x16x8xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load2d %l[%c0, %c0] to %a {mode = "flip"} : memref<2x2x16x8xf32, "L1"> to memref<1x1x16x8xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load2d' in @load2d_mode: 'tile.load2d': mode must be one of copy, swap, transpose, transpose_fractals

// -----

func.func @load2d_to_l0c(%l: memref<2x2x16x8xf32, "L1">, %c: memref<1x1x16x16xf32, "L0C">) {
  %c0 = arith.constant 0 : index
  tile.load2d %l[%c0, %c0] to %c {mode = "copy"} : memref<2x2x16x8xf32, "L1"> to memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load2d' in @load2d_to_l0c: 'tile.load2d': the destination must be in L0A or L0B, but it is in L0C

// -----

func.func @load2d_from_gm(%l: memref<2x2x16x8xf32, "GM">, %a: memref<1x1x16x8xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load2d %l[%c0, %c0] to %a {mode = "copy"} : memref<2x2x16x8xf32, "GM"> to memref<1x1x16x8xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load2d' in @load2d_from_gm: 'tile.load2d': the source must be in L1, but it is in GM

// -----

// load3d: img2col reads an L1 feature map into L0A.
func.func @load3d_from_ub(%f: memref<1x1x6x6x16xf32, "UB">, %a: memref<1x9x16x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load3d %f[%c0] to %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 6 : i64, channels = 3 : i64} : memref<1x1x6x6x16xf32, "UB"> to memref<1x9x16x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load3d' in @load3d_from_ub: 'tile.load3d': the feature map must be in L1, but it is in UB

// -----

func.func @load3d_to_l0b(%f: memref<1x1x6x6x16xf32, "L1">, %a: memref<1x9x16x16xf32, "L0B">) {
  %c0 = arith.constant 0 : index
  tile.load3d %f[%c0] to %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 6 : i64, channels = 3 : i64} : memref<1x1x6x6x16xf32, "L1"> to memref<1x9x16x16xf32, "L0B">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load3d' in @load3d_to_l0b: 'tile.load3d': the destination must be in L0A, but it is in L0B

// -----

func.func @load3d_rank(%f: memref<1x6x6x16xf32, "L1">, %a: memref<1x9x16x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load3d %f[%c0] to %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 6 : i64, channels = 3 : i64} : memref<1x6x6x16xf32, "L1"> to memref<1x9x16x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load3d' in @load3d_rank: 'tile.load3d': the feature map must be NC1HWC0 (5-D)

// -----

// load3d {c04}: the small-channel img2col reads an NC1HWC0_C04 window (C1 = 1, 4 lanes)
// and packs 4-lane kernel positions into C0-lane fractals.
func.func @load3d_c04_wide(%f: memref<1x1x6x6x16xf32, "L1">, %a: memref<1x3x16x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load3d %f[%c0] to %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 6 : i64, channels = 3 : i64, c04} : memref<1x1x6x6x16xf32, "L1"> to memref<1x3x16x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load3d' in @load3d_c04_wide: 'tile.load3d': c04 img2col reads an NC1HWC0_C04 window (1, 1, H, W, 4), not [1, 1, 6, 6, 16]

// -----

func.func @load3d_c04_lanes(%f: memref<1x1x6x6x4xf32, "L1">, %a: memref<1x3x16x6xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load3d %f[%c0] to %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 6 : i64, channels = 3 : i64, c04} : memref<1x1x6x6x4xf32, "L1"> to memref<1x3x16x6xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load3d' in @load3d_c04_lanes: 'tile.load3d': c04 img2col packs 4 channels per kernel position into fractals of C0 lanes; C0 = 6 is not a multiple of 4

// -----

func.func @load3d_c04_channels(%f: memref<1x1x6x6x4xf32, "L1">, %a: memref<1x3x16x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.load3d %f[%c0] to %a {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 6 : i64, channels = 5 : i64, c04} : memref<1x1x6x6x4xf32, "L1"> to memref<1x3x16x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.load3d' in @load3d_c04_channels: 'tile.load3d': c04 img2col of 5 channels (at most 4)

// -----

// fixpipe: the accumulator comes from L0C, the bias from L1.
func.func @fixpipe_from_ub(%c: memref<1x1x16x16xf32, "UB">, %g: memref<32x32xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] {layout = "nd"} : memref<1x1x16x16xf32, "UB"> to memref<32x32xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_from_ub: 'tile.fixpipe': the accumulator must be in L0C, but it is in UB

// -----

func.func @fixpipe_to_l0a(%c: memref<1x1x16x16xf32, "L0C">, %a: memref<16x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %a[%c0, %c0] {layout = "nd"} : memref<1x1x16x16xf32, "L0C"> to memref<16x16xf32, "L0A">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_to_l0a: 'tile.fixpipe': the destination must be in GM or L1 or UB, but it is in L0A

// -----

func.func @fixpipe_bias_in_ub(%c: memref<1x1x16x16xf32, "L0C">, %g: memref<32x32xf32, "GM">, %b: memref<16xf32, "UB">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] bias %b : memref<16xf32, "UB"> {layout = "nd"} : memref<1x1x16x16xf32, "L0C"> to memref<32x32xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_bias_in_ub: 'tile.fixpipe': the bias must be in L1, but it is in UB

// -----

func.func @fixpipe_layout(%c: memref<1x1x16x16xf32, "L0C">, %g: memref<32x32xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0, %c0] {layout = "zn"} : memref<1x1x16x16xf32, "L0C"> to memref<32x32xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_layout: 'tile.fixpipe': layout must be one of nd, nc1hwc0, nz

// -----

func.func @fixpipe_rows(%c: memref<1x1x16x16xf32, "L0C">, %o: memref<1x1x4x4x16xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] {layout = "nc1hwc0"} : memref<1x1x16x16xf32, "L0C"> to memref<1x1x4x4x16xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_rows: 'tile.fixpipe': layout nc1hwc0 needs 'rows'

// -----

func.func @fixpipe_offsets(%c: memref<1x1x16x16xf32, "L0C">, %g: memref<32x32xf32, "GM">) {
  %c0 = arith.constant 0 : index
  tile.fixpipe %c to %g[%c0] {layout = "nd"} : memref<1x1x16x16xf32, "L0C"> to memref<32x32xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.fixpipe' in @fixpipe_offsets: 'tile.fixpipe': expected one offset per destination dim

// -----

// Cross-core flags: ids 0-10, a known direction, a pipe the issuing core has.
func.func @cross_flag_range() {
  tile.sync_block_set {flag = 11 : i64, mode = "aic_to_aiv", pipe = "FIX"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.sync_block_set' in @cross_flag_range: 'tile.sync_block_set': flag 11 out of range; cross-core flags are 0-10

// -----

func.func @cross_mode() {
  tile.sync_block_wait {flag = 0 : i64, mode = "aic_to_aic", pipe = "FIX"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.sync_block_wait' in @cross_mode: 'tile.sync_block_wait': unknown mode 'aic_to_aic'; modes are aic_to_aiv, aiv_to_aic

// -----

func.func @cross_pipe() {
  tile.sync_block_set {flag = 0 : i64, mode = "aic_to_aiv", pipe = "V"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.sync_block_set' in @cross_pipe: 'tile.sync_block_set': the AIC has no V pipe (it has FIX, M, MTE1, MTE2, S)

// -----

func.func @mix_launch_blocks(%x: memref<2x4xf32, "GM">) {
  tile.launch @k(%x) {aiv_blocks = 2 : i64} : memref<2x4xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}invalid.mlir{{(:[0-9]+)?}}: error: 'tile.launch' in @mix_launch_blocks: 'tile.launch': aiv_blocks is given, but no aiv function

// CHECK-NOT: {{.}}
