// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=TEST
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend310p},O2{coupled-attention=always},lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=COUPLED
// RUN: tilegraph-opt %s -p 'set-target{platform="ascend310p:l1=16KiB,l0a=4KiB,l0b=4KiB,l0c=8KiB,ub=16KiB"},O2{coupled-attention=always},lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=SMALL
// CHECK-NOT: tile.kernel = "host"

// Flash attention (tiling/attention.py): Q·Kᵀ, its scale and additive mask, the softmax and
// ·V are one mix kernel on a decoupled preset. S = 20 is ragged against the 16-wide
// fractals and D = 12 is not a multiple of 16; Q, K, V are read through the head split's
// views and O written through the head merge's. The AIC hands S to the AIVs through
// workspace regions 0 and 1 (two slots: the cube computes S of the next K block before it
// waits for P), takes P back from region 2 and hands P·V over in region 3, each hand-over
// between a "free" wait and a "ready" set (S's flags 0 / 2 plus the slot).
func.func @attn(%q: !layout.tensor<1x20x48xf32>, %k: !layout.tensor<1x20x48xf32>, %v: !layout.tensor<1x20x48xf32>, %mask: !layout.tensor<1x1x1x20xf32>) -> !layout.tensor<1x20x48xf32> {
  %s = graph.constant dense<[1, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[1, 20, 48]> : !layout.tensor<3xi64>
  %scale = graph.constant dense<0.5> : !layout.tensor<f32>
  %qh = graph.reshape %q, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<1x4x20x12xf32>, !layout.tensor<1x4x12x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %scaled = graph.mul %sc, %scale : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<f32>) -> !layout.tensor<1x4x20x20xf32>
  %masked = graph.add %scaled, %mask : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<1x1x1x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %p = graph.softmax %masked {axis = -1 : i64} : !layout.tensor<1x4x20x20xf32>
  %o = graph.matmul %p, %vt : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x20x4x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<1x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x20x48xf32>
  func.return %r : !layout.tensor<1x20x48xf32>
}
// CHECK-LABEL: func.func @attn(
// CHECK:         %mix_workspace = tile.alloc : memref<4x1x32x32xf32, "GM">
// CHECK-NEXT:    tile.launch @[[K:fused_[a-z_]+_[0-9]+]]_mix_aic(%q, %k, %v, %scale, %mask, %r, %mix_workspace) {aiv = @[[K]]_mix_aiv, aiv_blocks = 2 : i64}
// CHECK-NOT:     tile.launch
// CHECK:       func.func @[[K]]_mix_aic({{.*}}%workspace: memref<4x1x32x32xf32, "GM">){{.*}}tile.ops = "{{.*}}graph.matmul,layout.trans_data,graph.mul,graph.add,graph.softmax,layout.trans_data,graph.matmul{{.*}}", tile.mix = "aic"
// CHECK:         tile.sync_block_set {flag = 5 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
// CHECK:         tile.nd2nz %q_view
// CHECK:         tile.mmad %q_l0a, %k_l0b, %s_l0c
// CHECK-NEXT:    tile.sync_block_wait {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:    tile.fixpipe %s_l0c to %workspace[%c0, %c0, %c0, %c0]
// CHECK-NEXT:    tile.sync_block_set {flag = 0 : i64, mode = "aic_to_aiv", pipe = "FIX"}
// CHECK:         tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:    tile.nd2nz %workspace[%c2, %c0, %c0, %c0] to %p_l1 : memref<4x1x32x32xf32, "GM">
// CHECK-NEXT:    tile.sync_block_set {flag = 5 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
// CHECK:         tile.mmad %p_l0a, %v_l0b, %pv_l0c
// CHECK-NEXT:    tile.sync_block_wait {flag = 7 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:    tile.fixpipe %pv_l0c to %workspace[%c3, %c0, %c0, %c0]
// CHECK-NEXT:    tile.sync_block_set {flag = 6 : i64, mode = "aic_to_aiv", pipe = "FIX"}
// CHECK:         tile.sync_block_wait {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:    tile.sync_block_wait {flag = 3 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:    tile.sync_block_wait {flag = 7 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK:       func.func @[[K]]_mix_aiv({{.*}}tile.mix = "aiv"
// CHECK:         %sub = tile.sub_block_idx
// CHECK:         tile.sync_block_set {flag = 2 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:    tile.sync_block_set {flag = 3 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:    tile.sync_block_set {flag = 7 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK:         tile.vdup %max_ub {value = 0xfff0000000000000 : f64}
// CHECK:         tile.sync_block_wait {flag = 0 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
// CHECK-NEXT:    tile.copy %workspace[%c0, %c0, %{{.*}}, %c0] to %s_ub
// CHECK-NEXT:    tile.sync_block_set {flag = 2 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK:         tile.vsel %key_mask_ub, %masked_ub, %neg_inf_ub to %masked_ub
// CHECK-NEXT:    tile.vreduce %masked_ub to %rowmax_ub {kind = "max", axes = array<i64: 3>} : memref<1x1x16x32xf32, "UB">
// CHECK:         tile.vexp
// CHECK:         tile.vreduce %masked_ub to %rowsum_ub {kind = "sum", axes = array<i64: 3>}
// CHECK:         tile.sync_block_wait {flag = 5 : i64, mode = "aic_to_aiv", pipe = "MTE3"}
// CHECK-NEXT:    tile.copy %masked_ub[%c0, %c0, %c0, %c0] to %workspace[%c2, %c0, %{{.*}}, %c0]
// CHECK-NEXT:    tile.sync_block_set {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE3"}
// CHECK:         tile.vdiv %o_ub, %sum_ub to %o_ub
// CHECK:         tile.copy %o_ub[%c0, %c0, %c0, %c0] to %r_out_view
// CHECK:         tile.sync_block_wait {flag = 5 : i64, mode = "aic_to_aiv", pipe = "MTE3"}
// CHECK-NEXT:    func.return

