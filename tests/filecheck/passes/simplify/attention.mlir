// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=attention-as-matmuls},dce' --split-input-file | filecheck %s

// attention-as-matmuls: grouped-query causal attention (8 query heads, 2 KV heads) as its
// definition: the KV heads repeated as repeat_kv writes it, both sides scaled by
// sqrt(1/sqrt(16)) = 0.5, the causal triangle as a constant bias, Softmax, ·V.
func.func @gqa(%q: !layout.tensor<2x8x6x16xf32>, %k: !layout.tensor<2x2x6x16xf32>, %v: !layout.tensor<2x2x6x16xf32>) -> !layout.tensor<2x8x6x16xf32> {
  %y, %pk, %pv, %qk = graph.attention %q, %k, %v {is_causal = 1} : (!layout.tensor<2x8x6x16xf32>, !layout.tensor<2x2x6x16xf32>, !layout.tensor<2x2x6x16xf32>) -> (!layout.tensor<2x8x6x16xf32>, !layout.tensor<2x2x6x16xf32>, !layout.tensor<2x2x6x16xf32>, !layout.tensor<2x8x6x6xf32>)
  func.return %y : !layout.tensor<2x8x6x16xf32>
}
// CHECK-LABEL: func.func @gqa
// CHECK:         graph.unsqueeze %k
// CHECK:         graph.expand
// CHECK:         graph.reshape {{.*}} -> !layout.tensor<2x8x6x16xf32>
// CHECK:         graph.constant dense<0.5> : !layout.tensor<f32>
// CHECK:         %[[S:.*]] = graph.matmul
// CHECK:         %[[B:.*]] = graph.add %[[S]]
// CHECK:         %[[P:.*]] = graph.softmax %[[B]] {axis = -1}
// CHECK:         %y = graph.matmul %[[P]]
// CHECK-NOT:     graph.attention

// -----
// A sliding window: the op stays.
func.func @window(%q: !layout.tensor<1x2x4x8xf32>) -> !layout.tensor<1x2x4x8xf32> {
  %y, %pk, %pv, %qk = graph.attention %q, %q, %q {left_window_size = 1} : (!layout.tensor<1x2x4x8xf32>, !layout.tensor<1x2x4x8xf32>, !layout.tensor<1x2x4x8xf32>) -> (!layout.tensor<1x2x4x8xf32>, !layout.tensor<1x2x4x8xf32>, !layout.tensor<1x2x4x8xf32>, !layout.tensor<1x2x4x4xf32>)
  func.return %y : !layout.tensor<1x2x4x8xf32>
}
// CHECK-LABEL: func.func @window
// CHECK:         graph.attention
