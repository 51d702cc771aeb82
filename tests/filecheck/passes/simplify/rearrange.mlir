// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=block-rearrange-as-transpose},dce' --split-input-file | filecheck %s

// block-rearrange-as-transpose: DepthToSpace (CRD) as ONNX defines it — a reshape to
// [N, C/b², b, b, H, W], the transpose (0, 1, 4, 2, 5, 3), a reshape to [N, C/b², H·b, W·b]
// (N copied by a 0).
func.func @depth_to_space(%x: !layout.tensor<?x8x3x5xf32>) -> !layout.tensor<?x2x6x10xf32> {
  %y = graph.depth_to_space %x {blocksize = 2, mode = "CRD"} : (!layout.tensor<?x8x3x5xf32>) -> !layout.tensor<?x2x6x10xf32>
  func.return %y : !layout.tensor<?x2x6x10xf32>
}
// CHECK-LABEL: func.func @depth_to_space
// CHECK:         graph.constant dense<[0, 2, 2, 2, 3, 5]>
// CHECK:         graph.transpose %{{.*}} {perm = [0, 1, 4, 2, 5, 3]} : (!layout.tensor<?x2x2x2x3x5xf32>) -> !layout.tensor<?x2x3x2x5x2xf32>
// CHECK:         graph.constant dense<[0, 2, 6, 10]>
// CHECK:         %y = graph.reshape
// CHECK-NOT:     graph.depth_to_space

// -----
// SpaceToDepth (DCR, the default): [N, C, H/b, b, W/b, b], transpose (0, 3, 5, 1, 2, 4).
func.func @space_to_depth(%x: !layout.tensor<2x3x4x6xf32>) -> !layout.tensor<2x12x2x3xf32> {
  %y = graph.space_to_depth %x {blocksize = 2} : (!layout.tensor<2x3x4x6xf32>) -> !layout.tensor<2x12x2x3xf32>
  func.return %y : !layout.tensor<2x12x2x3xf32>
}
// CHECK-LABEL: func.func @space_to_depth
// CHECK:         graph.constant dense<[0, 3, 2, 2, 3, 2]>
// CHECK:         graph.transpose %{{.*}} {perm = [0, 3, 5, 1, 2, 4]}
// CHECK-NOT:     graph.space_to_depth

// -----
// A spatial size unknown when compiling: the op stays.
func.func @dynamic(%x: !layout.tensor<1x8x?x5xf32>) -> !layout.tensor<1x2x?x10xf32> {
  %y = graph.depth_to_space %x {blocksize = 2} : (!layout.tensor<1x8x?x5xf32>) -> !layout.tensor<1x2x?x10xf32>
  func.return %y : !layout.tensor<1x2x?x10xf32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK:         graph.depth_to_space
