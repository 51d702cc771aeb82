// RUN: tilegraph-opt %s -p 'select-storage-format{strategy=ge}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'select-storage-format{strategy=naive}' --split-input-file | filecheck %s --check-prefix=NAIVE
// RUN: tilegraph-opt %s -p 'format{strategy=ge platform=ascend950}' --split-input-file | filecheck %s --check-prefix=P950
// RUN: not tilegraph-opt %s -p 'select-storage-format{strategy=clever}' 2>&1 | filecheck %s --check-prefix=BADSTRAT
// RUN: not tilegraph-opt %s -p 'select-storage-format{platform=ascend310}' 2>&1 | filecheck %s --check-prefix=BADPLAT

// Selection only annotates: kernel choices, no type changes, no conversions.
func.func @block(%x: !layout.tensor<1x20x8x8xf32, NCHW>, %w: !layout.tensor<20x20x1x1xf32, NCHW>) -> !layout.tensor<1x20x8x8xf32, NCHW> {
  %c = graph.conv2d %x, %w : (!layout.tensor<1x20x8x8xf32, NCHW>, !layout.tensor<20x20x1x1xf32, NCHW>) -> !layout.tensor<1x20x8x8xf32, NCHW>
  %p = graph.max_pool %c {kernel_shape = [2, 2], strides = [2, 2]} : (!layout.tensor<1x20x8x8xf32, NCHW>) -> !layout.tensor<1x20x4x4xf32, NCHW>
  %s = graph.softmax %p : !layout.tensor<1x20x4x4xf32, NCHW>
  func.return %c : !layout.tensor<1x20x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @block
// CHECK-SAME:  layout.strategy = "ge", layout.platform = "ascend910b"
// CHECK:       %c = graph.conv2d %x, %w {layout.kernel = "cube"} : (!layout.tensor<1x20x8x8xf32, NCHW>, !layout.tensor<20x20x1x1xf32, NCHW>) -> !layout.tensor<1x20x8x8xf32, NCHW>
// The pool takes the conv's NC1HWC0 result (GE spreads into ops that support it) ...
// CHECK-NEXT:  %p = graph.max_pool %c {kernel_shape = [2, 2], strides = [2, 2], layout.kernel = "5hd"}
// ... softmax only works on its origin view.
// CHECK-NEXT:  %s = graph.softmax %p {layout.kernel = "origin"}
// CHECK-NOT:   layout.trans_data

// NAIVE: %p = graph.max_pool %c {kernel_shape = [2, 2], strides = [2, 2], layout.kernel = "plain"}

// On ascend950 fp32 has C0 = 8: the storage shapes change.
// P950: layout.platform = "ascend950"
// P950: layout.trans_data %x : !layout.tensor<1x20x8x8xf32, NCHW> -> !layout.tensor<1x20x8x8xf32, NCHW -> NC1HWC0{c0 = 8} [1, 3, 8, 8, 8]>

// BADSTRAT: pass 'select-storage-format': unknown strategy 'clever' (choose from naive, ge, optimal)
// BADPLAT: pass 'select-storage-format': unknown platform 'ascend310' (choose from ascend910b, ascend950, ascend310p, test)
