// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=TILED

// LLaMA's head split before the rotary embedding (passes/fuse_rotary_views.py): the
// reshape / transpose chain only re-indexes x, so it joins the rotary op's group, and the
// rotary kernel reads x's rows through the chain's strided view: rows of D = 8 elements at
// the row stride H·D = 24, head h at column offset h·8. No transpose kernel.
func.func @rotary_heads(%x: !layout.tensor<1x20x24xf32>, %c: !layout.tensor<1x1x20x8xf32>, %s: !layout.tensor<1x1x20x8xf32>) -> !layout.tensor<1x3x20x8xf32> {
  %shape = graph.constant dense<[1, 20, 3, 8]> : !layout.tensor<4xi64>
  %split = graph.reshape %x, %shape : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x3x8xf32>
  %heads = graph.transpose %split {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x3x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  %y = graph.apply_rotary %heads, %c, %s : (!layout.tensor<1x3x20x8xf32>, !layout.tensor<1x1x20x8xf32>, !layout.tensor<1x1x20x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  func.return %y : !layout.tensor<1x3x20x8xf32>
}
// CHECK-LABEL: func.func @rotary_heads(
// CHECK:         %y = graph.fused "fused_reshape_transpose_apply_rotary_0" <opaque> (%x, %shape, %c, %s)
// CHECK:           graph.reshape
// CHECK-NEXT:      graph.transpose
// CHECK-NEXT:      graph.apply_rotary
// CHECK-NOT:     graph.fused

// TILED-LABEL: func.func @rotary_heads(
// TILED:         tile.launch @[[K:fused_reshape_transpose_apply_rotary_0]](%x, %c, %s, %y)
// TILED-NOT:     tile.launch
// TILED:       func.func @[[K]](
// TILED-SAME:    tile.kernel = "vector"
// TILED:         %x_view = tile.strided_view %x : memref<1x20x24xf32, "GM"> to memref<1x3x20x8xf32, strided<[480, 8, 24, 1]>, "GM">
// TILED:         tile.copy %x_view[
