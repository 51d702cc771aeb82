// RUN: tilegraph-opt %s -p 'select-storage-format{small-channel=true}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'select-storage-format' --split-input-file | filecheck %s --check-prefix=OFF
// RUN: tilegraph-opt %s -p 'format{small-channel=true}' --split-input-file | filecheck %s --check-prefix=FORMAT
// RUN: tilegraph-opt %s -p 'select-storage-format{strategy=optimal small-channel=true}' --split-input-file | filecheck %s --check-prefix=OPTIMAL

// ATC's --enable_small_channel=1: a convolution of at most 4 input channels (an image stem)
// takes kernel variant cube_c04, NC1HWC0_C04 data and a FRACTAL_Z_C04 weight, instead of
// cube. Off (the default, as in ATC) it takes cube. Wider and grouped convolutions keep cube.
func.func @stem(%x: !layout.tensor<1x3x16x16xf16, NCHW>, %w: !layout.tensor<64x3x7x7xf16, NCHW>, %w2: !layout.tensor<16x64x1x1xf16, NCHW>, %y: !layout.tensor<1x4x8x8xf16, NCHW>, %w3: !layout.tensor<16x2x3x3xf16, NCHW>) -> (!layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<1x16x6x6xf16, NCHW>) {
  %c = graph.conv2d %x, %w {strides = [2, 2], pads = [3, 3, 3, 3]} : (!layout.tensor<1x3x16x16xf16, NCHW>, !layout.tensor<64x3x7x7xf16, NCHW>) -> !layout.tensor<1x64x8x8xf16, NCHW>
  %d = graph.conv2d %c, %w2 : (!layout.tensor<1x64x8x8xf16, NCHW>, !layout.tensor<16x64x1x1xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  %e = graph.conv2d %y, %w3 {group = 2} : (!layout.tensor<1x4x8x8xf16, NCHW>, !layout.tensor<16x2x3x3xf16, NCHW>) -> !layout.tensor<1x16x6x6xf16, NCHW>
  func.return %d, %e : !layout.tensor<1x16x8x8xf16, NCHW>, !layout.tensor<1x16x6x6xf16, NCHW>
}
// CHECK-LABEL: func.func @stem
// CHECK:       %c = graph.conv2d %x, %w {strides = [2, 2], pads = [3, 3, 3, 3], layout.kernel = "cube_c04"}
// CHECK:       %d = graph.conv2d %c, %w2 {layout.kernel = "cube"}
// CHECK:       %e = graph.conv2d %y, %w3 {group = 2, layout.kernel = "cube"}

// OFF-LABEL:   func.func @stem
// OFF-NOT:     cube_c04
// OFF:         %c = graph.conv2d %x, %w {strides = [2, 2], pads = [3, 3, 3, 3], layout.kernel = "cube"}

// The whole format engine: the data converted into NC1HWC0_C04 ([N, 1, H, W, 4]) at run
// time, the weight into FRACTAL_Z_C04 (K = 4·7·7 = 196 -> 13 fractals of 16) at compile time.
// FORMAT-LABEL: func.func @stem
// FORMAT:       layout.trans_data %x : !layout.tensor<1x3x16x16xf16, NCHW> -> !layout.tensor<1x3x16x16xf16, NCHW -> NC1HWC0_C04 [1, 1, 16, 16, 4]>
// FORMAT:       layout.trans_data %w : !layout.tensor<64x3x7x7xf16, NCHW> -> !layout.tensor<64x3x7x7xf16, NCHW -> FRACTAL_Z_C04 [13, 4, 16, 16]>
// FORMAT:       graph.conv2d {{.+}} {strides = [2, 2], pads = [3, 3, 3, 3], layout.kernel = "cube_c04"}

// OPTIMAL:     graph.conv2d %x, %w {{.+}}layout.kernel = "cube_c04"

// -----

// C unknown: no small-channel kernel (the condition needs a known C <= 4).
func.func @dynamic(%x: !layout.tensor<1x?x16x16xf16, NCHW>, %w: !layout.tensor<8x3x3x3xf16, NCHW>) -> !layout.tensor<1x8x14x14xf16, NCHW> {
  %c = graph.conv2d %x, %w : (!layout.tensor<1x?x16x16xf16, NCHW>, !layout.tensor<8x3x3x3xf16, NCHW>) -> !layout.tensor<1x8x14x14xf16, NCHW>
  func.return %c : !layout.tensor<1x8x14x14xf16, NCHW>
}
// CHECK-LABEL: func.func @dynamic
// CHECK:       graph.conv2d %x, %w {layout.kernel = "cube"}
