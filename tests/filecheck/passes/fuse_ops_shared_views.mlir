// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=ascend910b},O2' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'set-target{platform=ascend910b},O2' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// views-cloned: a group split of x (SqueezeBERT's Q and V over one LayerNorm output) read
// by two group-batched products: each product gets its own copy of the reshape and the
// transpose, in its prologue (a view it reads in place); no kernel copies the split.
func.func @split_read_twice(%x: !layout.tensor<3x11x32xf32>) -> (!layout.tensor<3x4x11x8xf32>, !layout.tensor<3x4x11x8xf32>) {
  %s = graph.constant dense<[3, 11, 4, 8]> : !layout.tensor<4xi64>
  %w1 = graph.constant dense<0.5> : !layout.tensor<4x8x8xf32>
  %w2 = graph.constant dense<0.25> : !layout.tensor<4x8x8xf32>
  %r = graph.reshape %x, %s : (!layout.tensor<3x11x32xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x11x4x8xf32>
  %t = graph.transpose %r {perm = [0, 2, 1, 3]} : (!layout.tensor<3x11x4x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %q = graph.matmul %t, %w1 : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<4x8x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %v = graph.matmul %t, %w2 : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<4x8x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  func.return %q, %v : !layout.tensor<3x4x11x8xf32>, !layout.tensor<3x4x11x8xf32>
}
// CHECK-LABEL: func.func @split_read_twice
// CHECK-NOT:     graph.fused "fused_reshape_transpose_{{[0-9]+}}"
// CHECK:         graph.fused "fused_reshape_transpose_trans_data_matmul{{.*}}" <out_elemwise_fusable> (%x
// CHECK:           graph.reshape
// CHECK:           graph.transpose
// CHECK:           graph.matmul
// CHECK:         graph.fused "fused_reshape_transpose_trans_data_matmul{{.*}}" <out_elemwise_fusable> (%x
// CHECK:           graph.reshape
// CHECK:           graph.transpose
// CHECK:           graph.matmul

// STATS: fuse-ops
// STATS: views-cloned 2

// -----
// attention-operands-to-nd: Q, K and V written straight in FRACTAL_NZ by products (no head
// split between them and the attention): each product's group ends with the conversion to
// ND (its fixpipe), and the flash attention's group converts them back on the way in.
func.func @attention_over_products(%x: !layout.tensor<3x4x11x8xf32>) -> !layout.tensor<3x4x11x8xf32> {
  %wq = graph.constant dense<0.5> : !layout.tensor<4x8x8xf32>
  %wk = graph.constant dense<0.25> : !layout.tensor<4x8x8xf32>
  %wv = graph.constant dense<0.125> : !layout.tensor<4x8x8xf32>
  %s = graph.constant dense<2.828427> : !layout.tensor<f32>
  %q = graph.matmul %x, %wq : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<4x8x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %xt = graph.transpose %x {perm = [0, 1, 3, 2]} : (!layout.tensor<3x4x11x8xf32>) -> !layout.tensor<3x4x8x11xf32>
  %k = graph.matmul %wk, %xt : (!layout.tensor<4x8x8xf32>, !layout.tensor<3x4x8x11xf32>) -> !layout.tensor<3x4x8x11xf32>
  %v = graph.matmul %x, %wv : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<4x8x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %qk = graph.matmul %q, %k : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<3x4x8x11xf32>) -> !layout.tensor<3x4x11x11xf32>
  %sc = graph.div %qk, %s : (!layout.tensor<3x4x11x11xf32>, !layout.tensor<f32>) -> !layout.tensor<3x4x11x11xf32>
  %p = graph.softmax %sc {axis = -1} : !layout.tensor<3x4x11x11xf32>
  %o = graph.matmul %p, %v : (!layout.tensor<3x4x11x11xf32>, !layout.tensor<3x4x11x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  func.return %o : !layout.tensor<3x4x11x8xf32>
}
// CHECK-LABEL: func.func @attention_over_products
// CHECK:         graph.fused "fused_trans_data_matmul_trans_data_0"
// CHECK:           %q = graph.matmul
// CHECK-NEXT:      layout.trans_data %q : !layout.tensor<3x4x11x8xf32, ND -> FRACTAL_NZ [3, 4, 1, 1, 16, 16]> -> !layout.tensor<3x4x11x8xf32>
// CHECK:         graph.fused "fused_trans_data_matmul_trans_data_div_etc_3"
// CHECK:           %qk = graph.matmul
// CHECK:           graph.softmax
// CHECK:           %o_1 = graph.matmul

// STATS: attention-operands-to-nd 3
