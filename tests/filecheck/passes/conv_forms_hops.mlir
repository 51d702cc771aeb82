// RUN: tilegraph-opt %s -p 'conv-forms' --split-input-file | filecheck %s

// conv-forms, strided-signal-conv-over-hops: one channel of 61 samples, 12 filters of 10
// taps every 4 samples, 3 zeros before and 2 after: 15 frames. The signal with 3 zeros in
// front and 4 behind is 17 hops of 4 ([1, 17, 4]), transposed to 4 channels; the filter
// [12, 4, 1, 3] (the last hop's last two places zero), stride 1, no padding.
func.func @cqt(%x: !layout.tensor<1x1x1x61xf32, NCHW>) -> !layout.tensor<1x12x1x15xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<12x1x1x10xf32, NCHW>
  %y = graph.conv2d %x, %w {strides = [1, 4], pads = [0, 3, 0, 2], kernel_shape = [1, 10]} : (!layout.tensor<1x1x1x61xf32, NCHW>, !layout.tensor<12x1x1x10xf32, NCHW>) -> !layout.tensor<1x12x1x15xf32, NCHW>
  func.return %y : !layout.tensor<1x12x1x15xf32, NCHW>
}
// CHECK-LABEL: func.func @cqt
// CHECK:         graph.constant dense<[0, 3, 0, 4]>
// CHECK:         graph.pad
// CHECK:         graph.constant dense<[1, 17, 4]>
// CHECK:         graph.transpose %{{.*}} {perm = [0, 2, 1]}
// CHECK:         graph.constant dense<[1, 4, 1, 17]>
// CHECK:         %y = graph.conv2d {{.*}} {kernel_shape = [1, 3], group = 1, strides = [1, 1], dilations = [1, 1], pads = [0, 0, 0, 0]} : (!layout.tensor<1x4x1x17xf32>, !layout.tensor<12x4x1x3xf32>) -> !layout.tensor<1x12x1x15xf32, NCHW>

// -----
// Stride 1: nothing to gain (one hop is one sample); left as it is.
func.func @dense(%x: !layout.tensor<1x1x1x61xf32, NCHW>) -> !layout.tensor<1x12x1x52xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<12x1x1x10xf32, NCHW>
  %y = graph.conv2d %x, %w {kernel_shape = [1, 10]} : (!layout.tensor<1x1x1x61xf32, NCHW>, !layout.tensor<12x1x1x10xf32, NCHW>) -> !layout.tensor<1x12x1x52xf32, NCHW>
  func.return %y : !layout.tensor<1x12x1x52xf32, NCHW>
}
// CHECK-LABEL: func.func @dense
// CHECK-NOT:     graph.transpose
// CHECK:         %y = graph.conv2d %x, %w
