// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend310p},O2' | filecheck %s --check-prefix=COUPLED
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend310p},O2{coupled-attention=always}' | filecheck %s

// T5's attention: no scale, a [B, H, S, S] position bias added to the scores. The format
// engine adds it in FRACTAL_NZ (its operands have one shape), so fuse-ops first moves the
// add behind the scores' NZ -> ND conversion (on the bias as it is, ND: its conversion to
// NZ goes), then claims the attention as one group on a decoupled preset; a coupled one
// (310P) claims only what GE's ZAttentionScoreFusionPass fuses (fp16, 12 or 16 heads of
// 64, ...: not this), so it keeps Q·Kᵀ with the ND add as its epilogue, the softmax and ·V
// apart, unless asked to claim every attention its in-core flash kernel takes.
func.func @t5(%q: !layout.tensor<2x20x48xf32>, %k: !layout.tensor<2x20x48xf32>, %v: !layout.tensor<2x20x48xf32>, %bias: !layout.tensor<2x4x20x20xf32>) -> !layout.tensor<2x20x48xf32> {
  %s = graph.constant dense<[2, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[2, 20, 48]> : !layout.tensor<3xi64>
  %qh = graph.reshape %q, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<2x4x20x12xf32>, !layout.tensor<2x4x12x20xf32>) -> !layout.tensor<2x4x20x20xf32>
  %biased = graph.add %sc, %bias : (!layout.tensor<2x4x20x20xf32>, !layout.tensor<2x4x20x20xf32>) -> !layout.tensor<2x4x20x20xf32>
  %p = graph.softmax %biased {axis = -1 : i64} : !layout.tensor<2x4x20x20xf32>
  %o = graph.matmul %p, %vt : (!layout.tensor<2x4x20x20xf32>, !layout.tensor<2x4x20x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x4x20x12xf32>) -> !layout.tensor<2x20x4x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<2x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x20x48xf32>
  func.return %r : !layout.tensor<2x20x48xf32>
}
// CHECK-LABEL: func.func @t5(
// CHECK-NOT:     layout.trans_data %bias
// CHECK:         graph.fused
// CHECK:           %sc = graph.matmul
// CHECK-NEXT:      %sc_1 = layout.trans_data %sc : {{.*}}FRACTAL_NZ{{.*}} -> !layout.tensor<2x4x20x20xf32>
// CHECK-NEXT:      %biased = graph.add %bias_1, %sc_1 {layout.kernel = "any"} : !layout.tensor<2x4x20x20xf32>
// CHECK-NEXT:      %p = graph.softmax %biased
// CHECK:           %o = graph.matmul
// CHECK:           graph.yield %r_1
// CHECK-NOT:     graph.softmax

// COUPLED-LABEL: func.func @t5(
// COUPLED-NOT:     layout.trans_data %bias
// COUPLED:         %biased = graph.fused
// COUPLED:           %sc_1 = layout.trans_data %sc : {{.*}}FRACTAL_NZ{{.*}} -> !layout.tensor<2x4x20x20xf32>
// COUPLED-NEXT:      %biased_1 = graph.add %bias_1, %sc_1 {layout.kernel = "any"} : !layout.tensor<2x4x20x20xf32>
// COUPLED-NEXT:      graph.yield %biased_1
// COUPLED:         %p = graph.softmax %biased
// COUPLED:         %r = graph.fused
