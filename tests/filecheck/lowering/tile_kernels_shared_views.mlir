// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefixes=CHECK,B910
// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefixes=CHECK,TEST
// CHECK-NOT: tile.kernel = "host"

// GPT-2's Q, K, V split out of c_attn's [1, 20, 72] output (N = 24, 2 heads of D = 12):
// the split is copied into each matmul that reads it (fuse-ops' splits-cloned), and each
// of its outputs is an offset view of %x: Q from column 0, K from column N = 24, V from
// 2N = 48, rows of D elements at a row stride of 3N = 72. No split kernel is left. (No
// softmax between the matmuls, so the scores stay in FRACTAL_NZ: with one, the
// flash-attention kernel takes all three as one group, tile_kernels_attention.mlir.)
func.func @qkv(%x: !layout.tensor<1x20x72xf32>) -> !layout.tensor<1x20x24xf32> {
  %sizes = graph.constant dense<[24, 24, 24]> : !layout.tensor<3xi64>
  %s = graph.constant dense<[1, 20, 2, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[1, 20, 24]> : !layout.tensor<3xi64>
  %q, %k, %v = graph.split %x, %sizes {axis = 2 : i64} : (!layout.tensor<1x20x72xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>)
  %qh = graph.reshape %q, %s : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x2x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x2x12xf32>) -> !layout.tensor<1x2x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x2x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<1x20x2x12xf32>) -> !layout.tensor<1x2x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x2x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x2x12xf32>) -> !layout.tensor<1x2x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<1x2x20x12xf32>, !layout.tensor<1x2x12x20xf32>) -> !layout.tensor<1x2x20x20xf32>
  %o = graph.matmul %sc, %vt : (!layout.tensor<1x2x20x20xf32>, !layout.tensor<1x2x20x12xf32>) -> !layout.tensor<1x2x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x2x20x12xf32>) -> !layout.tensor<1x20x2x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<1x20x2x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x20x24xf32>
  func.return %r : !layout.tensor<1x20x24xf32>
}
// CHECK-LABEL: func.func @qkv(
// CHECK:         tile.launch @[[QK:fused_split_reshape_transpose_trans_data_etc_[0-9]+]](%x, %sc)
// CHECK-NEXT:    tile.alloc
// CHECK-NEXT:    tile.launch @[[PV:fused_split_reshape_transpose_trans_data_etc_[0-9]+]](%x, %sc, %r)
// CHECK-NEXT:    func.return %r
// CHECK:       func.func @[[QK]](%x: memref<1x20x72xf32, "GM">, %sc_out: memref<1x2x2x2x16x16xf32, "GM">)
// CHECK-SAME:    tile.kernel = "cube"
// CHECK-NEXT:    %x_view = tile.strided_view %x : memref<1x20x72xf32, "GM"> to memref<1x2x20x12xf32, strided<[1440, 12, 72, 1]>, "GM">
// CHECK-NEXT:    %x_view_1 = tile.strided_view %x : memref<1x20x72xf32, "GM"> to memref<1x2x20x12xf32, strided<[1440, 12, 72, 1], offset: 24>, "GM">
// CHECK:         tile.nd2nz %x_view[%c0, %b1, %c0, %c0] to %a_l1
// CHECK:         tile.nd2nz %x_view_1[%c0, %b1, %c0, %c0] to %b_l1
// CHECK:         tile.load2d %b_l1[%c0, %c0] to %b_l0b {mode = "copy"}
// CHECK:       func.func @[[PV]](%x: memref<1x20x72xf32, "GM">, %sc: memref<1x2x2x2x16x16xf32, "GM">, %r_out: memref<1x20x24xf32, "GM">)
// CHECK-SAME:    tile.kernel = "cube"
// CHECK-DAG:     %r_out_view = tile.strided_view %r_out : memref<1x20x24xf32, "GM"> to memref<1x2x20x12xf32, strided<[480, 12, 24, 1]>, "GM">
// CHECK-DAG:     %x_view = tile.strided_view %x : memref<1x20x72xf32, "GM"> to memref<1x2x20x12xf32, strided<[1440, 12, 72, 1], offset: 48>, "GM">
// CHECK:         tile.nd2nz %x_view[%c0, %b1, %c0, %c0] to %b_l1

