// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// A gather of constant indices forming an affine grid among view ops (tiling/
// gather_strided.py) on the `test` preset: the chain is one strided view of the kernel
// input (tile.strided_view), copied tile by tile into the output; when the view's
// unit-stride dim is not the output's last, each tile is loaded with it last and turned
// on the vector unit (tile.vtranspose). Inputs as lower-graph-to-kernels writes them.

// ---- PatchTST's unfold: windows of 8 rows at stride 8 along axis 1 of [3, 32, 5] (a
// [4, 8] index grid: strides 40 and 5), channels first after it. The loaded tile keeps
// the channel dim last (contiguous), the transpose puts it second.
func.func @gather_transpose(%in0: memref<3x32x5xf32, "GM">, %v2_out: memref<3x5x4x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15], [16, 17, 18, 19, 20, 21, 22, 23], [24, 25, 26, 27, 28, 29, 30, 31]]> : !layout.tensor<4x8xi64>
  %in0_1 = tile.read %in0 : memref<3x32x5xf32, "GM"> -> !layout.tensor<3x32x5xf32>
  %v1 = graph.gather %in0_1, %v0 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<3x32x5xf32>, !layout.tensor<4x8xi64>) -> !layout.tensor<3x4x8x5xf32>
  %v2 = graph.transpose %v1 {perm = array<i64: 0, 3, 1, 2>, layout.kernel = "origin"} : (!layout.tensor<3x4x8x5xf32>) -> !layout.tensor<3x5x4x8xf32>
  tile.write %v2 to %v2_out : !layout.tensor<3x5x4x8xf32> to memref<3x5x4x8xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @gather_transpose(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 3 : i64, tile.ops = "graph.gather,graph.transpose"
// CHECK:         %[[VIEW:.+]] = tile.strided_view %in0 : memref<3x32x5xf32, "GM"> to memref<3x4x8x5xf32, strided<[160, 40, 5, 1]>, "GM">
// CHECK-DAG:     %[[IN:.+]] = tile.alloc : memref<1x4x8x5xf32, "UB">
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<1x5x4x8xf32, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      tile.copy %[[VIEW]][%[[I]], %c0, %c0, %c0] to %[[IN]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.vtranspose %[[IN]] to %[[OUT]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0, %c0, %c0] to %v2_out[%[[I]], %c0, %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- TimeSformer's x[:, -64] (row 1: offset 40, the axis dropped) viewed [3, 2, 40]: the
// view's last dim is contiguous, a plain copy (no transpose), two frames a row of 2600.
func.func @select_reshape(%in0: memref<6x65x40xf32, "GM">, %v2_out: memref<3x2x40xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<-64> : !layout.tensor<i64>
  %s = graph.constant dense<[3, 2, 40]> : !layout.tensor<3xi64>
  %in0_1 = tile.read %in0 : memref<6x65x40xf32, "GM"> -> !layout.tensor<6x65x40xf32>
  %v1 = graph.gather %in0_1, %v0 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<6x65x40xf32>, !layout.tensor<i64>) -> !layout.tensor<6x40xf32>
  %v2 = graph.reshape %v1, %s {layout.kernel = "origin"} : (!layout.tensor<6x40xf32>, !layout.tensor<3xi64>) -> !layout.tensor<3x2x40xf32>
  tile.write %v2 to %v2_out : !layout.tensor<3x2x40xf32> to memref<3x2x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @select_reshape(
// CHECK-SAME:    tile.ops = "graph.gather,graph.reshape"
// CHECK:         %[[VIEW:.+]] = tile.strided_view %in0 : memref<6x65x40xf32, "GM"> to memref<3x2x40xf32, strided<[5200, 2600, 1], offset: 40>, "GM">
// CHECK:         %[[IN:.+]] = tile.alloc : memref<2x2x40xf32, "UB">
// CHECK-NOT:     tile.alloc
// CHECK:         scf.for %[[I:.+]] = %c0 to %c3 step %c2 {
// CHECK-NEXT:      tile.copy %[[VIEW]][%[[I]], %c0, %c0] to %[[IN]][%c0, %c0, %c0]
// CHECK-NEXT:      tile.copy %[[IN]][%c0, %c0, %c0] to %v2_out[%[[I]], %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- a repeated row (indices [2, 2]) is no strided view: left to the gather kernel,
// which says why it refuses (tile-kernels leaves it on the host; the lowering splits
// such a group before it gets here).
func.func @repeated_rows(%in0: memref<4x8x16xf32, "GM">, %v2_out: memref<4x16x2xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2, 2]> : !layout.tensor<2xi64>
  %in0_1 = tile.read %in0 : memref<4x8x16xf32, "GM"> -> !layout.tensor<4x8x16xf32>
  %v1 = graph.gather %in0_1, %v0 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<4x8x16xf32>, !layout.tensor<2xi64>) -> !layout.tensor<4x2x16xf32>
  %v2 = graph.transpose %v1 {perm = array<i64: 0, 2, 1>, layout.kernel = "origin"} : (!layout.tensor<4x2x16xf32>) -> !layout.tensor<4x16x2xf32>
  tile.write %v2 to %v2_out : !layout.tensor<4x16x2xf32> to memref<4x16x2xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @repeated_rows(
// CHECK-SAME:    tile.kernel = "host", tile.host_reason = "not a lone gather"
// CHECK-NOT:     tile.strided_view
