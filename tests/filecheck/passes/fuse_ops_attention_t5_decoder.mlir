// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2' | filecheck %s

// hf_t5's decoder (issue 25). Its self-attention's position bias is a constant (the causal
// mask folded in) of the scores' shape, so fold-trans-data stores it in FRACTAL_NZ for the
// NZ add the format engine chose; fuse-ops' epilogues-to-nd stores it in ND instead (its
// data converted at compile time), the add becomes the scores' ND epilogue and the
// attention is claimed whole (one group with the softmax and ·V).
func.func @self_attention(%x: !layout.tensor<1x4x8xf32>, %w: !layout.tensor<8x24xf32>) -> !layout.tensor<1x4x8xf32> {
  %qkv = graph.matmul %x, %w : (!layout.tensor<1x4x8xf32>, !layout.tensor<8x24xf32>) -> !layout.tensor<1x4x24xf32>
  %sizes = graph.constant dense<8> : !layout.tensor<3xi64>
  %q, %k, %v = graph.split %qkv, %sizes {axis = -1} : (!layout.tensor<1x4x24xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x4x8xf32>, !layout.tensor<1x4x8xf32>, !layout.tensor<1x4x8xf32>)
  %s = graph.constant dense<[1, 4, 2, 4]> : !layout.tensor<4xi64>
  %qh = graph.reshape %q, %s : (!layout.tensor<1x4x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x4x2x4xf32>
  %qt = graph.transpose %qh {perm = [0, 2, 1, 3]} : (!layout.tensor<1x4x2x4xf32>) -> !layout.tensor<1x2x4x4xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<1x4x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x4x2x4xf32>
  %kt = graph.transpose %kh {perm = [0, 2, 3, 1]} : (!layout.tensor<1x4x2x4xf32>) -> !layout.tensor<1x2x4x4xf32>
  %sc = graph.matmul %qt, %kt : !layout.tensor<1x2x4x4xf32>
  %bias = graph.constant dense<[[[[0.5, -1.0e+04, -1.0e+04, -1.0e+04], [0.5, 0.5, -1.0e+04, -1.0e+04], [0.5, 0.5, 0.5, -1.0e+04], [0.5, 0.5, 0.5, 0.5]], [[0.25, -1.0e+04, -1.0e+04, -1.0e+04], [0.25, 0.25, -1.0e+04, -1.0e+04], [0.25, 0.25, 0.25, -1.0e+04], [0.25, 0.25, 0.25, 0.25]]]]> : !layout.tensor<1x2x4x4xf32>
  %biased = graph.add %sc, %bias : !layout.tensor<1x2x4x4xf32>
  %p = graph.softmax %biased {axis = -1} : !layout.tensor<1x2x4x4xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<1x4x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x4x2x4xf32>
  %vt = graph.transpose %vh {perm = [0, 2, 1, 3]} : (!layout.tensor<1x4x2x4xf32>) -> !layout.tensor<1x2x4x4xf32>
  %o = graph.matmul %p, %vt : !layout.tensor<1x2x4x4xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (!layout.tensor<1x2x4x4xf32>) -> !layout.tensor<1x4x2x4xf32>
  %s2 = graph.constant dense<[1, 4, 8]> : !layout.tensor<3xi64>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<1x4x2x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x4x8xf32>
  func.return %r : !layout.tensor<1x4x8xf32>
}
// CHECK-LABEL: func.func @self_attention(
// CHECK:         %bias = graph.constant dense<{{.*}}> : !layout.tensor<1x2x4x4xf32>
// CHECK-NOT:     graph.constant {{.*}} : !layout.tensor<1x2x4x4xf32, ND -> FRACTAL_NZ
// CHECK:         graph.fused
// CHECK:           %sc_1 = layout.trans_data %sc : {{.*}}FRACTAL_NZ{{.*}} -> !layout.tensor<1x2x4x4xf32>
// CHECK-NEXT:      %biased = graph.add %sc_1, %bias_1 {layout.kernel = "any"} : !layout.tensor<1x2x4x4xf32>
// CHECK-NEXT:      %p = graph.softmax %biased
// CHECK:           %o = graph.matmul
// CHECK:           graph.yield
// CHECK-NOT:     graph.softmax

// The cross-attention's Q is a projection of its own, which the format engine writes in
// FRACTAL_NZ for the head split reading it. fuse-ops gives the NZ -> ND conversion to the
// projection's group (fixpipe writes ND), so Q's head split is a strided view of the
// projection's output in the attention's group, which starts at the reshape.
func.func @cross_attention(%x: !layout.tensor<1x3x8xf32>, %enc: !layout.tensor<1x5x8xf32>, %wq: !layout.tensor<8x8xf32>, %wkv: !layout.tensor<8x16xf32>, %bias: !layout.tensor<1x2x3x5xf32>) -> !layout.tensor<1x3x8xf32> {
  %q = graph.matmul %x, %wq : (!layout.tensor<1x3x8xf32>, !layout.tensor<8x8xf32>) -> !layout.tensor<1x3x8xf32>
  %kv = graph.matmul %enc, %wkv : (!layout.tensor<1x5x8xf32>, !layout.tensor<8x16xf32>) -> !layout.tensor<1x5x16xf32>
  %sizes = graph.constant dense<8> : !layout.tensor<2xi64>
  %k, %v = graph.split %kv, %sizes {axis = -1} : (!layout.tensor<1x5x16xf32>, !layout.tensor<2xi64>) -> (!layout.tensor<1x5x8xf32>, !layout.tensor<1x5x8xf32>)
  %sq = graph.constant dense<[1, 3, 2, 4]> : !layout.tensor<4xi64>
  %qh = graph.reshape %q, %sq : (!layout.tensor<1x3x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x3x2x4xf32>
  %qt = graph.transpose %qh {perm = [0, 2, 1, 3]} : (!layout.tensor<1x3x2x4xf32>) -> !layout.tensor<1x2x3x4xf32>
  %sk = graph.constant dense<[1, 5, 2, 4]> : !layout.tensor<4xi64>
  %kh = graph.reshape %k, %sk : (!layout.tensor<1x5x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x5x2x4xf32>
  %kt = graph.transpose %kh {perm = [0, 2, 3, 1]} : (!layout.tensor<1x5x2x4xf32>) -> !layout.tensor<1x2x4x5xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<1x2x3x4xf32>, !layout.tensor<1x2x4x5xf32>) -> !layout.tensor<1x2x3x5xf32>
  %biased = graph.add %sc, %bias : !layout.tensor<1x2x3x5xf32>
  %p = graph.softmax %biased {axis = -1} : !layout.tensor<1x2x3x5xf32>
  %vh = graph.reshape %v, %sk : (!layout.tensor<1x5x8xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x5x2x4xf32>
  %vt = graph.transpose %vh {perm = [0, 2, 1, 3]} : (!layout.tensor<1x5x2x4xf32>) -> !layout.tensor<1x2x5x4xf32>
  %o = graph.matmul %p, %vt : (!layout.tensor<1x2x3x5xf32>, !layout.tensor<1x2x5x4xf32>) -> !layout.tensor<1x2x3x4xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : (!layout.tensor<1x2x3x4xf32>) -> !layout.tensor<1x3x2x4xf32>
  %s2 = graph.constant dense<[1, 3, 8]> : !layout.tensor<3xi64>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<1x3x2x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x3x8xf32>
  func.return %r : !layout.tensor<1x3x8xf32>
}
// CHECK-LABEL: func.func @cross_attention(
// CHECK:         %q = graph.fused {{.*}} -> !layout.tensor<1x3x8xf32> {
// CHECK:           %q_1 = graph.matmul
// CHECK-NEXT:      %q_2 = layout.trans_data %q_1 : {{.*}}FRACTAL_NZ{{.*}} -> !layout.tensor<1x3x8xf32>
// CHECK-NEXT:      graph.yield %q_2 : !layout.tensor<1x3x8xf32>
// CHECK:         %r = graph.fused
// CHECK-NOT:       layout.trans_data %q
// CHECK:           %qh = graph.reshape %q_1
// CHECK:           graph.softmax
// CHECK:           graph.yield

// ERNIE's pooler tanh(x[:, 0]·W + b) feeding its classifier: the tanh reads a Gemm's NZ
// result and feeds the classifier, so the format engine kept it in FRACTAL_NZ, where the
// pooler's kernel could not run it; epilogues-to-nd treats a Gemm as a matmul: the tanh is
// the pooler's ND epilogue and the classifier converts its input on the way in (nd2nz).
func.func @pooler(%cls: !layout.tensor<1x16xf32>, %w: !layout.tensor<16x16xf32>, %b: !layout.tensor<16xf32>, %wc: !layout.tensor<16x2xf32>, %bc: !layout.tensor<2xf32>) -> !layout.tensor<1x2xf32> {
  %y = graph.gemm %cls, %w, %b : (!layout.tensor<1x16xf32>, !layout.tensor<16x16xf32>, !layout.tensor<16xf32>) -> !layout.tensor<1x16xf32>
  %t = graph.tanh %y : !layout.tensor<1x16xf32>
  %z = graph.gemm %t, %wc, %bc : (!layout.tensor<1x16xf32>, !layout.tensor<16x2xf32>, !layout.tensor<2xf32>) -> !layout.tensor<1x2xf32>
  func.return %z : !layout.tensor<1x2xf32>
}
// CHECK-LABEL: func.func @pooler(
// CHECK:         %t = graph.fused {{.*}} -> !layout.tensor<1x16xf32> {
// CHECK:           %y = graph.gemm
// CHECK-NEXT:      %y_1 = layout.trans_data %y : {{.*}}FRACTAL_NZ{{.*}} -> !layout.tensor<1x16xf32>
// CHECK-NEXT:      %t_1 = graph.tanh %y_1 {layout.kernel = "any"} : !layout.tensor<1x16xf32>
// CHECK-NEXT:      graph.yield %t_1 : !layout.tensor<1x16xf32>
// CHECK:         %z = graph.fused
// CHECK:           layout.trans_data %t_1 : !layout.tensor<1x16xf32> -> {{.*}}FRACTAL_NZ
