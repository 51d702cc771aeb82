// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},lower-graph-to-kernels,tile-kernels' | filecheck %s

// A per-channel vector [C] into NC1HWC0 with reshape type C ([1, C1, 1, 1, C0]): the
// run-time int32 bias of an int8 convolution (fold-integer-ops' `-zx · Σw` plus a
// quantised bias) on its way to fixpipe. One vector tile: the C values loaded into a UB
// tile of C1 · C0 lanes (the load zero-fills the rest: channels 24..31), then stored.
func.func @channel_vector(%b: !layout.tensor<24xi32, NCHW>) -> !layout.tensor<24xi32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 2, 1, 1, 16]> {
  %t = layout.trans_data %b : !layout.tensor<24xi32, NCHW> -> !layout.tensor<24xi32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 2, 1, 1, 16]>
  func.return %t : !layout.tensor<24xi32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 2, 1, 1, 16]>
}
// CHECK-LABEL: func.func @trans_data_1(%b: memref<24xi32, "GM">, %t_out: memref<1x2x1x1x16xi32, "GM">)
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 1
// CHECK-NEXT:    %channel_tile = tile.alloc : memref<32xi32, "UB">
// CHECK:         tile.copy_flat %b[%c0] to %channel_tile[%c0] {count = 24 : i64} : memref<24xi32, "GM"> to memref<32xi32, "UB">
// CHECK-NEXT:    tile.copy_flat %channel_tile[%c0] to %t_out[%c0] {count = 32 : i64} : memref<32xi32, "UB"> to memref<1x2x1x1x16xi32, "GM">
// CHECK-NEXT:    func.return
