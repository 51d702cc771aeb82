// RUN: tilegraph-opt %s -p fuse-ops --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p fuse-ops --split-input-file | tilegraph-opt --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p fuse-ops --split-input-file --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// A shape query reads no data (Paddle's exports query a conv result's shape for a resize's
// sizes): the conversion of the conv's NC1HWC0 result to NCHW still joins its epilogue, and
// the query reads the group's NCHW result, of the same origin shape.
func.func @conversion_epilogue(%x: !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, %w: !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<4xi64>) {
  %c = graph.conv2d %x, %w : (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>
  %t = layout.trans_data %c : !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0> -> !layout.tensor<1x16x8x8xf16, NCHW>
  %s = graph.shape %c : (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>) -> !layout.tensor<4xi64>
  func.return %t, %s : !layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<4xi64>
}
// CHECK-LABEL: func.func @conversion_epilogue
// CHECK-NEXT:  %t = graph.fused "fused_conv2d_trans_data_0" <out_elemwise_fusable> (%x, %w)
// CHECK:       graph.yield %t_1 : !layout.tensor<1x16x8x8xf16, NCHW>
// CHECK-NEXT:  }
// CHECK-NEXT:  %s = graph.shape %t : (!layout.tensor<1x16x8x8xf16, NCHW>) -> !layout.tensor<4xi64>
// CHECK-NEXT:  func.return %t, %s

// -----
// Dims nobody knows (an unbound export): a conversion keeps them, so its result still
// answers the query; the ReLU's result would not (equal spellings of unknown dims prove
// nothing): that conv keeps its reader of the query and stays apart from the ReLU.
func.func @unknown_dims(%x: !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>, %w: !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> (!layout.tensor<?x16x?x?xf16, NCHW>, !layout.tensor<4xi64>, !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>, !layout.tensor<4xi64>) {
  %c = graph.conv2d %x, %w : (!layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>, !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>
  %t = layout.trans_data %c : !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0> -> !layout.tensor<?x16x?x?xf16, NCHW>
  %s = graph.shape %c : (!layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>) -> !layout.tensor<4xi64>
  %c2 = graph.conv2d %x, %w : (!layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>, !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>
  %r = graph.relu %c2 : !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>
  %s2 = graph.shape %c2 : (!layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>) -> !layout.tensor<4xi64>
  func.return %t, %s, %r, %s2 : !layout.tensor<?x16x?x?xf16, NCHW>, !layout.tensor<4xi64>, !layout.tensor<?x16x?x?xf16, NCHW -> NC1HWC0>, !layout.tensor<4xi64>
}
// CHECK-LABEL: func.func @unknown_dims
// CHECK-NEXT:  %t = graph.fused "fused_conv2d_trans_data_0"
// CHECK:       %s = graph.shape %t
// CHECK-NEXT:  %c2 = graph.conv2d %x, %w
// CHECK-NEXT:  %r = graph.relu %c2
// CHECK-NEXT:  %s2 = graph.shape %c2

// -----
// The same for a Size of an elementwise epilogue's input: the ReLU's result has the conv
// result's origin dims, all known.
func.func @size_of_epilogue_input(%x: !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, %w: !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, !layout.tensor<i64>) {
  %c = graph.conv2d %x, %w : (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>
  %r = graph.relu %c : !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>
  %n = graph.size %c : (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>) -> !layout.tensor<i64>
  func.return %r, %n : !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, !layout.tensor<i64>
}
// CHECK-LABEL: func.func @size_of_epilogue_input
// CHECK-NEXT:  %r = graph.fused "fused_conv2d_relu_0" <out_elemwise_fusable> (%x, %w)
// CHECK:       %n = graph.size %r

// -----
// A query before the group's last op would read the kernel's result before it is written:
// it stays a reader of the conv's result, which then leaves its own kernel (the conversion
// runs alone, as without the query's help).
func.func @query_before_the_root(%x: !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, %w: !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<4xi64>) {
  %c = graph.conv2d %x, %w : (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>, !layout.tensor<16x16x1x1xf16, NCHW -> FRACTAL_Z>) -> !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>
  %s = graph.shape %c : (!layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0>) -> !layout.tensor<4xi64>
  %t = layout.trans_data %c : !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0> -> !layout.tensor<1x16x8x8xf16, NCHW>
  func.return %t, %s : !layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<4xi64>
}
// CHECK-LABEL: func.func @query_before_the_root
// CHECK-NEXT:  %c = graph.conv2d %x, %w
// CHECK-NEXT:  %s = graph.shape %c
// CHECK-NEXT:  %t = layout.trans_data %c

// STATS: shape-queries-redirected 1
