// RUN: tilegraph-opt %s -p lower-graph-to-kernels | filecheck %s
// RUN: tilegraph-opt %s -p lower-graph-to-kernels | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p lower-graph-to-kernels,lower-graph-to-kernels | filecheck %s
// RUN: tilegraph-opt %s -p lower-graph-to-kernels --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// lower-graph-to-kernels on a graph after O2 (written out by hand, so that only the
// lowering is under test): a fused conv group (NCHW -> NC1HWC0, conv2d with bias, ReLU,
// back to NCHW), a lone sigmoid and a lone hardmax reading it (no tile lowering: host).
// The second RUN line parses the output back; the third runs the pass twice (a lowered
// function is left alone).
func.func @main(%x: !layout.tensor<1x4x6x6xf32, NCHW>, %w: !layout.tensor<4x4x1x1xf32, NCHW -> FRACTAL_Z [1, 1, 16, 16]>, %y: !layout.tensor<3x5xf32>) -> (!layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<3x5xf32>) {
  %bias = graph.constant dense<[[[[[1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]]]]> : !layout.tensor<4xf32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 1, 1, 1, 16]>
  %r = graph.fused "conv_block" <out_elemwise_fusable> (%x, %w, %bias) : (!layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW -> FRACTAL_Z [1, 1, 16, 16]>, !layout.tensor<4xf32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 1, 1, 1, 16]>) -> !layout.tensor<1x4x6x6xf32, NCHW> {
  ^bb0(%x_1: !layout.tensor<1x4x6x6xf32, NCHW>, %w_1: !layout.tensor<4x4x1x1xf32, NCHW -> FRACTAL_Z [1, 1, 16, 16]>, %bias_1: !layout.tensor<4xf32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 1, 1, 1, 16]>):
    %x5 = layout.trans_data %x_1 : !layout.tensor<1x4x6x6xf32, NCHW> -> !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>
    %c = graph.conv2d %x5, %w_1, %bias_1 : (!layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>, !layout.tensor<4x4x1x1xf32, NCHW -> FRACTAL_Z [1, 1, 16, 16]>, !layout.tensor<4xf32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 1, 1, 1, 16]>) -> !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>
    %c_relu = graph.relu %c : !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>
    %c_nchw = layout.trans_data %c_relu : !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]> -> !layout.tensor<1x4x6x6xf32, NCHW>
    graph.yield %c_nchw : !layout.tensor<1x4x6x6xf32, NCHW>
  }
  %s = graph.sigmoid %y : !layout.tensor<3x5xf32>
  %t = graph.hardmax %s {axis = 1} : !layout.tensor<3x5xf32>
  func.return %r, %t : !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<3x5xf32>
}

// The host sequence: arguments become GM buffers (storage shapes), the tensor signature is
// kept as tile.signature; the constant is a tile.constant with its storage-layout data;
// each kernel gets a GM tile.alloc per result, then its tile.launch with inputs then
// outputs, in dataflow order.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %x: memref<1x4x6x6xf32, "GM">, %w: memref<1x1x16x16xf32, "GM">, %y: memref<3x5xf32, "GM">)
// CHECK-SAME:    -> (memref<1x4x6x6xf32, "GM">, memref<3x5xf32, "GM">)
// CHECK-SAME:    tile.signature = (!layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW -> FRACTAL_Z [1, 1, 16, 16]>, !layout.tensor<3x5xf32>) -> (!layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<3x5xf32>)
// CHECK-NEXT:    %bias = tile.constant <f32, [1, 1, 1, 1, 16], [[[[[1.0, 2.0, 3.0, 4.0, 0.0, {{.*}}]]]]]> : memref<1x1x1x1x16xf32, "GM">
// CHECK-NEXT:    %r = tile.alloc : memref<1x4x6x6xf32, "GM">
// CHECK-NEXT:    tile.launch @conv_block(%x, %w, %bias, %r) : memref<1x4x6x6xf32, "GM">, memref<1x1x16x16xf32, "GM">, memref<1x1x1x1x16xf32, "GM">, memref<1x4x6x6xf32, "GM">
// CHECK-NEXT:    %s = tile.alloc : memref<3x5xf32, "GM">
// CHECK-NEXT:    tile.launch @[[SIGMOID:sigmoid[_0-9]*]](%y, %s) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
// CHECK-NEXT:    %t = tile.alloc : memref<3x5xf32, "GM">
// CHECK-NEXT:    tile.launch @[[HARDMAX:hardmax[_0-9]*]](%s, %t) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
// CHECK-NEXT:    func.return %r, %t : memref<1x4x6x6xf32, "GM">, memref<3x5xf32, "GM">
// CHECK-NEXT:  }

