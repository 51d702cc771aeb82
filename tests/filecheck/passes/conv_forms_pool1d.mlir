// RUN: tilegraph-opt %s -p 'conv-forms' --split-input-file | filecheck %s

// conv-forms on a 1-D pooling (SEW-D's squeeze of the time axis, PyTorch's AvgPool1d /
// MaxPool1d): a 2-D pool with H = 1 between an unsqueeze and a squeeze; the window's
// attributes move to the W axis (auto_pad resolved into pads), ceil_mode and
// count_include_pad kept.
func.func @avg(%x: !layout.tensor<2x8x37xf32>) -> !layout.tensor<2x8x13xf32> {
  %y = graph.avg_pool %x {kernel_shape = [3], strides = [3], pads = [1, 1], ceil_mode = 1, count_include_pad = 1} : (!layout.tensor<2x8x37xf32>) -> !layout.tensor<2x8x13xf32>
  func.return %y : !layout.tensor<2x8x13xf32>
}
// CHECK-LABEL: func.func @avg
// CHECK:         %[[ROWS:.*]] = graph.unsqueeze %x, %{{.*}} : {{.*}} -> !layout.tensor<2x8x1x37xf32, NCHW>
// CHECK:         %[[P:.*]] = graph.avg_pool %[[ROWS]] {kernel_shape = [1, 3], ceil_mode = 1, strides = [1, 3], dilations = [1, 1], pads = [0, 1, 0, 1], count_include_pad = 1} : (!layout.tensor<2x8x1x37xf32, NCHW>) -> !layout.tensor<2x8x1x13xf32, NCHW>
// CHECK:         %[[Y:.*]] = graph.squeeze %[[P]], %{{.*}} -> !layout.tensor<2x8x13xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----
func.func @max_same(%x: !layout.tensor<1x4x10xf32>) -> !layout.tensor<1x4x5xf32> {
  %y = graph.max_pool %x {kernel_shape = [4], strides = [2], auto_pad = "SAME_UPPER"} : (!layout.tensor<1x4x10xf32>) -> !layout.tensor<1x4x5xf32>
  func.return %y : !layout.tensor<1x4x5xf32>
}
// CHECK-LABEL: func.func @max_same
// CHECK:         graph.max_pool %{{.*}} {kernel_shape = [1, 4], ceil_mode = 0, strides = [1, 2], dilations = [1, 1], pads = [0, 1, 0, 1], storage_order = 0} : (!layout.tensor<1x4x1x10xf32, NCHW>) -> !layout.tensor<1x4x1x5xf32, NCHW>
// CHECK:         graph.squeeze

// -----
// A symbolic length stays whole (a Session binds it first).
func.func @symbolic(%x: !layout.tensor<1x4x?xf32>) -> !layout.tensor<1x4x?xf32> {
  %y = graph.avg_pool %x {kernel_shape = [2], strides = [2]} : (!layout.tensor<1x4x?xf32>) -> !layout.tensor<1x4x?xf32>
  func.return %y : !layout.tensor<1x4x?xf32>
}
// CHECK-LABEL: func.func @symbolic
// CHECK-NOT:     graph.unsqueeze
// CHECK:         graph.avg_pool %x {kernel_shape = [2], strides = [2]} : !layout.tensor<1x4x?xf32>
