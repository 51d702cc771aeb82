// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// A dynamically quantised convolution as `fold-integer-ops` leaves it: the run-time zero
// point's int32 bias `Cast(z) * -Σw` (a [C] vector), the dequantising multiply by the
// run-time scale and the activation after the convolution. The scalar cast joins the
// multiply that broadcasts it (one vector kernel), and the convolution keeps its whole
// group: the bias, converted [C] -> NC1HWC0 in its prologue, is loaded flat (36 channels:
// the last channel tile's lanes past C are zeros), the multiply and the ReLU run on the
// accumulator tile. Two kernels, no group split.
func.func @qconv_runtime_bias(%x: !layout.tensor<1x40x9x9xi8, NCHW>, %z: !layout.tensor<i8>, %s: !layout.tensor<f32>) -> !layout.tensor<1x36x5x5xf32, NCHW> {
  %w = graph.constant dense<3> : !layout.tensor<36x40x3x3xi8, NCHW>
  %sums = graph.constant dense<-1080> : !layout.tensor<36xi32>
  %z32 = graph.cast %z {to = 6} : (!layout.tensor<i8>) -> !layout.tensor<i32>
  %b = graph.mul %z32, %sums : (!layout.tensor<i32>, !layout.tensor<36xi32>) -> !layout.tensor<36xi32>
  %d = graph.constant dense<1.0> : !layout.tensor<36xf32>
  %c = graph.quant_conv2d %x, %w, %b, %d, %z {strides = [2, 2], pads = [1, 1, 1, 1]} : (!layout.tensor<1x40x9x9xi8, NCHW>, !layout.tensor<36x40x3x3xi8, NCHW>, !layout.tensor<36xi32>, !layout.tensor<36xf32>, !layout.tensor<i8>) -> !layout.tensor<1x36x5x5xf32, NCHW>
  %m = graph.mul %c, %s : (!layout.tensor<1x36x5x5xf32, NCHW>, !layout.tensor<f32>) -> !layout.tensor<1x36x5x5xf32, NCHW>
  %r = graph.relu %m : !layout.tensor<1x36x5x5xf32, NCHW>
  func.return %r : !layout.tensor<1x36x5x5xf32, NCHW>
}
// CHECK:       tile.launch @fused_cast_mul_0(%z, %sums, %[[B:[a-z0-9_]+]]) :
// CHECK:       tile.launch @fused_trans_data_quant_conv2d_trans_data_mul_relu_1_mix_aic(%x, %[[B]], %w,
// CHECK-NOT:   tile.launch
// CHECK:       func.return
// CHECK-LABEL: func.func @fused_cast_mul_0(
// CHECK-SAME:    tile.kernel = "vector"
// The scalar program's tile is one element, which the multiply broadcasts.
// CHECK:         %z32_ub = tile.alloc : memref<1xi32, "UB">
// CHECK:         tile.vcast %z_ub to %z32_ub
// CHECK-NEXT:    tile.vmul %z32_ub, %sums_ub to %b_ub : memref<1xi32, "UB">, memref<36xi32, "UB"> to memref<36xi32, "UB">
// CHECK-LABEL: func.func @fused_trans_data_quant_conv2d_trans_data_mul_relu_1_mix_aic(
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         tile.copy_flat %{{.*}}[%{{.*}}] to %bias_l1[%c0] {count = {{[0-9]+}} : i64} : memref<36xi32, "GM"> to memref<1x{{[0-9]+}}x1x1x16xi32, "L1">
// CHECK:         tile.fixpipe

// STATS:      lower-graph-to-kernels
// STATS-NEXT:   groups-whole    2
// STATS-NEXT:   kernels         2
// STATS-NEXT:   vector-kernels  1
// STATS-NEXT:   cube-kernels    1
// STATS-NOT:    split-groups
