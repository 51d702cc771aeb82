// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=TEST
// (The test preset's UB is too small for these groups' working sets: there the kernels
// stay apart, and every one of them is tiled, none on the host.)
// TEST-NOT: tile.kernel = "host"

// A BERT FFN block (20 tokens: ragged against the 16-wide fractals): the bias add and the
// GELU are the first matmul's epilogue (GELU on ND, its conversion into NZ sunk below it
// into the second matmul's prologue), bias and residual the second's; every weight's and
// activation's ND -> NZ conversion is a prologue (no trans_data kernel of its own).
func.func @ffn(%x: !layout.tensor<1x20x48xf32>, %w1: !layout.tensor<48x96xf32>, %b1: !layout.tensor<96xf32>, %w2: !layout.tensor<96x48xf32>, %b2: !layout.tensor<48xf32>) -> !layout.tensor<1x20x48xf32> {
  %m1 = graph.matmul %x, %w1 : (!layout.tensor<1x20x48xf32>, !layout.tensor<48x96xf32>) -> !layout.tensor<1x20x96xf32>
  %a1 = graph.add %m1, %b1 : (!layout.tensor<1x20x96xf32>, !layout.tensor<96xf32>) -> !layout.tensor<1x20x96xf32>
  %g = graph.gelu %a1 : !layout.tensor<1x20x96xf32>
  %m2 = graph.matmul %g, %w2 : (!layout.tensor<1x20x96xf32>, !layout.tensor<96x48xf32>) -> !layout.tensor<1x20x48xf32>
  %a2 = graph.add %m2, %b2 : (!layout.tensor<1x20x48xf32>, !layout.tensor<48xf32>) -> !layout.tensor<1x20x48xf32>
  %r = graph.add %a2, %x : !layout.tensor<1x20x48xf32>
  func.return %r : !layout.tensor<1x20x48xf32>
}
// CHECK-LABEL: func.func @ffn(
// CHECK-NOT:   tile.launch @trans_data
// CHECK:       tile.launch @[[FC1:fused_trans_data_matmul_trans_data_add_gelu_[0-9]+]]_mix_aic
// CHECK-NOT:   tile.launch @trans_data
// CHECK:       tile.launch @[[FC2:fused_trans_data_matmul_trans_data_add_[0-9]+]]_mix_aic
// CHECK-NOT:   tile.launch
// CHECK:       func.return
// CHECK:       func.func @[[FC1]]_mix_aic({{.*}}tile.kernel = "cube"{{.*}}tile.ops = "layout.trans_data,layout.trans_data,graph.matmul,layout.trans_data,graph.add,graph.gelu"
// CHECK:       func.func @[[FC1]]_mix_aiv({{.*}}tile.kernel = "vector"
// CHECK:       func.func @[[FC2]]_mix_aic({{.*}}tile.kernel = "cube"{{.*}}tile.ops = "layout.trans_data,layout.trans_data,graph.matmul,layout.trans_data,graph.add,graph.add"

// -----
// A projection and its head split: the bias add stays in the matmul's epilogue; the
// reshape and the transpose (shape ops) are kernels of their own, never grouped with it.
func.func @heads(%x: !layout.tensor<1x20x48xf32>, %w: !layout.tensor<48x48xf32>, %b: !layout.tensor<48xf32>) -> !layout.tensor<1x4x20x12xf32> {
  %m = graph.matmul %x, %w : (!layout.tensor<1x20x48xf32>, !layout.tensor<48x48xf32>) -> !layout.tensor<1x20x48xf32>
  %a = graph.add %m, %b : (!layout.tensor<1x20x48xf32>, !layout.tensor<48xf32>) -> !layout.tensor<1x20x48xf32>
  %s = graph.constant dense<[1, 20, 4, 12]> : !layout.tensor<4xi64>
  %h = graph.reshape %a, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %t = graph.transpose %h {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  func.return %t : !layout.tensor<1x4x20x12xf32>
}
// CHECK-LABEL: func.func @heads(
// CHECK:       tile.launch @[[PROJ:fused_trans_data_matmul_trans_data_add_[0-9]+]]_mix_aic
// CHECK:       tile.launch @[[SPLIT:fused_reshape_transpose_[0-9]+]]
// CHECK-NOT:   tile.launch
// CHECK:       func.func @[[PROJ]]_mix_aic({{.*}}tile.kernel = "cube"{{.*}}tile.ops = "layout.trans_data,layout.trans_data,graph.matmul,layout.trans_data,graph.add"
// CHECK:       func.func @[[SPLIT]]({{.*}}tile.kernel = "vector"{{.*}}tile.ops = "graph.reshape,graph.transpose"
