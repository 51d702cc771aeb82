// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=batch-merge-after-matmul,broadcast-before-reshape,scale-before-movement,reshape-chain,reshape-to-same-shape},dce' --split-input-file | filecheck %s

// BLOOM's baddbmm: q and k [B=2, H=3, S=5, D=4] merged to [B·H, S, D] (k's last two dims
// then swapped), scaled (scale-before-movement takes the scale before the merge), the
// ALiBi bias [B·H, 1, S] added, the scores viewed [B, H, S, S]. The product multiplies
// the unmerged heads, the bias is viewed [B, H, 1, S], and the merge after the product
// cancels against the final view.
func.func @baddbmm(%q: !layout.tensor<2x3x5x4xf32>, %k: !layout.tensor<2x3x5x4xf32>, %alibi: !layout.tensor<2x3x5xf32>) -> !layout.tensor<2x3x5x5xf32> {
  %m = graph.constant dense<[6, 5, 4]> : !layout.tensor<3xi64>
  %q3 = graph.reshape %q, %m : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x4xf32>
  %k3 = graph.reshape %k, %m : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x4xf32>
  %kt = graph.transpose %k3 {perm = [0, 2, 1]} : (!layout.tensor<6x5x4xf32>) -> !layout.tensor<6x4x5xf32>
  %s = graph.matmul %q3, %kt : (!layout.tensor<6x5x4xf32>, !layout.tensor<6x4x5xf32>) -> !layout.tensor<6x5x5xf32>
  %c = graph.constant dense<0.125> : !layout.tensor<f32>
  %sc = graph.mul %s, %c : (!layout.tensor<6x5x5xf32>, !layout.tensor<f32>) -> !layout.tensor<6x5x5xf32>
  %bm = graph.constant dense<[6, 1, 5]> : !layout.tensor<3xi64>
  %b3 = graph.reshape %alibi, %bm : (!layout.tensor<2x3x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x1x5xf32>
  %a = graph.add %b3, %sc : (!layout.tensor<6x1x5xf32>, !layout.tensor<6x5x5xf32>) -> !layout.tensor<6x5x5xf32>
  %v = graph.constant dense<[2, 3, 5, 5]> : !layout.tensor<4xi64>
  %y = graph.reshape %a, %v : (!layout.tensor<6x5x5xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x3x5x5xf32>
  func.return %y : !layout.tensor<2x3x5x5xf32>
}
// CHECK-LABEL: func.func @baddbmm
// CHECK:      %[[KT:.*]] = graph.transpose %k {perm = [0, 1, 3, 2]} : (!layout.tensor<2x3x5x4xf32>) -> !layout.tensor<2x3x4x5xf32>
// CHECK:      %[[S:.*]] = graph.matmul %q, %[[KT]] : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<2x3x4x5xf32>) -> !layout.tensor<2x3x5x5xf32>
// CHECK:      %[[SC:.*]] = graph.mul %[[S]], %c
// CHECK:      %[[B:.*]] = graph.reshape %alibi, %{{.*}} : (!layout.tensor<2x3x5xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x3x1x5xf32>
// CHECK:      %[[Y:.*]] = graph.add %[[B]], %[[SC]] : (!layout.tensor<2x3x1x5xf32>, !layout.tensor<2x3x5x5xf32>) -> !layout.tensor<2x3x5x5xf32>
// CHECK-NEXT: func.return %[[Y]]

// -----
// The batch dims differ ([2, 3] and [3, 2], both merged to 6): the product stays merged.
func.func @other_batches(%q: !layout.tensor<2x3x5x4xf32>, %k: !layout.tensor<3x2x4x5xf32>) -> !layout.tensor<6x5x5xf32> {
  %m = graph.constant dense<[6, 5, 4]> : !layout.tensor<3xi64>
  %n = graph.constant dense<[6, 4, 5]> : !layout.tensor<3xi64>
  %q3 = graph.reshape %q, %m : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x4xf32>
  %k3 = graph.reshape %k, %n : (!layout.tensor<3x2x4x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x4x5xf32>
  %s = graph.matmul %q3, %k3 : (!layout.tensor<6x5x4xf32>, !layout.tensor<6x4x5xf32>) -> !layout.tensor<6x5x5xf32>
  func.return %s : !layout.tensor<6x5x5xf32>
}
// CHECK-LABEL: func.func @other_batches
// CHECK:      graph.matmul %q3, %k3 : (!layout.tensor<6x5x4xf32>, !layout.tensor<6x4x5xf32>)

// -----
// DeBERTa-v2's c2p: the merged query heads times a constant per merged head (the position
// keys, folded): the constant is viewed [B, H, K, N] and the product multiplies the
// unmerged heads.
func.func @constant_operand(%q: !layout.tensor<2x3x5x4xf32>) -> !layout.tensor<6x5x7xf32> {
  %m = graph.constant dense<[6, 5, 4]> : !layout.tensor<3xi64>
  %q3 = graph.reshape %q, %m : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x4xf32>
  %pos = graph.constant dense<0.5> : !layout.tensor<6x4x7xf32>
  %s = graph.matmul %q3, %pos : (!layout.tensor<6x5x4xf32>, !layout.tensor<6x4x7xf32>) -> !layout.tensor<6x5x7xf32>
  func.return %s : !layout.tensor<6x5x7xf32>
}
// CHECK-LABEL: func.func @constant_operand
// CHECK:      %[[P:.*]] = graph.reshape %pos, %{{.*}} : (!layout.tensor<6x4x7xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x3x4x7xf32>
// CHECK:      %[[S:.*]] = graph.matmul %q, %[[P]] : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<2x3x4x7xf32>) -> !layout.tensor<2x3x5x7xf32>
// CHECK:      graph.reshape %[[S]], %{{.*}} -> !layout.tensor<6x5x7xf32>

// -----
// The constant's batch is not the merged one (a broadcast over it): the product stays merged.
func.func @constant_broadcast(%q: !layout.tensor<2x3x5x4xf32>) -> !layout.tensor<6x5x7xf32> {
  %m = graph.constant dense<[6, 5, 4]> : !layout.tensor<3xi64>
  %q3 = graph.reshape %q, %m : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x4xf32>
  %pos = graph.constant dense<0.5> : !layout.tensor<1x4x7xf32>
  %s = graph.matmul %q3, %pos : (!layout.tensor<6x5x4xf32>, !layout.tensor<1x4x7xf32>) -> !layout.tensor<6x5x7xf32>
  func.return %s : !layout.tensor<6x5x7xf32>
}
// CHECK-LABEL: func.func @constant_broadcast
// CHECK:      graph.matmul %q3, %pos : (!layout.tensor<6x5x4xf32>, !layout.tensor<1x4x7xf32>)
