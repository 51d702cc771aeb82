// RUN: tilegraph-opt %s -p 'select-storage-format{strategy=ge},insert-trans-data,cancel-trans-data' --split-input-file | filecheck %s

// A channel concat of two conv outputs whose C (32, 48) are whole C0 blocks keeps their
// NC1HWC0 (GE's ConcatD format selection): no TransData between the convs and the concat,
// and the next conv takes the concat's result as it is.
func.func @aligned_channels(%x: !layout.tensor<1x16x8x8xf16, NCHW>, %w1: !layout.tensor<32x16x1x1xf16, NCHW>, %w2: !layout.tensor<48x16x1x1xf16, NCHW>, %w3: !layout.tensor<16x80x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW> {
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<32x16x1x1xf16, NCHW>) -> !layout.tensor<1x32x8x8xf16, NCHW>
  %b = graph.conv2d %x, %w2 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<48x16x1x1xf16, NCHW>) -> !layout.tensor<1x48x8x8xf16, NCHW>
  %j = graph.concat %a, %b {axis = 1} : (!layout.tensor<1x32x8x8xf16, NCHW>, !layout.tensor<1x48x8x8xf16, NCHW>) -> !layout.tensor<1x80x8x8xf16, NCHW>
  %y = graph.conv2d %j, %w3 : (!layout.tensor<1x80x8x8xf16, NCHW>, !layout.tensor<16x80x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  func.return %y : !layout.tensor<1x16x8x8xf16, NCHW>
}
// CHECK-LABEL: func.func @aligned_channels
// CHECK: %a = graph.conv2d
// CHECK-NOT: layout.trans_data %a
// CHECK: %b = graph.conv2d
// CHECK-NOT: layout.trans_data
// CHECK: %j = graph.concat %a, %b {axis = 1, layout.kernel = "any", layout.shared = "NC1HWC0"} : (!layout.tensor<1x32x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>, !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]>) -> !layout.tensor<1x80x8x8xf16, NCHW -> NC1HWC0 [1, 5, 8, 8, 16]>
// CHECK-NOT: layout.trans_data %j
// CHECK: %y = graph.conv2d %j,

// -----

// 24 channels stop inside a C0 block: an NC1HWC0 concat along C would put its padding lanes
// between the channels, so the concat runs on NCHW views, TransData around it.
func.func @unaligned_channels(%x: !layout.tensor<1x16x8x8xf16, NCHW>, %w1: !layout.tensor<24x16x1x1xf16, NCHW>, %w2: !layout.tensor<40x16x1x1xf16, NCHW>, %w3: !layout.tensor<16x64x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW> {
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<24x16x1x1xf16, NCHW>) -> !layout.tensor<1x24x8x8xf16, NCHW>
  %b = graph.conv2d %x, %w2 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<40x16x1x1xf16, NCHW>) -> !layout.tensor<1x40x8x8xf16, NCHW>
  %j = graph.concat %a, %b {axis = 1} : (!layout.tensor<1x24x8x8xf16, NCHW>, !layout.tensor<1x40x8x8xf16, NCHW>) -> !layout.tensor<1x64x8x8xf16, NCHW>
  %y = graph.conv2d %j, %w3 : (!layout.tensor<1x64x8x8xf16, NCHW>, !layout.tensor<16x64x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  func.return %y : !layout.tensor<1x16x8x8xf16, NCHW>
}
// CHECK-LABEL: func.func @unaligned_channels
// CHECK-DAG: %[[A:.*]] = layout.trans_data %a : !layout.tensor<1x24x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]> -> !layout.tensor<1x24x8x8xf16, NCHW>
// CHECK-DAG: %[[B:.*]] = layout.trans_data %b : !layout.tensor<1x40x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]> -> !layout.tensor<1x40x8x8xf16, NCHW>
// CHECK: %j = graph.concat %[[A]], %[[B]] {axis = 1, layout.kernel = "any"} : (!layout.tensor<1x24x8x8xf16, NCHW>, !layout.tensor<1x40x8x8xf16, NCHW>) -> !layout.tensor<1x64x8x8xf16, NCHW>
// CHECK: layout.trans_data %j : !layout.tensor<1x64x8x8xf16, NCHW> -> !layout.tensor<1x64x8x8xf16, NCHW -> NC1HWC0 [1, 4, 8, 8, 16]>

// -----

// Along H the C0 blocks line up whatever C is (20): the concat keeps NC1HWC0.
func.func @along_h(%x: !layout.tensor<1x16x8x8xf16, NCHW>, %w1: !layout.tensor<20x16x1x1xf16, NCHW>, %w3: !layout.tensor<16x20x1x1xf16, NCHW>) -> !layout.tensor<1x16x16x8xf16, NCHW> {
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<20x16x1x1xf16, NCHW>) -> !layout.tensor<1x20x8x8xf16, NCHW>
  %j = graph.concat %a, %a {axis = 2} : (!layout.tensor<1x20x8x8xf16, NCHW>, !layout.tensor<1x20x8x8xf16, NCHW>) -> !layout.tensor<1x20x16x8xf16, NCHW>
  %y = graph.conv2d %j, %w3 : (!layout.tensor<1x20x16x8xf16, NCHW>, !layout.tensor<16x20x1x1xf16, NCHW>) -> !layout.tensor<1x16x16x8xf16, NCHW>
  func.return %y : !layout.tensor<1x16x16x8xf16, NCHW>
}
// CHECK-LABEL: func.func @along_h
// CHECK-NOT: layout.trans_data %a
// CHECK: %j = graph.concat %a, %a {axis = 2, layout.kernel = "any", layout.shared = "NC1HWC0"}
// CHECK-NOT: layout.trans_data %j
// CHECK: %y = graph.conv2d %j,
