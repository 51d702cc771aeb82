// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2' --split-input-file | filecheck %s

// DeBERTa-v2's scores: Q·Kᵀ plus a bias summed from two terms in the same layer, masked by
// a where. The elementwise ops grow from the where as one group (the bias sum has no other
// reader); fuse-ops splits the sum off as a group of its own, the score add and the where
// join Q·Kᵀ's epilogue, and the attention is claimed as one group.
func.func @biased(%q: !layout.tensor<2x20x48xf32>, %k: !layout.tensor<2x20x48xf32>, %v: !layout.tensor<2x20x48xf32>, %c2p: !layout.tensor<2x4x20x20xf32>, %p2c: !layout.tensor<2x4x20x20xf32>, %mask: !layout.tensor<2x1x20x20xi1>) -> !layout.tensor<2x20x48xf32> {
  %s = graph.constant dense<[2, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[2, 20, 48]> : !layout.tensor<3xi64>
  %low = graph.constant dense<-3.4028235e+38> : !layout.tensor<f32>
  %qh = graph.reshape %q, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<2x4x20x12xf32>, !layout.tensor<2x4x12x20xf32>) -> !layout.tensor<2x4x20x20xf32>
  %bias = graph.add %c2p, %p2c : !layout.tensor<2x4x20x20xf32>
  %biased = graph.add %sc, %bias : !layout.tensor<2x4x20x20xf32>
  %masked = graph.where %mask, %low, %biased : (!layout.tensor<2x1x20x20xi1>, !layout.tensor<f32>, !layout.tensor<2x4x20x20xf32>) -> !layout.tensor<2x4x20x20xf32>
  %p = graph.softmax %masked {axis = -1 : i64} : !layout.tensor<2x4x20x20xf32>
  %o = graph.matmul %p, %vt : (!layout.tensor<2x4x20x20xf32>, !layout.tensor<2x4x20x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x4x20x12xf32>) -> !layout.tensor<2x20x4x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<2x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x20x48xf32>
  func.return %r : !layout.tensor<2x20x48xf32>
}
// CHECK-LABEL: func.func @biased(
// CHECK:         %[[B:.*]] = graph.fused "fused_add_{{[0-9]+}}" {{.*}}(%c2p, %p2c)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.yield
// CHECK:         graph.fused
// CHECK-SAME:      %[[B]]
// CHECK:           graph.matmul
// CHECK:           graph.add
// CHECK-NEXT:      graph.where
// CHECK-NEXT:      graph.softmax
// CHECK:           graph.matmul
// CHECK-NOT:     graph.fused
// CHECK:         func.return

// -----
// The bias sum reads a gathered term (DeBERTa-v2's c2p): the gather heads the sum's kernel
// (its elementwise tail: tiling/elements_tail.py); the other term stays an input.
func.func @gathered(%q: !layout.tensor<2x20x48xf32>, %k: !layout.tensor<2x20x48xf32>, %v: !layout.tensor<2x20x48xf32>, %c2p: !layout.tensor<2x4x20x24xf32>, %idx: !layout.tensor<2x4x20x20xi64>, %p2c: !layout.tensor<2x4x20x20xf32>, %mask: !layout.tensor<2x1x20x20xi1>) -> !layout.tensor<2x20x48xf32> {
  %s = graph.constant dense<[2, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[2, 20, 48]> : !layout.tensor<3xi64>
  %low = graph.constant dense<-3.4028235e+38> : !layout.tensor<f32>
  %qh = graph.reshape %q, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<2x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x20x4x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x20x4x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<2x4x20x12xf32>, !layout.tensor<2x4x12x20xf32>) -> !layout.tensor<2x4x20x20xf32>
  %g = graph.gather_elements %c2p, %idx {axis = -1 : i64} : (!layout.tensor<2x4x20x24xf32>, !layout.tensor<2x4x20x20xi64>) -> !layout.tensor<2x4x20x20xf32>
  %bias = graph.add %g, %p2c : !layout.tensor<2x4x20x20xf32>
  %biased = graph.add %sc, %bias : !layout.tensor<2x4x20x20xf32>
  %masked = graph.where %mask, %low, %biased : (!layout.tensor<2x1x20x20xi1>, !layout.tensor<f32>, !layout.tensor<2x4x20x20xf32>) -> !layout.tensor<2x4x20x20xf32>
  %p = graph.softmax %masked {axis = -1 : i64} : !layout.tensor<2x4x20x20xf32>
  %o = graph.matmul %p, %vt : (!layout.tensor<2x4x20x20xf32>, !layout.tensor<2x4x20x12xf32>) -> !layout.tensor<2x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<2x4x20x12xf32>) -> !layout.tensor<2x20x4x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<2x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x20x48xf32>
  func.return %r : !layout.tensor<2x20x48xf32>
}
// CHECK-LABEL: func.func @gathered(
// CHECK:         %[[B:.*]] = graph.fused "fused_gather_elements_add_{{[0-9]+}}" {{.*}}(%c2p, %idx, %p2c)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:      graph.gather_elements
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.yield
// CHECK:         graph.fused
// CHECK-SAME:      %[[B]]
// CHECK:           graph.softmax
// CHECK-NOT:     graph.fused
// CHECK:         func.return
