// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// conv-forms on the `test` preset. A 1-D convolution (stride 2, dilation 2, pads 1 / 2) runs
// as conv2d with H = 1: [1, 20, 45] viewed as [1, 20, 1, 45] (an unsqueeze), kernel [1, 3];
// the window is the one input row, load3d walks it with stride 2 and dilation 2; its 22
// output pixels are one fractal and a ragged 6 of the next; the result is squeezed back.
func.func @conv1d(%x: !layout.tensor<1x20x45xf32>) -> !layout.tensor<1x24x22xf32> {
  %w = graph.constant dense<0.5> : !layout.tensor<24x20x3xf32>
  %c = graph.conv %x, %w {strides = [2], dilations = [2], pads = [1, 2]} : (!layout.tensor<1x20x45xf32>, !layout.tensor<24x20x3xf32>) -> !layout.tensor<1x24x22xf32>
  func.return %c : !layout.tensor<1x24x22xf32>
}
// CHECK-LABEL: func.func @unsqueeze_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK-LABEL: func.func @fused_trans_data_conv2d_0(
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         tile.alloc : memref<1x2x1x45x16xf32, "L1">
// CHECK:         tile.load3d {{.*}} {kernel_shape = array<i64: 1, 3>, strides = array<i64: 1, 2>, dilations = array<i64: 1, 2>, pad_left = 1 : i64, out_width = 22 : i64, channels = 20 : i64}
// CHECK:         tile.fixpipe {{.*}} {layout = "nc1hwc0", rows = 1 : i64}
// CHECK-LABEL: func.func @fused_trans_data_squeeze_1(
// CHECK-SAME:    tile.kernel = "vector"

// PaddleOCR's 2x2 stride-2 upsampler: the input with a zero after every pixel (reshape to
// [1, 20, 7, 1, 9, 1], pad the unit axes to 2, reshape to [1, 20, 14, 18]: one DMA kernel),
// then a 2x2 conv2d of stride 1 with one padding row / column before (k - 1 - pad), none
// after (the trailing zero of the insertion is the last column), the filter flipped and
// its channel axes swapped ([12, 20, 2, 2]). 20 channels: the second C1 has 4 valid lanes.
func.func @upsample(%x: !layout.tensor<1x20x7x9xf32, NCHW>) -> !layout.tensor<1x12x14x18xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<20x12x2x2xf32, NCHW>
  %c = graph.conv_transpose %x, %w {strides = [2, 2]} : (!layout.tensor<1x20x7x9xf32, NCHW>, !layout.tensor<20x12x2x2xf32, NCHW>) -> !layout.tensor<1x12x14x18xf32, NCHW>
  func.return %c : !layout.tensor<1x12x14x18xf32, NCHW>
}
// The reshape -> pad -> reshape is one movement-chain kernel (tiling/movement_maps.py):
// the input read and the output written as row-major views of the reshaped shapes.
// CHECK-LABEL: func.func @upsample(
// CHECK-NOT:     tile.alloc : memref<1x20x7x1x9x1xf32, "GM">
// CHECK-NOT:     tile.alloc : memref<1x20x7x2x9x2xf32, "GM">
// CHECK:         tile.alloc : memref<1x20x14x18xf32, "GM">
// CHECK-LABEL: func.func @fused_reshape_pad_reshape_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector"
// CHECK:         %[[IN:.+]] = tile.strided_view %x : memref<1x20x7x9xf32, "GM"> to memref<1x20x7x1x9x1xf32, strided<[1260, 63, 9, 9, 1, 1]>, "GM">
// CHECK:         %[[OUT:.+]] = tile.strided_view %{{.+}} : memref<1x20x14x18xf32, "GM"> to memref<1x20x7x2x9x2xf32, strided<[5040, 252, 36, 18, 2, 1]>, "GM">
// CHECK:         tile.copy %[[IN]]{{.*}} {pad = 0.000000e+00 : f64} : memref<1x20x7x1x9x1xf32, strided<[1260, 63, 9, 9, 1, 1]>, "GM"> to memref<1x4x7x2x9x2xf32, "UB">
// CHECK:         tile.copy {{.*}} to %[[OUT]]
// CHECK-LABEL: func.func @fused_trans_data_conv2d_trans_data_{{[0-9]+}}_mix_aic(
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 14
// CHECK:         scf.for %{{.*}} = %c0 to %c14 step %c1 {
// CHECK:           tile.load3d {{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 18 : i64, channels = 20 : i64}

// An STFT of a real [1, 40] signal, a 16-sample window every 8 samples, onesided (9 bins,
// 4 frames): the signal cut into 5 hops of 8 and transposed so that a hop's samples are
// the channels ([1, 8, 1, 5]: one reshape / transpose kernel), a conv2d of kernel [1, 2]
// (a frame spans 2 hops) and stride 1 whose 18 filters are the windowed cosines and
// negated sines laid over the hops (8 channels of C0's 16), then [1, 18, 1, 4] ->
// [1, 9, 2, 4] -> [1, 4, 9, 2].
func.func @stft(%x: !layout.tensor<1x40xf32>) -> !layout.tensor<1x4x9x2xf32> {
  %hop = graph.constant dense<8> : !layout.tensor<i64>
  %w = graph.constant dense<1.0> : !layout.tensor<16xf32>
  %y = graph.stft %x, %hop, %w {onesided = 1} : (!layout.tensor<1x40xf32>, !layout.tensor<i64>, !layout.tensor<16xf32>) -> !layout.tensor<1x4x9x2xf32>
  func.return %y : !layout.tensor<1x4x9x2xf32>
}
// CHECK-LABEL: func.func @fused_reshape_transpose_reshape_{{[0-9]+}}(
// CHECK-SAME:    memref<1x8x1x5xf32, "GM">
// CHECK-SAME:    tile.kernel = "vector"
// CHECK-LABEL: func.func @fused_trans_data_conv2d_{{[0-9]+}}(
// CHECK-SAME:    memref<2x2x16x16xf32, "GM">
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         tile.load3d {{.*}} {kernel_shape = array<i64: 1, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 0 : i64, out_width = 4 : i64, channels = 8 : i64}
// The conv's NC1HWC0 result to [1, frames, bins, 2] is a channels-last order of it: one
// kernel (tiling/nhwc_out.py), no NCHW copy and transpose.
// CHECK-LABEL: func.func @fused_trans_data_reshape_transpose_{{[0-9]+}}(
// CHECK-SAME:    memref<1x4x9x2xf32, "GM">
// CHECK-NOT:   func.func @transpose_
