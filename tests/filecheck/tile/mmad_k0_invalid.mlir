// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics | filecheck %s

// tile.mmad rejects a K0 that is not its input type's (32 B of elements per fractal row:
// f16/bf16 16, i8 32, f32 8 — or the 16 of PAIRED_F32_K0), naming the type and the K0 it
// holds. One located message per chunk.

func.func @f16_k0_8(%a: memref<1x1x16x8xf16, "L0A">, %b: memref<1x1x16x8xf16, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x8xf16, "L0A">, memref<1x1x16x8xf16, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK: {{.*}}mmad_k0_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @f16_k0_8: 'tile.mmad': K0 is 8, but a fractal row of f16 holds 16 elements (K0 = 32 B / element size)

// -----

func.func @bf16_k0_32(%a: memref<1x1x16x32xbf16, "L0A">, %b: memref<1x1x16x32xbf16, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x32xbf16, "L0A">, memref<1x1x16x32xbf16, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}mmad_k0_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @bf16_k0_32: 'tile.mmad': K0 is 32, but a fractal row of bf16 holds 16 elements (K0 = 32 B / element size)

// -----

func.func @i8_k0_16(%a: memref<1x1x16x16xi8, "L0A">, %b: memref<1x1x16x16xi8, "L0B">, %c: memref<1x1x16x16xi32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x16xi8, "L0A">, memref<1x1x16x16xi8, "L0B">, memref<1x1x16x16xi32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}mmad_k0_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @i8_k0_16: 'tile.mmad': K0 is 16, but a fractal row of i8 holds 32 elements (K0 = 32 B / element size)

// -----

func.func @f32_k0_32(%a: memref<1x1x16x32xf32, "L0A">, %b: memref<1x1x16x32xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x32xf32, "L0A">, memref<1x1x16x32xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}mmad_k0_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @f32_k0_32: 'tile.mmad': K0 is 32, but a fractal row of f32 holds 8 elements (K0 = 32 B / element size)

// -----

func.func @f32_k0_4(%a: memref<1x1x16x4xf32, "L0A">, %b: memref<1x1x16x4xf32, "L0B">, %c: memref<1x1x16x16xf32, "L0C">, %i: i1) {
  tile.mmad %a, %b, %c, %i : memref<1x1x16x4xf32, "L0A">, memref<1x1x16x4xf32, "L0B">, memref<1x1x16x16xf32, "L0C">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}mmad_k0_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.mmad' in @f32_k0_4: 'tile.mmad': K0 is 4, but a fractal row of f32 holds 8 elements (K0 = 32 B / element size)
