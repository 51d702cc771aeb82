// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test}' | filecheck %s

// A recurrent layer shared over the cores (tiling/recurrent.py, `recurrent.cores`): the
// forward RNN of tile_kernels_recurrent.mlir (hidden 20: two hidden fractals) on the `test`
// preset's two core groups, one fractal (16 columns, the second one cut at 20) each. Both
// parts read the block index once; each block's columns start at block * 16: the AIC
// keeps only its rows of R and W in L1 (one fractal of columns, half the one-core kernel's),
// the AIV adds its slice of the bias rows (held in UB, loaded before step 0) and stores
// its slice of h_t to Y[t] and Y_h. After its stores every AIV waits at the hard all-core
// barrier of the vector cores, then hands the step over to its AIC (flag 4): no AIC reads
// Y[t] before every block has stored its slice (x_t, which no step writes, is fetched
// before the wait). The AIC has no barrier of its own. The kernel runs on two blocks
// (tile.blocks) and its workspace has a region of two slots per core group.
func.func @rnn_cores(%in0: memref<3x2x12xf32, "GM">, %v0: memref<1x20x12xf32, "GM">, %v1: memref<1x20x20xf32, "GM">, %v2: memref<1x40xf32, "GM">, %v3_out: memref<3x1x2x20xf32, "GM">, %v3_out_1: memref<1x2x20xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<3x2x12xf32, "GM"> -> !layout.tensor<3x2x12xf32>
  %v0_1 = tile.read %v0 : memref<1x20x12xf32, "GM"> -> !layout.tensor<1x20x12xf32>
  %v1_1 = tile.read %v1 : memref<1x20x20xf32, "GM"> -> !layout.tensor<1x20x20xf32>
  %v2_1 = tile.read %v2 : memref<1x40xf32, "GM"> -> !layout.tensor<1x40xf32>
  %v3, %v3_1 = graph.rnn %in0_1, %v0_1, %v1_1, %v2_1 {hidden_size = 20, direction = "forward", layout.kernel = "origin"} : (!layout.tensor<3x2x12xf32>, !layout.tensor<1x20x12xf32>, !layout.tensor<1x20x20xf32>, !layout.tensor<1x40xf32>) -> (!layout.tensor<3x1x2x20xf32>, !layout.tensor<1x2x20xf32>)
  tile.write %v3 to %v3_out : !layout.tensor<3x1x2x20xf32> to memref<3x1x2x20xf32, "GM">
  tile.write %v3_1 to %v3_out_1 : !layout.tensor<1x2x20xf32> to memref<1x2x20xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @rnn_cores_mix_aic(
// CHECK-SAME:    %workspace: memref<4x1x16x16xf32, "GM">
// CHECK-SAME:    tile.blocks = 2 : i64
// CHECK:         %block = tile.block_idx
// CHECK:         %[[COL:.+]] = arith.muli %block, %c16 : index
// CHECK:         tile.nd2nz %v1[%c0, %[[COL]], %c0] to %r0_0_l1 : memref<1x20x20xf32, "GM"> to memref<2x1x16x16xf32, "L1">
// CHECK-NEXT:    tile.nd2nz %v0[%c0, %[[COL]], %c0] to %w0_0_l1 : memref<1x20x12xf32, "GM"> to memref<1x1x16x16xf32, "L1">
// CHECK-NOT:     tile.sync_all
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK-NEXT:      %t_prev = arith.addi %t, %cm1 : index
// CHECK-NEXT:      tile.nd2nz %in0[%t, %c0, %c0] to %a_l1
// CHECK-NEXT:      tile.load2d %a_l1[%c0, %c0] to %a0_l0a {mode = "swap"}
// CHECK-NEXT:      tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NOT:     tile.sync_all
// CHECK:         func.return

// CHECK-LABEL: func.func @rnn_cores_mix_aiv(
// CHECK-SAME:    tile.blocks = 2 : i64
// CHECK:         %block = tile.block_idx
// CHECK:         %[[VCOL:.+]] = arith.muli %block, %c16 : index
// CHECK:         tile.copy %v2[%c0, %[[VCOL]]] to %b0_0_ub[%c0, %c0]
// CHECK:         tile.copy %y_ub[%c0, %c0, %c0, %c0] to %v3_out[%c0, %c0, %c0, %[[VCOL]]]
// CHECK-NEXT:    tile.copy %h_ub[%c0, %c0, %c0] to %v3_out_1[%c0, %c0, %[[VCOL]]]
// CHECK-NEXT:  } {tile.loop = {{[0-9]+}} : i64}
// CHECK-NEXT:  tile.sync_all {mode = "hard", cores = "aiv"}
// CHECK-NEXT:  tile.sync_block_set {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE3"}
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK:           tile.copy %y_ub[%c0, %c0, %c0, %c0] to %v3_out[%t, %c0, %c0, %[[VCOL]]]
// CHECK-NEXT:      tile.copy %h_ub[%c0, %c0, %c0] to %v3_out_1[%c0, %c0, %[[VCOL]]]
// CHECK-NEXT:    } {tile.loop = {{[0-9]+}} : i64}
// CHECK-NEXT:    tile.sync_all {mode = "hard", cores = "aiv"}
// CHECK-NEXT:    tile.sync_block_set {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE3"}
