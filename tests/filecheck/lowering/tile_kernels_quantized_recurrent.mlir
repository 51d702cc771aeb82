// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=ascend310p}' | filecheck %s --check-prefix=HELD

// DynamicQuantizeLSTM's recurrence (tiling/quantized_recurrent_kernel.py) on the `test`
// preset, a decoupled one: a forward layer (hidden 20: two hidden blocks of one fractal,
// the second ragged; batch 1; initial states given; G the input projection computed
// apart) becomes a mix kernel. Once: the AIV writes the ones row (row `batch` = 1 of the
// int8 workspace) and loads -R_zp and K·(-R_zp). Per step the AIV quantises h_{t-1}
// (initial_h at step 0, Y[t-1] after) by its own range — min / max over the batch with 0,
// DynamicQuantizeLinear's scale and zero point, q - 128 as int8 into the workspace, its
// row sums times -R_zp, a = 128 - zp — and sets the state flag (4); the AIC waits for it,
// copies u to L1 once, and per block and gate multiplies it by R (int8, resident in L1 as
// 16 x 32 fractals) into an int32 L0C tile, handed over through the mix workspace; the AIV
// corrects it in int32
// (row `batch` of the tile is the column sums), converts it, scales it by h_scale · R_scale
// and adds it to the step's G columns, then the peephole-free gate sum's bias (Wb + Rb) and
// the cell. The `test` preset's 8 KiB of UB leaves no room to hold the gates' constant
// rows (R_scale, Wb + Rb) across the steps: each gate loads them where it uses them.
func.func @steps(%G: memref<3x1x80xf32, "GM">, %R: memref<1x80x20xi8, "GM">, %B: memref<1x160xf32, "GM">, %h0: memref<1x1x20xf32, "GM">, %c0: memref<1x1x20xf32, "GM">, %R_scale: memref<1x80xf32, "GM">, %R_zp: memref<1xi8, "GM">, %Y_out: memref<3x1x1x20xf32, "GM">, %Y_h_out: memref<1x1x20xf32, "GM">, %Y_c_out: memref<1x1x20xf32, "GM">) attributes {tile.kernel = "cube", tile.params = {"recurrent.cores" = 1 : i64}} {
  %G_1 = tile.read %G : memref<3x1x80xf32, "GM"> -> !layout.tensor<3x1x80xf32>
  %R_1 = tile.read %R : memref<1x80x20xi8, "GM"> -> !layout.tensor<1x80x20xi8>
  %B_1 = tile.read %B : memref<1x160xf32, "GM"> -> !layout.tensor<1x160xf32>
  %h0_1 = tile.read %h0 : memref<1x1x20xf32, "GM"> -> !layout.tensor<1x1x20xf32>
  %c0_1 = tile.read %c0 : memref<1x1x20xf32, "GM"> -> !layout.tensor<1x1x20xf32>
  %R_scale_1 = tile.read %R_scale : memref<1x80xf32, "GM"> -> !layout.tensor<1x80xf32>
  %R_zp_1 = tile.read %R_zp : memref<1xi8, "GM"> -> !layout.tensor<1xi8>
  %Y, %Y_h, %Y_c = graph.dynamic_quantize_lstm_steps %G_1, %R_1, %B_1, %h0_1, %c0_1, none, %R_scale_1, %R_zp_1 {direction = "forward", hidden_size = 20, layout.kernel = "origin"} : (!layout.tensor<3x1x80xf32>, !layout.tensor<1x80x20xi8>, !layout.tensor<1x160xf32>, !layout.tensor<1x1x20xf32>, !layout.tensor<1x1x20xf32>, !layout.tensor<1x80xf32>, !layout.tensor<1xi8>) -> (!layout.tensor<3x1x1x20xf32>, !layout.tensor<1x1x20xf32>, !layout.tensor<1x1x20xf32>)
  tile.write %Y to %Y_out : !layout.tensor<3x1x1x20xf32> to memref<3x1x1x20xf32, "GM">
  tile.write %Y_h to %Y_h_out : !layout.tensor<1x1x20xf32> to memref<1x1x20xf32, "GM">
  tile.write %Y_c to %Y_c_out : !layout.tensor<1x1x20xf32> to memref<1x1x20xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @steps_mix_aic(
// CHECK-SAME:    %u_workspace: memref<1x2x20xi8, "GM">, %workspace: memref<2x1x16x16xi32, "GM">
// CHECK-SAME:    tile.ops = "graph.dynamic_quantize_lstm_steps", tile.mix = "aic"
// CHECK:         tile.nd2nz %R[%c0{{.*}}, %c0{{.*}}, %c0{{.*}}] to %r0_0_l1 : memref<1x80x20xi8, "GM"> to memref<1x2x16x32xi8, "L1">
// CHECK:         tile.nd2nz %R[%c0{{.*}}, %c60, %c0{{.*}}] to %r0_3_l1
// CHECK-NEXT:    tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK:         tile.nd2nz %u_workspace[{{.*}}] to %u_l1 : memref<1x2x20xi8, "GM"> to memref<1x1x16x32xi8, "L1">
// CHECK:         tile.load2d %u_l1[%k, %c0{{.*}}] to %a_l0a {mode = "swap"}
// CHECK:         tile.mmad %a_l0a, %b_l0b, %c_l0c, %first : memref<1x1x16x32xi8, "L0A">, memref<1x1x16x32xi8, "L0B">, memref<1x1x16x16xi32, "L0C">
// CHECK:         tile.fixpipe %c_l0c to %workspace
// CHECK-NOT:     tile.nd2nz %u_workspace
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK-NEXT:      tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK:           tile.nd2nz %u_workspace[{{.*}}] to %u_l1
// CHECK:           tile.mmad

// CHECK-LABEL: func.func @steps_mix_aiv(
// CHECK:         tile.vdup %ones_ub {value = 1.000000e+00 : f64} : memref<1x1x20xi8, "UB">
// CHECK-NEXT:    tile.copy %ones_ub[{{.*}}] to %u_workspace[%c0{{.*}}, %c1, %c0{{.*}}]
// CHECK:         tile.copy %R_zp[%c0{{.*}}] to %r_zero_ub
// CHECK-NEXT:    tile.vcast %r_zero_ub to %b_ub
// CHECK-NEXT:    tile.vmuls %b_ub, -1.000000e+00 : f64 to %b_ub
// CHECK-NEXT:    tile.vmuls %b_ub, 2.000000e+01 : f64 to %kb_ub
// Step 0: initial_h quantised.
// CHECK:         tile.copy %h0[{{.*}}] to %h_ub
// CHECK:         tile.vreduce %h_ub to %extreme_ub {kind = "min", axes = array<i64: 0, 1, 2>}
// CHECK:         tile.vreduce %h_ub to %extreme_ub {kind = "max", axes = array<i64: 0, 1, 2>}
// CHECK:         tile.vsel %zero_range_ub, %tmp_ub, %scale_ub to %safe_scale_ub
// CHECK:         tile.vround %zero_point_ub to %zero_point_ub
// CHECK-NEXT:    tile.vdiv %h_ub, %safe_scale_ub to %h_ub
// CHECK-NEXT:    tile.vround %h_ub to %h_ub
// CHECK-NEXT:    tile.vadd %h_ub, %zero_point_ub to %h_ub
// CHECK-NEXT:    tile.vmaxs %h_ub, 0.000000e+00 : f64 to %h_ub
// CHECK-NEXT:    tile.vmins %h_ub, 2.550000e+02 : f64 to %h_ub
// CHECK-NEXT:    tile.vadds %h_ub, -1.280000e+02 : f64 to %h_ub
// CHECK-NEXT:    tile.vcast %h_ub to %u_ub {rounding = "rint"} : memref<1x1x20xf32, "UB"> to memref<1x1x20xi8, "UB">
// CHECK-NEXT:    tile.copy %u_ub[{{.*}}] to %u_workspace[%c0{{.*}}, %c0{{.*}}, %c0{{.*}}]
// CHECK-NEXT:    tile.vreduce %h_ub to %rows_ub {kind = "sum", axes = array<i64: 2>}
// CHECK:         tile.vmul %b_rows_ub, %b_ub to %b_rows_ub
// CHECK:         tile.vcast %a_ub to %a_i32_ub
// CHECK:         tile.sync_block_set {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE3"}
// Gate i of the first block: the int32 correction, then float32 in the reference's order.
// CHECK:         tile.copy_flat %workspace
// CHECK:         tile.copy %G[%c0{{.*}}, %c0{{.*}}, %c0{{.*}}] to %t1_ub
// CHECK-NEXT:    tile.copy %acc_ub[%c0{{.*}}, %c1, %c0{{.*}}] to %column_sums_ub
// CHECK-NEXT:    tile.vadd %column_sums_ub, %kb_ub to %column_sums_ub
// CHECK-NEXT:    tile.vmul %column_sums_ub, %a_i32_ub to %column_sums_ub
// CHECK-NEXT:    tile.vadd %acc_ub, %column_sums_ub to %acc_ub : memref<1x16x16xi32, "UB">
// CHECK-NEXT:    tile.vadd %acc_ub, %b_rows_ub to %acc_ub
// CHECK-NEXT:    tile.vcast %acc_ub to %product_ub {rounding = "rint"} : memref<1x16x16xi32, "UB"> to memref<1x16x16xf32, "UB">
// CHECK-NEXT:    tile.copy %R_scale[%c0{{.*}}, %c0{{.*}}] to %r_scale_ub
// CHECK-NEXT:    tile.vmul %safe_scale_ub, %r_scale_ub to %step_scale_ub
// CHECK-NEXT:    tile.vmul %product_ub, %step_scale_ub to %product_ub
// CHECK-NEXT:    tile.vadd %t1_ub, %product_ub to %t1_ub
// CHECK-NEXT:    tile.copy %B[%c0{{.*}}, %c0{{.*}}] to %row2_ub
// CHECK-NEXT:    tile.copy %B[%c0{{.*}}, %c80] to %bias_ub
// CHECK-NEXT:    tile.vadd %row2_ub, %bias_ub to %bias_ub
// CHECK-NEXT:    tile.vadd %t1_ub, %bias_ub to %t1_ub
// CHECK-NEXT:    tile.vsigmoid %t1_ub to %t1_ub
// Later steps quantise Y[t-1] (its leading axis dropped by a one-element sum), and end at
// the all-core barrier (none on one core).
// CHECK:         scf.for %t = %c1 to %c3 step %c1 {
// CHECK:           tile.copy %Y_out[%t_prev, %c0{{.*}}, %c0{{.*}}, %c0{{.*}}] to %h_y_ub
// CHECK-NEXT:      tile.vreduce %h_y_ub to %h_ub {kind = "sum", axes = array<i64: 0>}
// CHECK-NOT:       tile.sync_all
// CHECK:         } {tile.loop

// On 310P (one coupled kernel) they are held: loaded once per direction before its steps,
// each gate's row in a tile of its own; the time loop loads none.
// HELD-LABEL: func.func @steps(
// HELD:         tile.copy %R_scale[%c0{{.*}}, %c0{{.*}}] to %r_scale_0_0_ub
// HELD-NEXT:    tile.copy %B[%c0{{.*}}, %c0{{.*}}] to %row2_ub
// HELD-NEXT:    tile.copy %B[%c0{{.*}}, %c80] to %bias_0_0_ub
// HELD-NEXT:    tile.vadd %row2_ub, %bias_0_0_ub to %bias_0_0_ub
// HELD:         tile.copy %B[%c0{{.*}}, %c140] to %bias_3_0_ub
// HELD:         tile.vmul %safe_scale_ub, %r_scale_0_0_ub to %step_scale_ub
// HELD:         tile.vadd %t1_ub, %bias_0_0_ub to %t1_ub
// HELD:         scf.for %t = %c1 to %c3 step %c1 {
// HELD-NOT:       tile.copy %B
// HELD-NOT:       tile.copy %R_scale
// HELD:         func.return
