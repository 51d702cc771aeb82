// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=TILED

// Input views (passes/fuse_legality.py joins_as_input_view, lowering/analysis/
// elementwise_views.py): Mamba-2's dt is sliced out of its projection and unsqueezed before
// softplus(dt + bias). The slice and the unsqueeze join the elementwise kernel and compute
// nothing: it reads dt's tiles from the projection's rows at column 40 (row stride 48).
func.func @dt(%proj: !layout.tensor<3x11x48xf32>, %bias: !layout.tensor<8xf32>) -> !layout.tensor<3x11x1x8xf32> {
  %s = graph.constant dense<[40]> : !layout.tensor<1xi64>
  %e = graph.constant dense<[48]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %dt = graph.slice %proj, %s, %e, %ax, none : (!layout.tensor<3x11x48xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x11x8xf32>
  %u = graph.unsqueeze %dt, %ax : (!layout.tensor<3x11x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x11x1x8xf32>
  %sum = graph.add %u, %bias : (!layout.tensor<3x11x1x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<3x11x1x8xf32>
  %out = graph.softplus %sum : (!layout.tensor<3x11x1x8xf32>) -> !layout.tensor<3x11x1x8xf32>
  func.return %out : !layout.tensor<3x11x1x8xf32>
}
// CHECK-LABEL: func.func @dt(
// CHECK:         %out = graph.fused "fused_slice_unsqueeze_add_softplus_0" <injective> (%proj, %s, %e, %ax, %bias)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:      graph.slice
// CHECK-NEXT:      graph.unsqueeze
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.softplus
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %out

// TILED-LABEL: func.func @dt(
// TILED:         tile.launch @[[K:fused_slice_unsqueeze_add_softplus_0]](%proj, %bias, %out)
// TILED-NOT:     tile.launch
// TILED:       func.func @[[K]](
// TILED:         tile.strided_view %proj : memref<3x11x48xf32, "GM"> to memref<3x11x1x8xf32, strided<[528, 48, 8, 1], offset: 40>, "GM">

// A head split (reshape, transpose of the middle axes) read by a product: one kernel, its
// operand read with the head's rows 8 elements apart.
func.func @heads(%x: !layout.tensor<2x7x32xf32>, %y: !layout.tensor<2x4x7x8xf32>) -> !layout.tensor<2x4x7x8xf32> {
  %shape = graph.constant dense<[2, 7, 4, 8]> : !layout.tensor<4xi64>
  %r = graph.reshape %x, %shape : (!layout.tensor<2x7x32xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x7x4x8xf32>
  %t = graph.transpose %r {perm = [0, 2, 1, 3]} : (!layout.tensor<2x7x4x8xf32>) -> !layout.tensor<2x4x7x8xf32>
  %out = graph.mul %t, %y : (!layout.tensor<2x4x7x8xf32>, !layout.tensor<2x4x7x8xf32>) -> !layout.tensor<2x4x7x8xf32>
  func.return %out : !layout.tensor<2x4x7x8xf32>
}
// CHECK-LABEL: func.func @heads(
// CHECK:         %out = graph.fused "fused_reshape_transpose_mul_1" <injective> (%x, %shape, %y)

// TILED-LABEL: func.func @heads(
// TILED:         tile.launch @[[K:fused_reshape_transpose_mul_1]](%x, %y, %out)
// TILED-NOT:     tile.launch
// TILED:       func.func @[[K]](
// TILED:         tile.strided_view %x : memref<2x7x32xf32, "GM"> to memref<2x4x7x8xf32, strided<[224, 8, 32, 1]>, "GM">

// Refused: a transpose that moves the last axis would read one element per burst (it stays
// the transpose kernel); a view of a value the kernel computes (the add) has no GM tensor
// to address, so the add keeps its own kernel.
func.func @refused(%x: !layout.tensor<4x16xf32>, %y: !layout.tensor<16x4xf32>) -> (!layout.tensor<16x4xf32>, !layout.tensor<16x4xf32>) {
  %t = graph.transpose %x {perm = [1, 0]} : (!layout.tensor<4x16xf32>) -> !layout.tensor<16x4xf32>
  %a = graph.mul %t, %y : (!layout.tensor<16x4xf32>, !layout.tensor<16x4xf32>) -> !layout.tensor<16x4xf32>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %s = graph.add %x, %one : (!layout.tensor<4x16xf32>, !layout.tensor<f32>) -> !layout.tensor<4x16xf32>
  %shape = graph.constant dense<[16, 4]> : !layout.tensor<2xi64>
  %r = graph.reshape %s, %shape : (!layout.tensor<4x16xf32>, !layout.tensor<2xi64>) -> !layout.tensor<16x4xf32>
  %b = graph.mul %r, %y : (!layout.tensor<16x4xf32>, !layout.tensor<16x4xf32>) -> !layout.tensor<16x4xf32>
  func.return %a, %b : !layout.tensor<16x4xf32>, !layout.tensor<16x4xf32>
}
// CHECK-LABEL: func.func @refused(
// CHECK:         %t = graph.transpose %x
// CHECK:         %a = graph.mul %t, %y
// CHECK:         %s = graph.add %x, %one
// CHECK:         %b = graph.fused "fused_reshape_mul_2" <injective> (%s, %shape, %y)

// Output views: a head merge (transpose of the middle axes, reshape) after a product joins
// its kernel, which writes the product's tiles through a view of the merged output.
func.func @merge(%x: !layout.tensor<2x4x7x8xf32>, %y: !layout.tensor<2x4x7x8xf32>) -> !layout.tensor<2x7x32xf32> {
  %p = graph.mul %x, %y : (!layout.tensor<2x4x7x8xf32>, !layout.tensor<2x4x7x8xf32>) -> !layout.tensor<2x4x7x8xf32>
  %t = graph.transpose %p {perm = [0, 2, 1, 3]} : (!layout.tensor<2x4x7x8xf32>) -> !layout.tensor<2x7x4x8xf32>
  %shape = graph.constant dense<[2, 7, 32]> : !layout.tensor<3xi64>
  %out = graph.reshape %t, %shape : (!layout.tensor<2x7x4x8xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x7x32xf32>
  func.return %out : !layout.tensor<2x7x32xf32>
}
// CHECK-LABEL: func.func @merge(
// CHECK:         %out = graph.fused "fused_mul_transpose_reshape_3" <injective> (%x, %y, %shape)

// TILED-LABEL: func.func @merge(
// TILED:         tile.launch @[[K:fused_mul_transpose_reshape_3]](%x, %y, %out)
// TILED-NOT:     tile.launch
// TILED:       func.func @[[K]](
// TILED:         tile.strided_view %out_out : memref<2x7x32xf32, "GM"> to memref<2x4x7x8xf32, strided<[224, 8, 32, 1]>, "GM">