// The test preset's small buffers: 16 x 16 blocks, a K / V loop of two steps, the last one
// ragged (keys 16-19): the AIV masks the scores of the keys past 20 to -inf (a probe of K's
// key rows loaded with -inf as the padding, compared with -inf). The AIC computes S of K
// block 0 before the loop and, in step j, S of block j + 1 (a loop of one trip unless j is
// the last) into slot (j + 1) mod 2 before it waits for P of block j.
// TEST-NOT:     tile.kernel = "host"
// TEST:         tile.launch @[[K:fused_[a-z_]+_[0-9]+]]_mix_aic
// TEST-NOT:     tile.launch
// TEST:         tile.fixpipe %s_l0c to %workspace[%c0, %c0, %c0, %c0]
// TEST:         scf.for %kv = %c0 to %c20 step %c16 {
// TEST:           scf.for %kv_next = %{{.+}} to %c20 step %c20 {
// TEST:             %s_slot = arith.remui
// TEST:             tile.sync_block_wait[%s_slot] {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// TEST-NEXT:        tile.fixpipe %s_l0c to %workspace[%s_slot, %c0, %c0, %c0]
// TEST-NEXT:        tile.sync_block_set[%s_slot] {flag = 0 : i64, mode = "aic_to_aiv", pipe = "FIX"}
// TEST:           tile.nd2nz %v_view
// TEST:           tile.sync_block_wait {flag = 4 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// TEST-NEXT:      tile.nd2nz %workspace[%c2, %c0, %c0, %c0] to %p_l1
// TEST:       func.func @[[K]]_mix_aiv(
// TEST:         %keys_view = tile.strided_view %k : memref<1x20x48xf32, "GM"> to memref<1x1x1x20xf32, strided<[48, 48, 48, 48]>, "GM">
// TEST:         scf.for %kv = %c0 to %c20 step %c16 {
// TEST:           tile.copy %keys_view[%c0, %c0, %c0, %kv] to %key_probe_ub{{.*}} {pad = 0xfff0000000000000 : f64}
// TEST-NEXT:      tile.vcmp %key_probe_ub, %neg_inf_ub to %key_mask_ub {predicate = "gt"}
// TEST-NEXT:      tile.vsel %key_mask_ub, %masked_ub, %neg_inf_ub to %masked_ub
// TEST-NEXT:      tile.vreduce %masked_ub to %rowmax_ub {kind = "max", axes = array<i64: 3>} : memref<1x1x8x16xf32, "UB">
// A coupled preset (310P): one in-core kernel (tiling/attention_coupled.py), a cube kernel
// with vector ops and no cross-core flag. S and P·V reach UB by the fixpipe; P goes UB -> GM
// (its region of the P workspace, one per (batch, head, Q block)) -> L1 by nd2nz. One
// 32 x 32 block covers S = 20: no K loop.
// COUPLED-NOT:  tile.kernel = "host"
// COUPLED:      %p_workspace = tile.alloc : memref<1x4x32x32xf32, "GM">
// COUPLED-NEXT: tile.launch @[[K:fused_[a-z_]+_[0-9]+]](%q, %k, %v, %scale, %mask, %r, %p_workspace)
// COUPLED-NOT:  tile.launch
// COUPLED:      func.func @[[K]]({{.*}}%p_workspace: memref<1x4x32x32xf32, "GM">) attributes {tile.kernel = "cube"
// COUPLED-NOT:  tile.sync_block
// COUPLED:        scf.for %b1 = %c0 to %c4 step %c1 {
// COUPLED:          tile.mmad %q_l0a, %k_l0b, %s_l0c
// COUPLED-NEXT:     tile.fixpipe %s_l0c to %s_ub[%c0, %c0, %c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<1x1x32x32xf32, "UB">
// COUPLED:          tile.vreduce %masked_ub to %rowmax_ub {kind = "max", axes = array<i64: 3>}
// COUPLED:          tile.copy %masked_ub[%c0, %c0, %c0, %c0] to %p_workspace[%c0, %b1, %c0, %c0]
// COUPLED-NEXT:     tile.nd2nz %p_workspace[%c0, %b1, %c0, %c0] to %p_l1
// COUPLED-NEXT:     tile.load2d %p_l1[%c0, %c0] to %p_l0a {mode = "swap"}
// COUPLED-NEXT:     tile.mmad %p_l0a, %v_l0b, %pv_l0c
// COUPLED-NEXT:     tile.fixpipe %pv_l0c to %pv_ub[%c0, %c0, %c0, %c0] {layout = "nd"}
// COUPLED-NEXT:     tile.vadd %o_ub, %pv_ub to %o_ub
// COUPLED:          tile.vdiv %o_ub, %sum_ub to %o_ub
// COUPLED:          tile.copy %o_ub[%c0, %c0, %c0, %c0] to %r_out_view[%c0, %b1, %c0, %c0]
// COUPLED-NOT:  tile.sync_block

