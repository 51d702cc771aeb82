// RUN: tilegraph-opt %s -p 'set-target{platform=test precision=int8},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// The int8 cube on the `test` preset: a stride-2 3x3 `graph.quant_conv2d` of 40 int8
// channels (C0 = 32: two C1, the second with 8 valid lanes) to 36 output channels (three
// 16-channel fractals, a ragged tail of 4). The int8 NCHW data goes GM -> L1 as NC1HWC0
// with C0 = 32 (load_5hd), img2col fills (M1, K1, 16, 32) i8 fractals in L0A (K0 = 32 B /
// 1 B), the FRACTAL_Z weights are (C1·kh·kw, N1, 16, 32) i8, mmad accumulates in an i32
// L0C, and fixpipe adds the int32 bias and dequantises with the per-channel scales (both
// copied GM -> L1 per output-channel tile) into f32 (`deq`). The quantisation of the float
// input is a vector kernel with its scale as an immediate (vdup, no scalar load).
func.func @qconv(%x: !layout.tensor<1x40x9x9xf32, NCHW>) -> !layout.tensor<1x36x5x5xf32, NCHW> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<1x40x9x9xf32, NCHW>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x40x9x9xi8, NCHW>
  %w = graph.constant dense<3> : !layout.tensor<36x40x3x3xi8, NCHW>
  %b = graph.constant dense<-7> : !layout.tensor<36xi32>
  %d = graph.constant dense<0.0005> : !layout.tensor<36xf32>
  %c = graph.quant_conv2d %xq, %w, %b, %d {strides = [2, 2], pads = [1, 1, 1, 1]} : (!layout.tensor<1x40x9x9xi8, NCHW>, !layout.tensor<36x40x3x3xi8, NCHW>, !layout.tensor<36xi32>, !layout.tensor<36xf32>) -> !layout.tensor<1x36x5x5xf32, NCHW>
  %r = graph.relu %c : !layout.tensor<1x36x5x5xf32, NCHW>
  func.return %r : !layout.tensor<1x36x5x5xf32, NCHW>
}
// CHECK:       tile.launch @quantize_linear_1(%x, %xq)
// CHECK:       %w = tile.constant <i8, [18, 3, 16, 32], {{.*}}> : memref<18x3x16x32xi8, "GM">
// CHECK:       %b = tile.constant <i32, [1, 3, 1, 1, 16], {{.*}}> : memref<1x3x1x1x16xi32, "GM">
// CHECK:       %d = tile.constant <f32, [1, 3, 1, 1, 16], {{.*}}> : memref<1x3x1x1x16xf32, "GM">
// CHECK-LABEL: func.func @quantize_linear_1(
// CHECK:         tile.vdup %xq_tmp1 {value = 0.05{{[0-9]*}} : f64}
// CHECK-NEXT:    tile.vdiv %x_ub, %xq_tmp1 to %xq_tmp1
// CHECK-NEXT:    tile.vround
// CHECK-LABEL: func.func @fused_trans_data_quant_conv2d_relu_trans_data_0_mix_aic(
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 4
// CHECK:         %fmap_l1 = tile.alloc : memref<1x2x7x9x32xi8, "L1">
// CHECK-NEXT:    %w_l1 = tile.alloc : memref<2x2x16x32xi8, "L1">
// CHECK-NEXT:    %a_l0a = tile.alloc : memref<1x2x16x32xi8, "L0A">
// CHECK-NEXT:    %b_l0b = tile.alloc : memref<2x2x16x32xi8, "L0B">
// CHECK-NEXT:    %c_l0c = tile.alloc : memref<2x1x16x16xi32, "L0C">
// CHECK-NEXT:    %bias_l1 = tile.alloc : memref<1x2x1x1x16xi32, "L1">
// CHECK-NEXT:    %deq_l1 = tile.alloc : memref<1x2x1x1x16xf32, "L1">
// CHECK:         tile.load_5hd %xq[%c0, %c0, %{{.+}}, %c0] to %fmap_l1 : memref<1x40x9x9xi8, "GM"> to memref<1x2x7x9x32xi8, "L1">
// CHECK:         scf.for %[[CO:.+]] = %c0 to %c3 step %c2 {
// CHECK-NEXT:      tile.copy %b[%c0, %[[CO]], %c0, %c0, %c0] to %bias_l1
// CHECK-NEXT:      tile.copy %d[%c0, %[[CO]], %c0, %c0, %c0] to %deq_l1
// CHECK-NEXT:      scf.for %[[K:.+]] = %c0 to %c18 step %c2 {
// CHECK:             tile.load3d %fmap_l1[%[[K]]] to %a_l0a {{{.*}}channels = 40 : i64} : memref<1x2x7x9x32xi8, "L1"> to memref<1x2x16x32xi8, "L0A">
// CHECK:             tile.mmad %a_l0a, %b_l0b, %c_l0c, %first : memref<1x2x16x32xi8, "L0A">, memref<2x2x16x32xi8, "L0B">, memref<2x1x16x16xi32, "L0C">
// CHECK:           tile.fixpipe %c_l0c to %workspace[{{.*}}] bias %bias_l1 : memref<1x2x1x1x16xi32, "L1"> deq %deq_l1 : memref<1x2x1x1x16xf32, "L1"> {layout = "nc1hwc0", rows = 3 : i64} : memref<2x1x16x16xi32, "L0C"> to memref<2x2x3x5x16xf32, "GM">
