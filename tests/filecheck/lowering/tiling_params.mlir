// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer,split-cores' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer,split-cores' | filecheck %s --check-prefix=NONE

// Tiling parameters written by hand: the same (32 x 1024) @ (1024 x 64) fp16 macro kernel
// twice, @default with no tile.params (the heuristic on the `test` preset: base block
// m1 = n1 = k1 = 2, two base K steps per L1 window, split over the cores along N) and
// @tuned with tile.params choosing n1 = 4, k1 = 1, four K steps per window, A's L1 window
// single-buffered and no split over the cores. Both kernels keep their params; a point
// that does not fit would make the kernel a host kernel with a reason (not tested here).
func.func @default(%in0: memref<32x1024xf16, "GM">, %in1: memref<1024x64xf16, "GM">, %v0_out: memref<32x64xf16, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<32x1024xf16, "GM"> -> !layout.tensor<32x1024xf16>
  %in1_1 = tile.read %in1 : memref<1024x64xf16, "GM"> -> !layout.tensor<1024x64xf16>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<32x1024xf16> -> !layout.tensor<32x1024xf16, ND -> FRACTAL_NZ [64, 2, 16, 16]>
  %in1_2 = layout.trans_data %in1_1 : !layout.tensor<1024x64xf16> -> !layout.tensor<1024x64xf16, ND -> FRACTAL_NZ [4, 64, 16, 16]>
  %v0 = graph.matmul %in0_2, %in1_2 {layout.kernel = "cube"} : (!layout.tensor<32x1024xf16, ND -> FRACTAL_NZ [64, 2, 16, 16]>, !layout.tensor<1024x64xf16, ND -> FRACTAL_NZ [4, 64, 16, 16]>) -> !layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]>
  %v0_1 = layout.trans_data %v0 : !layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]> -> !layout.tensor<32x64xf16>
  tile.write %v0_1 to %v0_out : !layout.tensor<32x64xf16> to memref<32x64xf16, "GM">
  func.return
}
func.func @tuned(%in0: memref<32x1024xf16, "GM">, %in1: memref<1024x64xf16, "GM">, %v0_out: memref<32x64xf16, "GM">) attributes {tile.kernel = "cube", tile.params = {"matmul.n1" = 4 : i64, "matmul.k1" = 1 : i64, "matmul.l1_k_steps" = 4 : i64, "multi_buffer.a_l1" = false, "split_cores.loops" = "none"}} {
  %in0_1 = tile.read %in0 : memref<32x1024xf16, "GM"> -> !layout.tensor<32x1024xf16>
  %in1_1 = tile.read %in1 : memref<1024x64xf16, "GM"> -> !layout.tensor<1024x64xf16>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<32x1024xf16> -> !layout.tensor<32x1024xf16, ND -> FRACTAL_NZ [64, 2, 16, 16]>
  %in1_2 = layout.trans_data %in1_1 : !layout.tensor<1024x64xf16> -> !layout.tensor<1024x64xf16, ND -> FRACTAL_NZ [4, 64, 16, 16]>
  %v0 = graph.matmul %in0_2, %in1_2 {layout.kernel = "cube"} : (!layout.tensor<32x1024xf16, ND -> FRACTAL_NZ [64, 2, 16, 16]>, !layout.tensor<1024x64xf16, ND -> FRACTAL_NZ [4, 64, 16, 16]>) -> !layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]>
  %v0_1 = layout.trans_data %v0 : !layout.tensor<32x64xf16, ND -> FRACTAL_NZ [4, 2, 16, 16]> -> !layout.tensor<32x64xf16>
  tile.write %v0_1 to %v0_out : !layout.tensor<32x64xf16> to memref<32x64xf16, "GM">
  func.return
}
// CHECK-LABEL: func.func @default(
// CHECK:         %block = tile.block_idx
// CHECK-DAG:     %a_l1 = tile.alloc {multi_buffer = 2 : i64} : memref<4x2x16x16xf16, "L1">
// CHECK-DAG:     %a_l0a = tile.alloc {multi_buffer = 2 : i64} : memref<2x2x16x16xf16, "L0A">
// CHECK-DAG:     %b_l0b = tile.alloc {multi_buffer = 2 : i64} : memref<2x2x16x16xf16, "L0B">
// CHECK:         scf.for %kc = %c0 to %c64 step %c4 {
// CHECK:           tile.nd2nz
// CHECK:           tile.nd2nz
// CHECK-NEXT:      scf.for %ks = %c0 to %c4 step %c2 {
// CHECK-LABEL: func.func @tuned(
// CHECK-SAME:    tile.params = {matmul.n1 = 4 : i64, matmul.k1 = 1 : i64, matmul.l1_k_steps = 4 : i64, multi_buffer.a_l1 = false, split_cores.loops = "none"}
// CHECK-DAG:     %a_l1 = tile.alloc : memref<4x2x16x16xf16, "L1">
// CHECK-DAG:     %b_l1 = tile.alloc : memref<4x4x16x16xf16, "L1">
// CHECK-DAG:     %a_l0a = tile.alloc {multi_buffer = 2 : i64} : memref<2x1x16x16xf16, "L0A">
// CHECK-DAG:     %b_l0b = tile.alloc {multi_buffer = 2 : i64} : memref<1x4x16x16xf16, "L0B">
// CHECK-DAG:     %c_l0c = tile.alloc : memref<4x2x16x16xf32, "L0C">
// CHECK:         scf.for %kc = %c0 to %c64 step %c4 {
// CHECK:           tile.nd2nz
// CHECK:           tile.nd2nz
// CHECK-NEXT:      scf.for %ks = %c0 to %c4 step %c1 {

// The tuned kernel runs on one block: no block index anywhere in it.
// NONE-LABEL: func.func @tuned(
// NONE-NOT:     tile.block_idx
// NONE:         func.return
