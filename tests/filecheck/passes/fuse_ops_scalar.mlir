// RUN: tilegraph-opt %s -p fuse-ops --split-input-file | filecheck %s

// A run-time zero point cast to int32 (one element) joins the multiply that stretches it
// over the channels (the int32 bias of a dynamically quantised convolution): the vector
// kernel computes the scalar once instead of a launch of its own. A product of two scalars
// (the dequantisation scale sx·sw) joins the group of the elementwise op it feeds too.
func.func @scalar_program(%z: !layout.tensor<i8>, %sx: !layout.tensor<f32>, %sw: !layout.tensor<f32>, %sums: !layout.tensor<36xi32>, %v: !layout.tensor<36xf32>) -> (!layout.tensor<36xi32>, !layout.tensor<36xf32>) {
  %z32 = graph.cast %z {to = 6} : (!layout.tensor<i8>) -> !layout.tensor<i32>
  %b = graph.mul %z32, %sums : (!layout.tensor<i32>, !layout.tensor<36xi32>) -> !layout.tensor<36xi32>
  %s = graph.mul %sx, %sw : !layout.tensor<f32>
  %d = graph.div %v, %s : (!layout.tensor<36xf32>, !layout.tensor<f32>) -> !layout.tensor<36xf32>
  func.return %b, %d : !layout.tensor<36xi32>, !layout.tensor<36xf32>
}
// CHECK-LABEL: func.func @scalar_program
// CHECK-NEXT:  %b = graph.fused "fused_cast_mul_{{[0-9]+}}" <broadcast> (%z, %sums)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %z32 = graph.cast
// CHECK-NEXT:    %b_1 = graph.mul %z32
// CHECK:       %d = graph.fused "fused_mul_div_{{[0-9]+}}" <broadcast> (%sx, %sw, %v)

// -----
// Only scalars computed from scalars: a reduction to one element stays out of the
// elementwise op that broadcasts it (its input is the whole tensor), and a scalar does not
// join a convolution's epilogue (the cube's tiles have no vector program beside them).
func.func @not_scalar_program(%x: !layout.tensor<1x4x8x8xf32, NCHW>, %w: !layout.tensor<4x4x1x1xf32, NCHW>, %sx: !layout.tensor<f32>, %sw: !layout.tensor<f32>) -> (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>) {
  %ax = graph.constant dense<[0, 1, 2, 3]> : !layout.tensor<4xi64>
  %m = graph.reduce_max %x, %ax {keepdims = 0} : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4xi64>) -> !layout.tensor<f32>
  %y = graph.sub %x, %m : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<f32>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %s = graph.mul %sx, %sw : !layout.tensor<f32>
  %e = graph.mul %c, %s : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<f32>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  func.return %y, %e : !layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @not_scalar_program
// CHECK:       %m = graph.reduce_max %x
// CHECK-NEXT:  %y = graph.sub %x, %m
// CHECK:       %s = graph.mul %sx, %sw
// CHECK-NEXT:  %e = graph.fused "fused_conv2d_mul_{{[0-9]+}}" <out_elemwise_fusable> (%x, %w, %s)