// The coupled preset with the test preset's buffer sizes: 16 x 16 blocks, ragged Q blocks
// (rows 16-19 computed and never stored: P's region is padded to 32 rows) and a K / V loop
// of two steps, the last ragged (the key mask, as on a decoupled preset); S of block j is
// computed in step j.
// SMALL-NOT:    tile.kernel = "host"
// SMALL:        %p_workspace = tile.alloc : memref<1x4x32x16xf32, "GM">
// SMALL:        scf.for %q_1 = %c0 to %c20 step %c16 {
// SMALL:          scf.for %kv = %c0 to %c20 step %c16 {
// SMALL-NEXT:       tile.nd2nz %k_view[%c0, %b1, %kv, %c0] to %k_l1
// SMALL-NEXT:       tile.load2d %k_l1[%c0, %c0] to %k_l0b {mode = "copy"}
// SMALL-NEXT:       tile.mmad %q_l0a, %k_l0b, %s_l0c
// SMALL-NEXT:       tile.fixpipe %s_l0c to %s_ub[%c0, %c0, %c0, %c0] {layout = "nd"} : memref<1x1x16x16xf32, "L0C"> to memref<1x1x16x16xf32, "UB">
// SMALL:            tile.copy %keys_view[%c0, %c0, %c0, %kv] to %key_probe_ub{{.*}} {pad = 0xfff0000000000000 : f64}
// SMALL-NEXT:       tile.vcmp %key_probe_ub, %neg_inf_ub to %key_mask_ub {predicate = "gt"}
// SMALL-NEXT:       tile.vsel %key_mask_ub, %masked_ub, %neg_inf_ub to %masked_ub
// SMALL:            tile.copy %masked_ub[%c0, %c0, %c0, %c0] to %p_workspace[%c0, %b1, %q_1, %c0]
// SMALL-NEXT:       tile.nd2nz %p_workspace[%c0, %b1, %q_1, %c0] to %p_l1