// The fused group keeps its kernel name: GM inputs, then the output; the cube unit; the
// body is tile.read per input, the group's ops unchanged, tile.write of the yielded value.
// CHECK-NEXT:  func.func @conv_block(%x: memref<1x4x6x6xf32, "GM">, %w: memref<1x1x16x16xf32, "GM">, %bias: memref<1x1x1x1x16xf32, "GM">, %[[OUT:[a-z_0-9]+]]: memref<1x4x6x6xf32, "GM">)
// CHECK-SAME:    attributes {tile.kernel = "cube"}
// CHECK-NOT:     tile.host_reason
// CHECK-NEXT:    %[[X:.+]] = tile.read %x : memref<1x4x6x6xf32, "GM"> -> !layout.tensor<1x4x6x6xf32, NCHW>
// CHECK-NEXT:    %[[W:.+]] = tile.read %w : memref<1x1x16x16xf32, "GM"> -> !layout.tensor<4x4x1x1xf32, NCHW -> FRACTAL_Z [1, 1, 16, 16]>
// CHECK-NEXT:    %[[B:.+]] = tile.read %bias : memref<1x1x1x1x16xf32, "GM"> -> !layout.tensor<4xf32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 1, 1, 1, 16]>
// CHECK-NEXT:    %x5 = layout.trans_data %[[X]] : !layout.tensor<1x4x6x6xf32, NCHW> -> !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>
// CHECK-NEXT:    %c = graph.conv2d %x5, %[[W]], %[[B]]
// CHECK-NEXT:    %c_relu = graph.relu %c
// CHECK-NEXT:    %c_nchw = layout.trans_data %c_relu
// CHECK-NEXT:    tile.write %c_nchw to %[[OUT]] : !layout.tensor<1x4x6x6xf32, NCHW> to memref<1x4x6x6xf32, "GM">
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }

// A lone op is a kernel of its own (vector).
// CHECK-NEXT:  func.func @[[SIGMOID]](%y: memref<3x5xf32, "GM">, %[[SOUT:[a-z_0-9]+]]: memref<3x5xf32, "GM">)
// CHECK-SAME:    attributes {tile.kernel = "vector"}
// CHECK-NEXT:    %[[Y:.+]] = tile.read %y : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
// CHECK-NEXT:    %[[S:.+]] = graph.sigmoid %[[Y]] : !layout.tensor<3x5xf32>
// CHECK-NEXT:    tile.write %[[S]] to %[[SOUT]]
// CHECK-NEXT:    func.return

// No tile lowering: a host kernel, with the reason.
// CHECK:       func.func @[[HARDMAX]](%s: memref<3x5xf32, "GM">, %[[TOUT:[a-z_0-9]+]]: memref<3x5xf32, "GM">)
// CHECK-SAME:    attributes {tile.kernel = "host", tile.host_reason = "no vector lowering for graph.hardmax"}
// CHECK-NEXT:    %[[S2:.+]] = tile.read %s
// CHECK-NEXT:    %[[T:.+]] = graph.hardmax %[[S2]] {axis = 1{{.*}}} : !layout.tensor<3x5xf32>
// CHECK-NEXT:    tile.write %[[T]] to %[[TOUT]]
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-NEXT: }
// CHECK-NOT:   func.func

// STATS:      lower-graph-to-kernels (ran 1x)
// STATS-NEXT:   groups-whole    1
// STATS-NEXT:   kernels         3
// STATS-NEXT:   cube-kernels    1
// STATS-NEXT:   vector-kernels  1
// STATS-NEXT:   host-kernels    1
