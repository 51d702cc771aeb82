// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=TILED

// Phi-3's fused projection [q | k | v] (passes/fuse_views.py, lowering/analysis/rotary_views.py):
// q and k are rotated, v is read by a matmul. Each reader takes its own copy of the split
// (splits-cloned), so no split kernel: the rotary kernels read q's and k's rows through
// the split's and the head split's strided view (row stride 72, k from column 24).
// Falcon's scale of q after the rotation (a multiply by a one-element constant) is the
// q kernel's tail.
func.func @rotary_split(%qkv: !layout.tensor<1x20x72xf32>, %c: !layout.tensor<1x1x20x8xf32>, %s: !layout.tensor<1x1x20x8xf32>, %w: !layout.tensor<8x8xf32>) -> (!layout.tensor<1x3x20x8xf32>, !layout.tensor<1x3x20x8xf32>, !layout.tensor<1x3x20x8xf32>) {
  %sizes = graph.constant dense<[24, 24, 24]> : !layout.tensor<3xi64>
  %q, %k, %v = graph.split %qkv, %sizes {axis = 2} : (!layout.tensor<1x20x72xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>)
  %shape = graph.constant dense<[1, 20, 3, 8]> : !layout.tensor<4xi64>
  %q4 = graph.reshape %q, %shape : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x3x8xf32>
  %qh = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x3x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  %k4 = graph.reshape %k, %shape : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x3x8xf32>
  %kh = graph.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x3x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  %v4 = graph.reshape %v, %shape : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x3x8xf32>
  %vh = graph.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x3x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  %qr = graph.apply_rotary %qh, %c, %s : (!layout.tensor<1x3x20x8xf32>, !layout.tensor<1x1x20x8xf32>, !layout.tensor<1x1x20x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  %scale = graph.constant dense<[0.59460354]> : !layout.tensor<1xf32>
  %qs = graph.mul %qr, %scale : (!layout.tensor<1x3x20x8xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x3x20x8xf32>
  %kr = graph.apply_rotary %kh, %c, %s : (!layout.tensor<1x3x20x8xf32>, !layout.tensor<1x1x20x8xf32>, !layout.tensor<1x1x20x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  %vw = graph.matmul %vh, %w : (!layout.tensor<1x3x20x8xf32>, !layout.tensor<8x8xf32>) -> !layout.tensor<1x3x20x8xf32>
  func.return %qs, %kr, %vw : !layout.tensor<1x3x20x8xf32>, !layout.tensor<1x3x20x8xf32>, !layout.tensor<1x3x20x8xf32>
}
// CHECK-LABEL: func.func @rotary_split(
// CHECK:         %qs = graph.fused "fused_split_reshape_transpose_apply_rotary_mul_0" <opaque> (%qkv, %sizes, %shape, %c, %s, %scale)
// CHECK:           graph.split
// CHECK-NEXT:      graph.reshape
// CHECK-NEXT:      graph.transpose
// CHECK-NEXT:      graph.apply_rotary
// CHECK-NEXT:      graph.mul
// CHECK:         %kr = graph.fused "fused_split_reshape_transpose_apply_rotary_1" <opaque> (%qkv,
// CHECK:         %vw = graph.fused "fused_split_reshape_transpose_matmul_2"
// CHECK:           graph.yield %vw_1
// CHECK-NOT:     graph.split
// CHECK:         func.return %qs, %kr, %vw

// TILED-LABEL: func.func @rotary_split(
// TILED:         tile.launch @[[Q:fused_split_reshape_transpose_apply_rotary_mul_0]](%qkv, %c, %s, %scale, %qs)
// TILED:         tile.launch @[[K:fused_split_reshape_transpose_apply_rotary_1]](%qkv, %c, %s, %kr)
// TILED:         tile.launch @fused_split_reshape_transpose_matmul_2(%qkv, %w, %vw)
// TILED-NOT:     tile.launch
// TILED:       func.func @[[Q]](
// TILED:         %qkv_view = tile.strided_view %qkv : memref<1x20x72xf32, "GM"> to memref<1x3x20x8xf32, strided<[1440, 8, 72, 1]>, "GM">
// TILED:         %scale_ub = tile.alloc : memref<1x1x1x1xf32, "UB">
// TILED:         tile.copy %scale_view
// TILED:         tile.vadd %cos_ub, %x1_ub to %cos_ub
// TILED-NEXT:    tile.vmul %cos_ub, %scale_ub to %cos_ub
// TILED:       func.func @[[K]](
// TILED:         %qkv_view = tile.strided_view %qkv : memref<1x20x72xf32, "GM"> to memref<1x3x20x8xf32, strided<[1440, 8, 72, 1], offset: 24>, "GM">
// TILED-NOT:     %scale_ub
