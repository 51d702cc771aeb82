// RUN: tilegraph-opt %s -p 'apply-precision{mode=force_fp16}' | filecheck %s --check-prefix=FORCE
// RUN: tilegraph-opt %s -p 'apply-precision{mode=allow_mix_precision}' | filecheck %s --check-prefix=MIX
// RUN: tilegraph-opt %s -p 'apply-precision{mode=force_fp16 keep="OpType::Exp"},O1' | filecheck %s --check-prefix=KEEP
// RUN: tilegraph-opt %s -p 'apply-precision{mode=allow_fp32_to_fp16}' | filecheck %s --check-prefix=CUBE
// RUN: not tilegraph-opt %s -p 'apply-precision{mode=force_fp16 keep="nope"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// force_fp16: every op in float16, the model's input and output cast at the boundary.
// FORCE-LABEL: func.func @block
// FORCE:       %[[X:.*]] = graph.cast %x {to = 10}
// FORCE:       %[[W:.*]] = graph.cast %w {to = 10}
// FORCE:       %[[M:.*]] = graph.matmul %[[X]], %[[W]] {{.*}} -> !layout.tensor<4x8xf16>
// FORCE:       %[[E:.*]] = graph.exp %[[M]] : !layout.tensor<4x8xf16>
// FORCE:       %[[R:.*]] = graph.relu %[[E]] : !layout.tensor<4x8xf16>
// FORCE:       %[[Y:.*]] = graph.cast %[[R]] {to = 1} {{.*}} -> !layout.tensor<4x8xf32>
// FORCE:       func.return %[[Y]]

// Mixed: the matmul (white) in float16, exp (black) in float32, relu (white) in float16.
// MIX-LABEL:   func.func @block
// MIX:         graph.matmul {{.*}} -> !layout.tensor<4x8xf16>
// MIX:         %[[UP:.*]] = graph.cast %m {to = 1}
// MIX:         %[[E:.*]] = graph.exp %[[UP]] : !layout.tensor<4x8xf32>
// MIX:         %[[DOWN:.*]] = graph.cast %[[E]] {to = 10}
// MIX:         graph.relu %[[DOWN]] : !layout.tensor<4x8xf16>

// A keep-list by op type; O1 folds the weight's cast into a float16 constant.
// KEEP-LABEL:  func.func @block
// KEEP:        graph.constant {{.*}} : !layout.tensor<8x8xf16>
// KEEP:        graph.exp {{.*}} : !layout.tensor<4x8xf32>

// The cube-only modes leave the graph alone (the tiling rounds the cube's inputs).
// CUBE-LABEL:  func.func @block
// CUBE-NOT:    graph.cast
// CUBE:        graph.matmul {{.*}} -> !layout.tensor<4x8xf32>

// UNKNOWN: error: pass 'apply-precision': keep-dtype: no node or op type of the model is named 'nope'
func.func @block(%x: !layout.tensor<4x8xf32>) -> !layout.tensor<4x8xf32> {
  %w = graph.constant dense<0.5> : !layout.tensor<8x8xf32>
  %m = graph.matmul %x, %w : (!layout.tensor<4x8xf32>, !layout.tensor<8x8xf32>) -> !layout.tensor<4x8xf32>
  %e = graph.exp %m : !layout.tensor<4x8xf32>
  %r = graph.relu %e : !layout.tensor<4x8xf32>
  func.return %r : !layout.tensor<4x8xf32>
}
