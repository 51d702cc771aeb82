// RUN: tilegraph-opt %s -p 'select-storage-format{strategy=ge},insert-trans-data,cancel-trans-data' --split-input-file | filecheck %s

// A channel split of a conv output at 32 (two whole C0 blocks) keeps its NC1HWC0 (the
// peer of the NC1HWC0 concat): no TransData between the conv and the split, and the convs
// after it take its halves as they are. The second half (16 channels) is one block.
func.func @aligned_channels(%x: !layout.tensor<1x16x8x8xf16, NCHW>, %w1: !layout.tensor<48x16x1x1xf16, NCHW>, %w2: !layout.tensor<16x32x1x1xf16, NCHW>, %w3: !layout.tensor<16x16x1x1xf16, NCHW>) -> (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<1x16x8x8xf16, NCHW>) {
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<48x16x1x1xf16, NCHW>) -> !layout.tensor<1x48x8x8xf16, NCHW>
  %s = graph.constant dense<[32, 16]> : !layout.tensor<2xi64>
  %p:2 = graph.split %a, %s {axis = 1} : (!layout.tensor<1x48x8x8xf16, NCHW>, !layout.tensor<2xi64>) -> (!layout.tensor<1x32x8x8xf16, NCHW>, !layout.tensor<1x16x8x8xf16, NCHW>)
  %y = graph.conv2d %p#0, %w2 : (!layout.tensor<1x32x8x8xf16, NCHW>, !layout.tensor<16x32x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  %z = graph.conv2d %p#1, %w3 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<16x16x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  func.return %y, %z : !layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<1x16x8x8xf16, NCHW>
}
// CHECK-LABEL: func.func @aligned_channels
// CHECK: %a = graph.conv2d
// CHECK-NOT: layout.trans_data %a
// CHECK: %p, %p_1 = graph.split %a, %s {axis = 1, layout.kernel = "any", layout.shared = "NC1HWC0"} : (!layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]>, !layout.tensor<2xi64>) -> (!layout.tensor<1x32x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>, !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>)
// CHECK-NOT: layout.trans_data %p
// CHECK: %y = graph.conv2d %p,
// CHECK-NOT: layout.trans_data %p
// CHECK: %z = graph.conv2d %p_1,

// -----

// A split at 24 channels starts its second output inside a C0 block: an NC1HWC0 split
// would have to move lanes across blocks, so it runs on NCHW views, TransData around it.
func.func @unaligned_channels(%x: !layout.tensor<1x16x8x8xf16, NCHW>, %w1: !layout.tensor<48x16x1x1xf16, NCHW>, %w2: !layout.tensor<16x24x1x1xf16, NCHW>) -> (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<1x16x8x8xf16, NCHW>) {
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<48x16x1x1xf16, NCHW>) -> !layout.tensor<1x48x8x8xf16, NCHW>
  %s = graph.constant dense<[24, 24]> : !layout.tensor<2xi64>
  %p:2 = graph.split %a, %s {axis = 1} : (!layout.tensor<1x48x8x8xf16, NCHW>, !layout.tensor<2xi64>) -> (!layout.tensor<1x24x8x8xf16, NCHW>, !layout.tensor<1x24x8x8xf16, NCHW>)
  %y = graph.conv2d %p#0, %w2 : (!layout.tensor<1x24x8x8xf16, NCHW>, !layout.tensor<16x24x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  %z = graph.conv2d %p#1, %w2 : (!layout.tensor<1x24x8x8xf16, NCHW>, !layout.tensor<16x24x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  func.return %y, %z : !layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<1x16x8x8xf16, NCHW>
}
// CHECK-LABEL: func.func @unaligned_channels
// CHECK: %[[A:.*]] = layout.trans_data %a : !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]> -> !layout.tensor<1x48x8x8xf16, NCHW>
// CHECK: %p, %p_1 = graph.split %[[A]], %s {axis = 1, layout.kernel = "any"} : (!layout.tensor<1x48x8x8xf16, NCHW>, !layout.tensor<2xi64>)
// CHECK-DAG: layout.trans_data %p_1 : !layout.tensor<1x24x8x8xf16, NCHW> -> !layout.tensor<1x24x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>
// CHECK-DAG: layout.trans_data %p : !layout.tensor<1x24x8x8xf16, NCHW> -> !layout.tensor<1x24x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>

// -----

// A slice along H with step 2 keeps NC1HWC0 whatever C is (20): every (n, c1, h, w) row
// of C0 lanes moves as a unit.
func.func @strided_h(%x: !layout.tensor<1x16x8x8xf16, NCHW>, %w1: !layout.tensor<20x16x1x1xf16, NCHW>, %w3: !layout.tensor<16x20x1x1xf16, NCHW>) -> !layout.tensor<1x16x4x8xf16, NCHW> {
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<20x16x1x1xf16, NCHW>) -> !layout.tensor<1x20x8x8xf16, NCHW>
  %start = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %axis = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %step = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %j = graph.slice %a, %start, %end, %axis, %step : (!layout.tensor<1x20x8x8xf16, NCHW>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x20x4x8xf16, NCHW>
  %y = graph.conv2d %j, %w3 : (!layout.tensor<1x20x4x8xf16, NCHW>, !layout.tensor<16x20x1x1xf16, NCHW>) -> !layout.tensor<1x16x4x8xf16, NCHW>
  func.return %y : !layout.tensor<1x16x4x8xf16, NCHW>
}
// CHECK-LABEL: func.func @strided_h
// CHECK-NOT: layout.trans_data %a
// CHECK: %j = graph.slice %a, %start, %end, %axis, %step {layout.kernel = "any", layout.shared = "NC1HWC0"}
// CHECK-NOT: layout.trans_data %j
// CHECK: %y = graph.conv2d %j,
