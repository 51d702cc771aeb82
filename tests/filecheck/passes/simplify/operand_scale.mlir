// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=matmul-operand-scales,matmul-operand-scales-any}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=matmul-operand-scales,matmul-operand-scales-any fast-math=true}' --split-input-file | filecheck %s --check-prefix=FAST

// matmul-operand-scales: powers of two on q and k move onto the scores (0.5 * 0.25).
func.func @pow2(%q: !layout.tensor<2x4x8xf32>, %k: !layout.tensor<2x8x4xf32>) -> !layout.tensor<2x4x4xf32> {
  %a = graph.constant dense<5.000000e-01> : !layout.tensor<f32>
  %b = graph.constant dense<2.500000e-01> : !layout.tensor<f32>
  %qa = graph.mul %q, %a : (!layout.tensor<2x4x8xf32>, !layout.tensor<f32>) -> !layout.tensor<2x4x8xf32>
  %kb = graph.mul %b, %k : (!layout.tensor<f32>, !layout.tensor<2x8x4xf32>) -> !layout.tensor<2x8x4xf32>
  %s = graph.matmul %qa, %kb : (!layout.tensor<2x4x8xf32>, !layout.tensor<2x8x4xf32>) -> !layout.tensor<2x4x4xf32>
  func.return %s : !layout.tensor<2x4x4xf32>
}
// CHECK-LABEL: func.func @pow2
// CHECK-NEXT:  %[[P:.*]] = graph.matmul %q, %k
// CHECK-NEXT:  %[[C:.*]] = graph.constant dense<0.125> : !layout.tensor<f32>
// CHECK-NEXT:  %s = graph.mul %[[P]], %[[C]]
// CHECK-NEXT:  func.return %s

// -----
// torch's SDPA scales (d = 12: a = 12 ** -0.25 on each side) move only under fast-math;
// a scale with another user stays.
func.func @sdpa(%q: !layout.tensor<4x12xf32>, %k: !layout.tensor<12x4xf32>) -> (!layout.tensor<4x4xf32>, !layout.tensor<4x12xf32>) {
  %a = graph.constant dense<0.537284970> : !layout.tensor<f32>
  %qa = graph.mul %q, %a : (!layout.tensor<4x12xf32>, !layout.tensor<f32>) -> !layout.tensor<4x12xf32>
  %ka = graph.mul %k, %a : (!layout.tensor<12x4xf32>, !layout.tensor<f32>) -> !layout.tensor<12x4xf32>
  %s = graph.matmul %qa, %ka : (!layout.tensor<4x12xf32>, !layout.tensor<12x4xf32>) -> !layout.tensor<4x4xf32>
  %t = graph.matmul %qa, %k : (!layout.tensor<4x12xf32>, !layout.tensor<12x4xf32>) -> !layout.tensor<4x4xf32>
  func.return %s, %qa : !layout.tensor<4x4xf32>, !layout.tensor<4x12xf32>
}
// CHECK-LABEL: func.func @sdpa
// CHECK:       %s = graph.matmul %qa, %ka
// FAST-LABEL:  func.func @sdpa
// FAST:        %[[P:.*]] = graph.matmul %qa, %k :
// FAST-NEXT:   %[[C:.*]] = graph.constant dense<0.{{.*}}> : !layout.tensor<f32>
// FAST-NEXT:   %s = graph.mul %[[P]], %[[C]]
