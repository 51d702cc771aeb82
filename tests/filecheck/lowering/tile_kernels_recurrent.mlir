// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test}' | filecheck %s

// A recurrent layer (tiling/recurrent.py) on the `test` preset, a decoupled one: a forward
// RNN (hidden 20, not a multiple of 16: one block of two hidden fractals, the store cut at
// 20; batch 2; no initial state) becomes a mix kernel. The AIC runs per step the gate
// matmul x_t·Wᵀ (+ h_{t-1}·Rᵀ, read from Y[t-1] in GM, over K = 20 in two steps
// accumulated in L0C) and hands it over through the workspace; the AIV adds both bias
// rows, applies tanh and stores h_t to Y[t] and Y_h, then sets the state flag (4) the AIC
// waits for before the next step reads Y[t]. Step 0 is peeled (no h·Rᵀ: a zero h_{-1});
// steps 1 .. 2 are one scf.for whose index t picks x_t, Y[t-1] and Y[t] (each gate's K
// loops and the AIV's work per gate are loop nests of their own in its body, which
// inject-sync fences apart). R and W (one gate: 4 KiB + 2 KiB) are resident in L1: copied
// once before step 0, each K step only loads its fractals L1 -> L0B. x_t (one K step) is
// loaded into an L0A buffer of its own before the step waits for the state flag (every
// gate of the step would share it); h_{t-1} (two K steps) goes through a_l0a as before. The last step's state
// flag is drained at the end. Every kernel here runs on one core (`recurrent.cores = 1`;
// shared over the cores: tile_kernels_recurrent_cores.mlir).
func.func @rnn_1(%in0: memref<3x2x12xf32, "GM">, %v0: memref<1x20x12xf32, "GM">, %v1: memref<1x20x20xf32, "GM">, %v2: memref<1x40xf32, "GM">, %v3_out: memref<3x1x2x20xf32, "GM">, %v3_out_1: memref<1x2x20xf32, "GM">) attributes {tile.kernel = "cube", tile.params = {"recurrent.cores" = 1 : i64}} {
  %in0_1 = tile.read %in0 : memref<3x2x12xf32, "GM"> -> !layout.tensor<3x2x12xf32>
  %v0_1 = tile.read %v0 : memref<1x20x12xf32, "GM"> -> !layout.tensor<1x20x12xf32>
  %v1_1 = tile.read %v1 : memref<1x20x20xf32, "GM"> -> !layout.tensor<1x20x20xf32>
  %v2_1 = tile.read %v2 : memref<1x40xf32, "GM"> -> !layout.tensor<1x40xf32>
  %v3, %v3_1 = graph.rnn %in0_1, %v0_1, %v1_1, %v2_1 {hidden_size = 20, direction = "forward", layout.kernel = "origin"} : (!layout.tensor<3x2x12xf32>, !layout.tensor<1x20x12xf32>, !layout.tensor<1x20x20xf32>, !layout.tensor<1x40xf32>) -> (!layout.tensor<3x1x2x20xf32>, !layout.tensor<1x2x20xf32>)
  tile.write %v3 to %v3_out : !layout.tensor<3x1x2x20xf32> to memref<3x1x2x20xf32, "GM">
  tile.write %v3_1 to %v3_out_1 : !layout.tensor<1x2x20xf32> to memref<1x2x20xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @rnn_1_mix_aic(
// CHECK-SAME:    tile.kernel = "cube", tile.params = {recurrent.cores = 1 : i64}, tile.tiles = 3 : i64, tile.ops = "graph.rnn", tile.mix = "aic"
// CHECK:         tile.nd2nz %v1[%c0, %c0, %c0] to %r0_0_l1 : memref<1x20x20xf32, "GM"> to memref<2x2x16x16xf32, "L1">
// CHECK-NEXT:    tile.nd2nz %v0[%c0, %c0, %c0] to %w0_0_l1 : memref<1x20x12xf32, "GM"> to memref<1x2x16x16xf32, "L1">
// CHECK:         tile.nd2nz %in0[%c0, %c0, %c0] to %a_l1
// CHECK-NEXT:    tile.load2d %a_l1[%c0, %c0] to %a0_l0a {mode = "swap"}
// CHECK:         tile.load2d %w0_0_l1[%k, %c0] to %b_l0b {mode = "copy"}
// CHECK:         tile.mmad %a0_l0a, %b_l0b, %c_l0c, %first
// CHECK-NOT:     tile.mmad
// CHECK:         tile.fixpipe %c_l0c to %workspace
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK-NEXT:      %t_prev = arith.addi %t, %cm1 : index
// CHECK-NEXT:      tile.nd2nz %in0[%t, %c0, %c0] to %a_l1
// CHECK-NEXT:      tile.load2d %a_l1[%c0, %c0] to %a0_l0a {mode = "swap"}
// CHECK-NEXT:      tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK:           tile.mmad %a0_l0a, %b_l0b, %c_l0c, %first
// CHECK-NOT:       tile.nd2nz %v1
// CHECK:           tile.nd2nz %v3_out[%t_prev, %c0, %c0, %{{.+}}] to %a_l1
// CHECK:           tile.load2d %r0_0_l1[%{{.+}}, %c0] to %b_l0b {mode = "copy"}
// CHECK:           tile.mmad %a_l0a, %b_l0b, %c_l0c, %false
// CHECK:           tile.fixpipe %c_l0c to %workspace[%ws_slot
// CHECK:         } {tile.loop = 2 : i64}
// CHECK-NEXT:    tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:    tile.sync_block_wait {flag = 2 : i64
// CHECK-NEXT:    tile.sync_block_wait {flag = 3 : i64

// CHECK-LABEL: func.func @rnn_1_mix_aiv(
// CHECK-SAME:    tile.kernel = "vector", tile.params = {recurrent.cores = 1 : i64}, tile.tiles = 3 : i64, tile.ops = "graph.rnn", tile.mix = "aiv"
// CHECK-DAG:     %acc_ub = tile.alloc : memref<1x16x32xf32, "UB">
// CHECK-DAG:     %h_ub = tile.alloc : memref<1x16x32xf32, "UB">
// CHECK-DAG:     %y_ub = tile.alloc : memref<1x1x16x32xf32, "UB">
// CHECK:         tile.copy_flat %workspace
// CHECK:         scf.for %{{.+}} = %c0 to %c1 step %c1 {
// CHECK-NEXT:      tile.copy %v2[%c0, %c0] to %row_ub[%c0, %c0]
// CHECK-NEXT:      tile.vadd %acc_ub, %row_ub to %h_ub
// CHECK-NEXT:      tile.copy %v2[%c0, %c20] to %row_ub[%c0, %c0]
// CHECK-NEXT:      tile.vadd %h_ub, %row_ub to %h_ub
// CHECK-NEXT:      tile.vtanh %h_ub to %h_ub
// CHECK-NEXT:      tile.vcopy %h_ub to %y_ub
// CHECK-NEXT:      tile.copy %y_ub[%c0, %c0, %c0, %c0] to %v3_out[%c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.copy %h_ub[%c0, %c0, %c0] to %v3_out_1[%c0, %c0, %c0]
// CHECK-NEXT:    } {tile.loop = 1 : i64}
// CHECK-NEXT:    tile.sync_block_set {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE3"}
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK:           tile.copy %y_ub[%c0, %c0, %c0, %c0] to %v3_out[%t, %c0, %c0, %c0]
// CHECK:           tile.sync_block_set {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE3"}
// CHECK-NEXT:    } {tile.loop = 2 : i64}
// CHECK-NEXT:    func.return

// A bidirectional RNN (hidden 20, seq 3): direction 1 runs t = 2 - s, its step 0 at t = 2
// and h_{t-1} read from Y[t + 1] = Y[3 - s]; each direction has its own resident R and W.
func.func @rnn_bi(%in0: memref<3x2x12xf32, "GM">, %v0: memref<2x20x12xf32, "GM">, %v1: memref<2x20x20xf32, "GM">, %v3_out: memref<3x2x2x20xf32, "GM">, %v3_out_1: memref<2x2x20xf32, "GM">) attributes {tile.kernel = "cube", tile.params = {"recurrent.cores" = 1 : i64}} {
  %in0_1 = tile.read %in0 : memref<3x2x12xf32, "GM"> -> !layout.tensor<3x2x12xf32>
  %v0_1 = tile.read %v0 : memref<2x20x12xf32, "GM"> -> !layout.tensor<2x20x12xf32>
  %v1_1 = tile.read %v1 : memref<2x20x20xf32, "GM"> -> !layout.tensor<2x20x20xf32>
  %v3, %v3_1 = graph.rnn %in0_1, %v0_1, %v1_1 {hidden_size = 20, direction = "bidirectional", layout.kernel = "origin"} : (!layout.tensor<3x2x12xf32>, !layout.tensor<2x20x12xf32>, !layout.tensor<2x20x20xf32>) -> (!layout.tensor<3x2x2x20xf32>, !layout.tensor<2x2x20xf32>)
  tile.write %v3 to %v3_out : !layout.tensor<3x2x2x20xf32> to memref<3x2x2x20xf32, "GM">
  tile.write %v3_1 to %v3_out_1 : !layout.tensor<2x2x20xf32> to memref<2x2x20xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @rnn_bi_mix_aic(
// CHECK:         tile.nd2nz %v1[%c0, %c0, %c0] to %r0_0_l1
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK:         tile.nd2nz %v1[%c1, %c0, %c0] to %r1_0_l1
// CHECK:         tile.nd2nz %in0[%c2, %c0, %{{.+}}] to %a_l1
// CHECK:         scf.for %s = %c1 to %c3 step %c1 {
// CHECK-NEXT:      %t_1 = arith.subi %c2, %s : index
// CHECK-NEXT:      %[[PREV:.+]] = arith.subi %c3, %s : index
// CHECK:           tile.nd2nz %in0[%t_1, %c0, %{{.+}}] to %a_l1
// CHECK:           tile.nd2nz %v3_out[%[[PREV]], %c1, %c0, %{{.+}}] to %a_l1
// CHECK:           tile.load2d %r1_0_l1[%{{.+}}, %c0] to %b_l0b

// An LSTM of one step (seq 1: no time loop) whose weights do not fit the `test` preset's
// L1 beside the step's tiles (4 gates x 2 x 2 fractals of f32 = 16 KiB): W and R stream
// from GM per step.
func.func @lstm_seq1(%in0: memref<1x2x12xf32, "GM">, %v0: memref<1x80x12xf32, "GM">, %v1: memref<1x80x20xf32, "GM">, %v3_out: memref<1x1x2x20xf32, "GM">, %v3_out_1: memref<1x2x20xf32, "GM">, %v3_out_2: memref<1x2x20xf32, "GM">) attributes {tile.kernel = "cube", tile.params = {"recurrent.cores" = 1 : i64}} {
  %in0_1 = tile.read %in0 : memref<1x2x12xf32, "GM"> -> !layout.tensor<1x2x12xf32>
  %v0_1 = tile.read %v0 : memref<1x80x12xf32, "GM"> -> !layout.tensor<1x80x12xf32>
  %v1_1 = tile.read %v1 : memref<1x80x20xf32, "GM"> -> !layout.tensor<1x80x20xf32>
  %v3, %v3_1, %v3_2 = graph.lstm %in0_1, %v0_1, %v1_1 {hidden_size = 20, layout.kernel = "origin"} : (!layout.tensor<1x2x12xf32>, !layout.tensor<1x80x12xf32>, !layout.tensor<1x80x20xf32>) -> (!layout.tensor<1x1x2x20xf32>, !layout.tensor<1x2x20xf32>, !layout.tensor<1x2x20xf32>)
  tile.write %v3 to %v3_out : !layout.tensor<1x1x2x20xf32> to memref<1x1x2x20xf32, "GM">
  tile.write %v3_1 to %v3_out_1 : !layout.tensor<1x2x20xf32> to memref<1x2x20xf32, "GM">
  tile.write %v3_2 to %v3_out_2 : !layout.tensor<1x2x20xf32> to memref<1x2x20xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @lstm_seq1_mix_aic(
// CHECK-NOT:     scf.for %t
// CHECK-NOT:     {{r|w}}0_0_l1
// CHECK:         tile.nd2nz %v0[%c0, %{{.+}}, %{{.+}}] to %b_l1
// CHECK:         tile.load2d %b_l1[%c0, %c0] to %b_l0b {mode = "copy"}
// CHECK-NOT:     scf.for %t
// CHECK:         func.return
