// RUN: tilegraph-opt %s -p 'tile-kernels{platform=ascend910b base-block="32,64,64"}' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=ascend910b base-block="32,64,64"},multi-buffer' | filecheck %s --check-prefix=MB

// (32 x 1024) @ (1024 x 64) fp16 with base block (32, 64, 64): K = 64 fractals in 16 base
// steps of k1 = 4. Each GM -> L1 load brings 4 base steps (a 32 x 256 window of A, 256 x 64
// of B: Ascend C's stepKa / stepKb), and every base step goes L1 -> L0 from its offset in
// that window; the accumulator starts at the first base step of the first window.
func.func @matmul(%in0: memref<32x1024xf16, "GM">, %in1: memref<1024x64xf16, "GM">, %v0_out: memref<32x64xf16, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<32x1024xf16, "GM"> -> !layout.tensor<32x1024xf16>
  %in1_1 = tile.read %in1 : memref<1024x64xf16, "GM"> -> !layout.tensor<1024x64xf16>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<32x1024xf16> -> !layout.tensor<32x1024xf16, ND -> FRACTAL_NZ [64, 2, 16, 16]>
  %in1_2 = layout.trans_data %in1_1 : !layout.tensor<1024x64xf16> -> !layout.tensor<1024x64xf16, ND -> FRACTAL_NZ [4, 64, 16, 16]>
  %v0 = graph.matmul %in0_2, %in1_2 {layout.kernel = "cube"} : (!layout.tensor<32x1024xf16, ND -> FRACTAL_NZ [64, 2, 16, 16]>, !layout.tensor<1024x64xf16, ND -> FRACTAL_NZ [4, 64, 16, 16]>) -> !layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]>
  %v0_1 = layout.trans_data %v0 : !layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]> -> !layout.tensor<32x64xf16>
  tile.write %v0_1 to %v0_out : !layout.tensor<32x64xf16> to memref<32x64xf16, "GM">
  func.return
}
// CHECK-LABEL: func.func @matmul(
// CHECK-DAG:     %[[AL1:.+]] = tile.alloc : memref<16x2x16x16xf16, "L1">
// CHECK-DAG:     %[[BL1:.+]] = tile.alloc : memref<4x16x16x16xf16, "L1">
// CHECK-DAG:     %[[A:.+]] = tile.alloc : memref<2x4x16x16xf16, "L0A">
// CHECK-DAG:     %[[B:.+]] = tile.alloc : memref<4x4x16x16xf16, "L0B">
// CHECK:         scf.for %[[KC:.+]] = %c0 to %c64 step %c16 {
// CHECK:           tile.nd2nz %in0[%c0, %{{.+}}] to %[[AL1]] : memref<32x1024xf16, "GM"> to memref<16x2x16x16xf16, "L1">
// CHECK:           tile.nd2nz %in1[%{{.+}}, %c0] to %[[BL1]] : memref<1024x64xf16, "GM"> to memref<4x16x16x16xf16, "L1">
// CHECK-NEXT:      scf.for %[[KS:.+]] = %c0 to %c16 step %c4 {
// CHECK-NEXT:        %[[K:.+]] = arith.addi %[[KC]], %[[KS]] : index
// CHECK-NEXT:        %first = arith.cmpi eq, %[[K]], %c0 : index
// CHECK-NEXT:        tile.load2d %[[AL1]][%[[KS]], %c0] to %[[A]] {mode = "swap"}
// CHECK-NEXT:        tile.load2d %[[BL1]][%c0, %[[KS]]] to %[[B]] {mode = "transpose"}
// CHECK-NEXT:        tile.mmad %[[A]], %[[B]], %{{.+}}, %first
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK:         tile.fixpipe

// The L1 windows ping-pong along the window loop, the L0 blocks along the base steps.
// MB-DAG: tile.alloc {multi_buffer = 2 : i64} : memref<16x2x16x16xf16, "L1">
// MB-DAG: tile.alloc {multi_buffer = 2 : i64} : memref<4x16x16x16xf16, "L1">
// MB-DAG: tile.alloc {multi_buffer = 2 : i64} : memref<2x4x16x16xf16, "L0A">
// MB-DAG: tile.alloc {multi_buffer = 2 : i64} : memref<4x4x16x16xf16, "L0B">
