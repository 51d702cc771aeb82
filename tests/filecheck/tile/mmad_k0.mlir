// RUN: tilegraph-opt %s | filecheck %s

// tile.mmad's K0 follows the input type: a fractal row of L0A / L0B is 32 B, so K0 is 16
// for f16 and bf16, 32 for i8, 8 for f32 (M0 = N0 = 16 for all). f32 is also accepted with
// K0 = 16, the block tile-kernels lowers fp32 to today (PAIRED_F32_K0 in
// tilegraph/dialects/tile/cube.py); mmad_k0_invalid.mlir has the rejected cases.

func.func @f16_k0_16(%a: memref<1x1x16x16xf16, "L0A">, %b: memref<1x1x16x16xf16, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x16xf16, "L0A">, memref<1x1x16x16xf16, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-LABEL: func.func @f16_k0_16(
// CHECK-NEXT:    tile.mmad %a, %b, %c, %i

func.func @bf16_k0_16(%a: memref<1x1x16x16xbf16, "L0A">, %b: memref<1x1x16x16xbf16, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x16xbf16, "L0A">, memref<1x1x16x16xbf16, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-LABEL: func.func @bf16_k0_16(
// CHECK-NEXT:    tile.mmad %a, %b, %c, %i

func.func @i8_k0_32(%a: memref<1x1x16x32xi8, "L0A">, %b: memref<1x1x16x32xi8, "L0B">, %c: memref<1x1x16x16xi32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x32xi8, "L0A">, memref<1x1x16x32xi8, "L0B">, memref<1x1x16x16xi32, "L0C">
  func.return
}
// CHECK-LABEL: func.func @i8_k0_32(
// CHECK-NEXT:    tile.mmad %a, %b, %c, %i

func.func @f32_k0_8(%a: memref<1x1x16x8xf32, "L0A">, %b: memref<1x1x16x8xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x8xf32, "L0A">, memref<1x1x16x8xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-LABEL: func.func @f32_k0_8(
// CHECK-NEXT:    tile.mmad %a, %b, %c, %i

func.func @f32_paired_k0_16(%a: memref<1x1x16x16xf32, "L0A">, %b: memref<1x1x16x16xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x16xf32, "L0A">, memref<1x1x16x16xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-LABEL: func.func @f32_paired_k0_16(
// CHECK-NEXT:    tile.mmad %a, %b, %c, %i