// -----
// GPT-2's addmm: a 2-D Gemm, its [20, 24] -> [1, 20, 24] reshape (it only splits the rows),
// then elementwise ops on the reshaped shape (a per-column scale, the residual add). On
// 910B they run in the gemm's epilogue (the mix kernel's AIV part) on its 2-D tiles: the
// residual and the output are viewed as [20, 24], the [24] scale as [1, 24]. On `test`
// (8 KiB of UB) the epilogue tile does not fit: the group is peeled into the gemm (writing
// the reshaped tensor) and one vector kernel, not split into a kernel per op.
func.func @addmm(%x: !layout.tensor<20x24xf32>, %w: !layout.tensor<24x24xf32>, %b: !layout.tensor<24xf32>, %res: !layout.tensor<1x20x24xf32>, %g: !layout.tensor<24xf32>) -> !layout.tensor<1x20x24xf32> {
  %s = graph.constant dense<[1, 20, 24]> : !layout.tensor<3xi64>
  %y = graph.gemm %x, %w, %b : (!layout.tensor<20x24xf32>, !layout.tensor<24x24xf32>, !layout.tensor<24xf32>) -> !layout.tensor<20x24xf32>
  %y3 = graph.reshape %y, %s : (!layout.tensor<20x24xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x20x24xf32>
  %m = graph.mul %y3, %g : (!layout.tensor<1x20x24xf32>, !layout.tensor<24xf32>) -> !layout.tensor<1x20x24xf32>
  %z = graph.add %res, %m : (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>) -> !layout.tensor<1x20x24xf32>
  func.return %z : !layout.tensor<1x20x24xf32>
}
// CHECK-LABEL: func.func @addmm(
// B910:          tile.launch @[[MM:fused_trans_data_gemm_trans_data_reshape_etc_[0-9]+]]_mix_aic(%x, %w, %b, %g, %res, %z, %mix_workspace)
// B910-NEXT:     func.return %z
// B910:        func.func @[[MM]]_mix_aiv(
// B910-DAG:      %g_view = tile.strided_view %g : memref<24xf32, "GM"> to memref<1x24xf32, strided<[24, 1]>, "GM">
// B910-DAG:      %res_view = tile.strided_view %res : memref<1x20x24xf32, "GM"> to memref<20x24xf32, strided<[24, 1]>, "GM">
// B910-DAG:      %z_out_view = tile.strided_view %z_out : memref<1x20x24xf32, "GM"> to memref<20x24xf32, strided<[24, 1]>, "GM">
// B910:          tile.copy %res_view[{{%[0-9]+}}, %c0] to %res_ub[%c0, %c0]
// B910:          tile.vmul %g_ub, %share16_ub to %m_ub
// B910:          tile.vadd %res_ub, %m_ub to %z_ub
// B910:          tile.copy %z_ub[%c0, %c0] to %z_out_view[{{%[0-9]+}}, %c0]
// TEST:          tile.launch @[[MM:fused_trans_data_gemm_reshape_[0-9]+]](%x, %w, %b, %y3)
// TEST-NEXT:     tile.alloc
// TEST-NEXT:     tile.launch @fused_mul_add_{{[0-9]+}}(%g, %y3, %res, %z)
// TEST-NEXT:     func.return %z
// TEST:        func.func @[[MM]](
// TEST-SAME:     tile.kernel = "cube"
// TEST:          %y3_out_view = tile.strided_view %y3_out : memref<1x20x24xf32, "GM"> to memref<20x24xf32, strided<[24, 1]>, "GM">
