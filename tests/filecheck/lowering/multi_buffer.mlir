// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer,multi-buffer' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer{slots=1}' | filecheck %s --check-prefix=OFF
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer,plan-local-memory' | filecheck %s --check-prefix=PLAN
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},multi-buffer' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS
// RUN: not tilegraph-opt %s -p 'multi-buffer{slots=0}' 2>&1 | filecheck %s --check-prefix=BAD

// multi-buffer on a small convolution, a small matmul and a small elementwise kernel, tiled
// for the test preset (whose tiles keep each buffer at half a scope). A buffer gets two
// slots when a load fills it once per iteration of the loop around all its uses, for
// another pipe to read:
// * conv: the feature-map window (load_5hd on MTE2, once per row tile, read by load3d on
//   MTE1), and per K step the weight fractals in L1 and the L0A / L0B operands (the K loop
//   is not peeled: every load sits in it, so they ping-pong along K). Not the L0C
//   accumulator (written by the cube);
// * matmul with K in one step (no K loop): both L1 operands (nd2nz, read by load2d) and
//   the L0A / L0B operands (load2d, read by mmad);
// * add + ReLU: the two loaded inputs, not the vector results.
// Running the pass twice changes nothing; slots=1 turns it off.
func.func @conv_relu(%in0: memref<1x20x9x9xf32, "GM">, %v0: memref<18x2x16x16xf32, "GM">, %v2_out: memref<1x2x9x9x16xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<1x20x9x9xf32, "GM"> -> !layout.tensor<1x20x9x9xf32, NCHW>
  %v0_1 = tile.read %v0 : memref<18x2x16x16xf32, "GM"> -> !layout.tensor<24x20x3x3xf32, NCHW -> FRACTAL_Z [18, 2, 16, 16]>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<1x20x9x9xf32, NCHW> -> !layout.tensor<1x20x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v1 = graph.conv2d %in0_2, %v0_1 {pads = [1, 1, 1, 1], layout.kernel = "cube"} : (!layout.tensor<1x20x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>, !layout.tensor<24x20x3x3xf32, NCHW -> FRACTAL_Z [18, 2, 16, 16]>) -> !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v2 = graph.relu %v1 {layout.kernel = "any", layout.shared = "NC1HWC0"} : !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  tile.write %v2 to %v2_out : !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]> to memref<1x2x9x9x16xf32, "GM">
  func.return
}
func.func @matmul(%in0: memref<19x16xf32, "GM">, %in1: memref<16x75xf32, "GM">, %v0_out: memref<19x75xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<19x16xf32, "GM"> -> !layout.tensor<19x16xf32>
  %in1_1 = tile.read %in1 : memref<16x75xf32, "GM"> -> !layout.tensor<16x75xf32>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<19x16xf32> -> !layout.tensor<19x16xf32, ND -> FRACTAL_NZ [1, 2, 16, 16]>
  %in1_2 = layout.trans_data %in1_1 : !layout.tensor<16x75xf32> -> !layout.tensor<16x75xf32, ND -> FRACTAL_NZ [5, 1, 16, 16]>
  %v0 = graph.matmul %in0_2, %in1_2 {layout.kernel = "cube"} : (!layout.tensor<19x16xf32, ND -> FRACTAL_NZ [1, 2, 16, 16]>, !layout.tensor<16x75xf32, ND -> FRACTAL_NZ [5, 1, 16, 16]>) -> !layout.tensor<19x75xf32, ND -> FRACTAL_NZ [5, 2, 16, 16]>
  %v0_1 = layout.trans_data %v0 : !layout.tensor<19x75xf32, ND -> FRACTAL_NZ [5, 2, 16, 16]> -> !layout.tensor<19x75xf32>
  tile.write %v0_1 to %v0_out : !layout.tensor<19x75xf32> to memref<19x75xf32, "GM">
  func.return
}
func.func @add_relu(%in: memref<64x100xf32, "GM">, %in2: memref<64x100xf32, "GM">, %out: memref<64x100xf32, "GM">) attributes {tile.kernel = "vector"} {
  %a = tile.read %in : memref<64x100xf32, "GM"> -> !layout.tensor<64x100xf32>
  %b = tile.read %in2 : memref<64x100xf32, "GM"> -> !layout.tensor<64x100xf32>
  %c = graph.add %a, %b : (!layout.tensor<64x100xf32>, !layout.tensor<64x100xf32>) -> !layout.tensor<64x100xf32>
  %d = graph.relu %c : !layout.tensor<64x100xf32>
  tile.write %d to %out : !layout.tensor<64x100xf32> to memref<64x100xf32, "GM">
  func.return
}

