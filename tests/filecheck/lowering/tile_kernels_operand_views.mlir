// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// CHECK-NOT: tile.kernel = "host"

// Attention's head split and merge as views (S = 20 ragged, D = 12 not a multiple of 16):
// Q, K and V's reshape + transpose join the matmuls' kernels, which read them as strided
// views of the [1, 20, 48] inputs (rows of D = 12 elements at a row stride of H·D = 48,
// head h at column h·D); K's transpose (0, 2, 3, 1) is the same view read as B held
// (N, K), whose NZ is already the ZN that L0B takes (load2d "copy"). The merge (transpose, reshape) is the ·V kernel's: fixpipe writes head h's
// columns at offset h·D of the merged result. No reshape or transpose kernel is left.
func.func @attn(%q: !layout.tensor<1x20x48xf32>, %k: !layout.tensor<1x20x48xf32>, %v: !layout.tensor<1x20x48xf32>) -> !layout.tensor<1x20x48xf32> {
  %s = graph.constant dense<[1, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[1, 20, 48]> : !layout.tensor<3xi64>
  %qh = graph.reshape %q, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<1x4x20x12xf32>, !layout.tensor<1x4x12x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %p = graph.softmax %sc {axis = -1 : i64} : !layout.tensor<1x4x20x20xf32>
  %o = graph.matmul %p, %vt : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x20x4x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<1x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x20x48xf32>
  func.return %r : !layout.tensor<1x20x48xf32>
}
// CHECK-LABEL: func.func @attn(
// The decoupled presets run the whole attention as the flash mix kernel
// (tiling/attention.py, tile_kernels_attention.mlir); it reads Q, K, V and writes the
// merged result through the same views as the matmuls of the three-kernel form do.
// CHECK:         tile.launch @[[K:fused_reshape_transpose_trans_data_reshape_etc_[0-9]+]]_mix_aic(%q, %k, %v, %r, %mix_workspace)
// CHECK-NOT:     tile.launch
// CHECK:       func.func @[[K]]_mix_aic(
// CHECK-NEXT:    %q_view = tile.strided_view %q : memref<1x20x48xf32, "GM"> to memref<1x4x20x12xf32, strided<[960, 12, 48, 1]>, "GM">
// CHECK-NEXT:    %k_view = tile.strided_view %k : memref<1x20x48xf32, "GM"> to memref<1x4x20x12xf32, strided<[960, 12, 48, 1]>, "GM">
// CHECK-NEXT:    %v_view = tile.strided_view %v : memref<1x20x48xf32, "GM"> to memref<1x4x20x12xf32, strided<[960, 12, 48, 1]>, "GM">
// CHECK:         tile.nd2nz %q_view[%c0, %b1, %{{.*}}, %c0] to %q_l1
// CHECK:         tile.nd2nz %k_view[%c0, %b1, %{{.*}}, %c0] to %k_l1
// CHECK:         tile.load2d %k_l1[%c0, %c0] to %k_l0b {mode = "copy"}
// CHECK:         tile.nd2nz %v_view[%c0, %b1, %{{.*}}, %c0] to %v_l1
// CHECK:       func.func @[[K]]_mix_aiv(
// CHECK:         %r_out_view = tile.strided_view %r_out : memref<1x20x48xf32, "GM"> to memref<1x4x20x12xf32, strided<[960, 12, 48, 1]>, "GM">
// CHECK:         tile.copy %o_ub[%c0, %c0, %c0, %c0] to %r_out_view[%c0, %b1, %{{.*}}, %c0]

// -----
// No view: merging the head axis into the rows after the transpose ([1, 4, 20, 12] ->
// [1, 80, 12]) would need a copy, so the reshapes and the transpose stay one transpose
// kernel of their own (reading and writing the reshapes as row-major views).
func.func @copy(%x: !layout.tensor<1x20x48xf32>, %w: !layout.tensor<12x16xf32>) -> !layout.tensor<1x80x16xf32> {
  %s = graph.constant dense<[1, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[1, 80, 12]> : !layout.tensor<3xi64>
  %h = graph.reshape %x, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %t = graph.transpose %h {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %m = graph.reshape %t, %s2 : (!layout.tensor<1x4x20x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x80x12xf32>
  %y = graph.matmul %m, %w : (!layout.tensor<1x80x12xf32>, !layout.tensor<12x16xf32>) -> !layout.tensor<1x80x16xf32>
  func.return %y : !layout.tensor<1x80x16xf32>
}
// CHECK-LABEL: func.func @copy(
// CHECK:         tile.launch @fused_reshape_transpose_reshape_{{[0-9]+}}
// CHECK:         tile.launch
