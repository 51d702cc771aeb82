// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// An int8 convolution whose padding holds a value known only at run time (the `pad_zero`
// operand `fold-integer-ops` gives a padded ConvInteger behind DynamicQuantizeLinear): the
// cube kernel reads it once, before its loops, on the scalar unit from GM (a cube core has
// no UB), and both loads that pad take it: load_5hd fills the L1 window's padding rows
// with it and load3d reads the padding columns as it. The AIV part of the mix kernel does
// not read it (a read only the AIC's loads take is dead there).
func.func @qconv_runtime_pad(%x: !layout.tensor<1x40x9x9xi8, NCHW>, %z: !layout.tensor<i8>) -> !layout.tensor<1x36x5x5xf32, NCHW> {
  %w = graph.constant dense<3> : !layout.tensor<36x40x3x3xi8, NCHW>
  %b = graph.constant dense<-7> : !layout.tensor<36xi32>
  %d = graph.constant dense<0.0005> : !layout.tensor<36xf32>
  %c = graph.quant_conv2d %x, %w, %b, %d, %z {strides = [2, 2], pads = [1, 1, 1, 1]} : (!layout.tensor<1x40x9x9xi8, NCHW>, !layout.tensor<36x40x3x3xi8, NCHW>, !layout.tensor<36xi32>, !layout.tensor<36xf32>, !layout.tensor<i8>) -> !layout.tensor<1x36x5x5xf32, NCHW>
  func.return %c : !layout.tensor<1x36x5x5xf32, NCHW>
}
// CHECK:       tile.launch @[[AIC:.*]](%x, %w, %b, %d, %z, %c, %mix_workspace)
// CHECK-LABEL: func.func @fused_trans_data_quant_conv2d_trans_data_0_mix_aic(
// CHECK-SAME:    %z: memref<i8, "GM">
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         %pad = tile.get_value %z[] : memref<i8, "GM">
// CHECK-NOT:     scf.for
// CHECK:         tile.load_5hd %x[%c0, %c0, %cm1, %c0] to %fmap_l1 pad %pad : memref<1x40x9x9xi8, "GM"> to memref<1x2x11x9x32xi8, "L1">
// CHECK:         tile.load3d %fmap_l1[%k] to %a_l0a pad %pad {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 5 : i64, channels = 40 : i64}
// CHECK-NOT:     pad_value
// CHECK-LABEL: func.func @fused_trans_data_quant_conv2d_trans_data_0_mix_aiv(
// CHECK-NOT:     tile.get_value
// CHECK:         func.return