// CHECK-LABEL: func.func @conv_relu(
// CHECK-NEXT:    %fmap_l1 = tile.alloc {multi_buffer = 2 : i64} : memref<1x2x5x9x16xf32, "L1">
// CHECK-NEXT:    %w_l1 = tile.alloc {multi_buffer = 2 : i64} : memref<1x1x16x16xf32, "L1">
// CHECK-NEXT:    %a_l0a = tile.alloc {multi_buffer = 2 : i64} : memref<2x1x16x16xf32, "L0A">
// CHECK-NEXT:    %b_l0b = tile.alloc {multi_buffer = 2 : i64} : memref<1x1x16x16xf32, "L0B">
// CHECK-NEXT:    %c_l0c = tile.alloc : memref<1x2x16x16xf32, "L0C">
// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %a_l1 = tile.alloc {multi_buffer = 2 : i64} : memref<1x2x16x16xf32, "L1">
// CHECK-NEXT:    %b_l1 = tile.alloc {multi_buffer = 2 : i64} : memref<2x1x16x16xf32, "L1">
// CHECK-NEXT:    %a_l0a = tile.alloc {multi_buffer = 2 : i64} : memref<2x1x16x16xf32, "L0A">
// CHECK-NEXT:    %b_l0b = tile.alloc {multi_buffer = 2 : i64} : memref<1x2x16x16xf32, "L0B">
// CHECK-NEXT:    %c_l0c = tile.alloc : memref<2x2x16x16xf32, "L0C">
// CHECK:         scf.for %n = %c0 to %c5 step %c2 {
// CHECK:           tile.nd2nz %in0[%c0, %c0] to %a_l1
// CHECK-NEXT:      tile.load2d %a_l1[%c0, %c0] to %a_l0a {mode = "swap"}
// CHECK:           tile.nd2nz %in1[%c0, %{{.+}}] to %b_l1
// CHECK-NEXT:      tile.load2d %b_l1[%c0, %c0] to %b_l0b valid %[[NV:.+]] {mode = "transpose"}
// CHECK-NEXT:      tile.mmad %a_l0a, %b_l0b, %c_l0c, %true n %[[NV]]
// CHECK-LABEL: func.func @add_relu(
// CHECK-NEXT:    %a_ub = tile.alloc {multi_buffer = 2 : i64} : memref<2x100xf32, "UB">
// CHECK-NEXT:    %b_ub = tile.alloc {multi_buffer = 2 : i64} : memref<2x100xf32, "UB">
// CHECK-NEXT:    %c_ub = tile.alloc : memref<2x100xf32, "UB">
// CHECK-NEXT:    %d_ub = tile.alloc : memref<2x100xf32, "UB">

// OFF-NOT: multi_buffer

// Planned after it: each slot its own address.
// PLAN-LABEL: func.func @conv_relu(
// PLAN-SAME:    tile.local_memory = {L1 = 13568 : i64, L0A = 4096 : i64, L0B = 2048 : i64, L0C = 2048 : i64}
// PLAN-NEXT:    %fmap_l1 = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 5760>}
// PLAN-NEXT:    %w_l1 = tile.alloc {multi_buffer = 2 : i64, address = 11520 : i64, addresses = array<i64: 11520, 12544>}
// PLAN-LABEL: func.func @matmul(
// PLAN-SAME:    tile.local_memory = {L1 = 8192 : i64, L0A = 4096 : i64, L0B = 4096 : i64, L0C = 4096 : i64}
// PLAN-NEXT:    %a_l1 = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 2048>}
// PLAN-NEXT:    %b_l1 = tile.alloc {multi_buffer = 2 : i64, address = 4096 : i64, addresses = array<i64: 4096, 6144>}
// PLAN-NEXT:    %a_l0a = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 2048>}
// PLAN-NEXT:    %b_l0b = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 2048>}
// PLAN-LABEL: func.func @add_relu(
// PLAN-SAME:    tile.local_memory = {UB = 4800 : i64}
// PLAN-NEXT:    %a_ub = tile.alloc {multi_buffer = 2 : i64, address = 0 : i64, addresses = array<i64: 0, 800>}
// PLAN-NEXT:    %b_ub = tile.alloc {multi_buffer = 2 : i64, address = 1600 : i64, addresses = array<i64: 1600, 2400>}
// PLAN-NEXT:    %c_ub = tile.alloc {address = 3200 : i64}
// PLAN-NEXT:    %d_ub = tile.alloc {address = 4000 : i64}

// STATS:      multi-buffer (ran 1x)
// STATS-NEXT:   candidates  10
// STATS-NEXT:   marked      10

// BAD: error: pass 'multi-buffer': slots must be at least 1, got 0
