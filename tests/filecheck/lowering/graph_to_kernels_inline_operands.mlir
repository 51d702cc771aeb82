// RUN: tilegraph-opt %s --split-input-file -p lower-graph-to-kernels | filecheck %s

// Compile-time operands of data-movement ops go into the kernel body, where the tiling
// strategy reads them (tiling/data_movement.py); passed in GM they would be run-time
// values and keep the kernel on the host.

// A fused group no strategy tiles (a pad after a crop on the same border: the movement
// chain cannot fill that border from the source's edge, tiling/movement_maps.py) is split
// into kernels of its members. The pads' widths are block arguments of the group, the
// group's operands constants: each kernel gets its own inline, as the group's would.
builtin.module attributes {tilegraph.target = {platform = "test", precision = "origin"}} {
  func.func @main(%x: !layout.tensor<3x17x10xf32>) -> !layout.tensor<3x16x10xf32> {
    %crop = graph.constant dense<[0, -2, 0, 0, 0, 0]> : !layout.tensor<6xi64>
    %grow = graph.constant dense<[0, 1, 0, 0, 0, 0]> : !layout.tensor<6xi64>
    %r = graph.fused "pad_pad" <injective> (%x, %crop, %grow) : (!layout.tensor<3x17x10xf32>, !layout.tensor<6xi64>, !layout.tensor<6xi64>) -> !layout.tensor<3x16x10xf32> {
    ^bb0(%x_1: !layout.tensor<3x17x10xf32>, %c_1: !layout.tensor<6xi64>, %g_1: !layout.tensor<6xi64>):
      %cropped = graph.pad %x_1, %c_1 {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<3x17x10xf32>, !layout.tensor<6xi64>) -> !layout.tensor<3x15x10xf32>
      %grown = graph.pad %cropped, %g_1 {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<3x15x10xf32>, !layout.tensor<6xi64>) -> !layout.tensor<3x16x10xf32>
      graph.yield %grown : !layout.tensor<3x16x10xf32>
    }
    func.return %r : !layout.tensor<3x16x10xf32>
  }
}
// CHECK-LABEL: func.func @main(
// CHECK:         tile.launch @pad_1(%x, %cropped) :
// CHECK:         tile.launch @pad_2(%cropped, %grown) :
// CHECK:       func.func @pad_1(%x: memref<3x17x10xf32, "GM">, %cropped_out: memref<3x15x10xf32, "GM">) attributes {tile.kernel = "vector"} {
// CHECK-NEXT:    graph.constant dense<[0, -2, 0, 0, 0, 0]>
// CHECK-NEXT:    tile.read %x
// CHECK-NEXT:    graph.pad
// CHECK:       func.func @pad_2(%cropped: memref<3x15x10xf32, "GM">, %grown_out: memref<3x16x10xf32, "GM">) attributes {tile.kernel = "vector"} {
// CHECK-NEXT:    graph.constant dense<[0, 1, 0, 0, 0, 0]>
// CHECK-NEXT:    tile.read %cropped
// CHECK-NEXT:    graph.pad

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
