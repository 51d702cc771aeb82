// RUN: tilegraph-opt %s --split-input-file -p lower-graph-to-kernels | filecheck %s

// Compile-time operands of data-movement ops go into the kernel body, where the tiling
// strategy reads them (tiling/data_movement.py); passed in GM they would be run-time
// values and keep the kernel on the host.

// A fused group no strategy tiles (a concat of a slice: the concat strategy takes no
// slice producer) is split into kernels of its members. The slice's bounds are block
// arguments of the group, the group's operands constants: its kernel gets them inline, as
// the group's would.
builtin.module attributes {tilegraph.target = {platform = "test", precision = "origin"}} {
  func.func @main(%x: !layout.tensor<1x16x6x6xf32, NCHW>, %y: !layout.tensor<1x8x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW> {
    %starts = graph.constant dense<[0]> : !layout.tensor<1xi64>
    %ends = graph.constant dense<[8]> : !layout.tensor<1xi64>
    %axes = graph.constant dense<[1]> : !layout.tensor<1xi64>
    %r = graph.fused "slice_concat" <injective> (%x, %starts, %ends, %axes, %y) : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1x8x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW> {
    ^bb0(%x_1: !layout.tensor<1x16x6x6xf32, NCHW>, %s_1: !layout.tensor<1xi64>, %e_1: !layout.tensor<1xi64>, %a_1: !layout.tensor<1xi64>, %y_1: !layout.tensor<1x8x6x6xf32, NCHW>):
      %sl = graph.slice %x_1, %s_1, %e_1, %a_1 {layout.kernel = "origin"} : (!layout.tensor<1x16x6x6xf32, NCHW>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x8x6x6xf32, NCHW>
      %cat = graph.concat %sl, %y_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<1x8x6x6xf32, NCHW>, !layout.tensor<1x8x6x6xf32, NCHW>) -> !layout.tensor<1x16x6x6xf32, NCHW>
      graph.yield %cat : !layout.tensor<1x16x6x6xf32, NCHW>
    }
    func.return %r : !layout.tensor<1x16x6x6xf32, NCHW>
  }
}
// CHECK-LABEL: func.func @main(
// CHECK:         tile.launch @slice_1(%x, %sl) :
// CHECK:       func.func @slice_1(%x: memref<1x16x6x6xf32, "GM">, %sl_out: memref<1x8x6x6xf32, "GM">) attributes {tile.kernel = "vector"} {
// CHECK-NEXT:    graph.constant dense<[0]>
// CHECK-NEXT:    graph.constant dense<[8]>
// CHECK-NEXT:    graph.constant dense<[1]>
// CHECK-NEXT:    tile.read %x
// CHECK-NEXT:    graph.slice

// -----

// A constant pad's value (a float scalar) is inlined too: the DMA fills with it.
builtin.module attributes {tilegraph.target = {platform = "test", precision = "origin"}} {
  func.func @main(%x: !layout.tensor<5x7xf32>) -> !layout.tensor<6x10xf32> {
    %pads = graph.constant dense<[1, 2, 0, 1]> : !layout.tensor<4xi64>
    %value = graph.constant dense<1.5> : !layout.tensor<f32>
    %p = graph.pad %x, %pads, %value {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<5x7xf32>, !layout.tensor<4xi64>, !layout.tensor<f32>) -> !layout.tensor<6x10xf32>
    func.return %p : !layout.tensor<6x10xf32>
  }
}
// CHECK-LABEL: func.func @main(
// CHECK:         tile.launch @pad_1(%x, %p) :
// CHECK:       func.func @pad_1(%x: memref<5x7xf32, "GM">, %p_out: memref<6x10xf32, "GM">) attributes {tile.kernel = "vector"} {
// CHECK-NEXT:    graph.constant dense<[1, 2, 0, 1]>
// CHECK-NEXT:    graph.constant dense<1.5
