// RUN: tilegraph-opt %s -p fuse-ops --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p fuse-ops --split-input-file --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

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
// elementwise op that broadcasts it (its input is the whole tensor). A scalar program read
// by a convolution's epilogue joins it, placed right before its reader (after the anchor:
// the epilogue's vector code computes it).
func.func @epilogue_scalar_program(%x: !layout.tensor<1x4x8x8xf32, NCHW>, %w: !layout.tensor<4x4x1x1xf32, NCHW>, %sx: !layout.tensor<f32>, %sw: !layout.tensor<f32>) -> (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>) {
  %ax = graph.constant dense<[0, 1, 2, 3]> : !layout.tensor<4xi64>
  %m = graph.reduce_max %x, %ax {keepdims = 0} : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4xi64>) -> !layout.tensor<f32>
  %y = graph.sub %x, %m : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<f32>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %s = graph.mul %sx, %sw : !layout.tensor<f32>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %e = graph.mul %c, %s : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<f32>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  func.return %y, %e : !layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @epilogue_scalar_program
// CHECK:       %m = graph.reduce_max %x
// CHECK-NEXT:  %y = graph.sub %x, %m
// CHECK-NEXT:  %e = graph.fused "fused_conv2d_mul_{{[0-9]+}}" <out_elemwise_fusable> (%x, %w, %sx, %sw)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %c = graph.conv2d
// CHECK-NEXT:    %s = graph.mul %sx_1, %sw_1
// CHECK-NEXT:    %e_1 = graph.mul %c, %s

// -----
// A scalar program read by two groups (common_old's scale product: by the run-time bias's
// division and by the dequantising multiply after the convolution) is copied into each,
// instead of running alone so that both may read it.
func.func @shared_scalar_program(%x: !layout.tensor<1x4x8x8xf32, NCHW>, %w: !layout.tensor<4x4x1x1xf32, NCHW>, %sx: !layout.tensor<f32>, %sw: !layout.tensor<f32>, %v: !layout.tensor<4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<1x4x8x8xf32, NCHW>) {
  %s = graph.mul %sx, %sw : !layout.tensor<f32>
  %d = graph.div %v, %s : (!layout.tensor<4xf32>, !layout.tensor<f32>) -> !layout.tensor<4xf32>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %e = graph.mul %c, %s : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<f32>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  func.return %d, %e : !layout.tensor<4xf32>, !layout.tensor<1x4x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @shared_scalar_program
// CHECK-NEXT:  %d = graph.fused "fused_mul_div_{{[0-9]+}}" <broadcast> (%sx, %sw, %v)
// CHECK:       %e = graph.fused "fused_conv2d_mul_{{[0-9]+}}" <out_elemwise_fusable> (%x, %w, %sx, %sw)
// CHECK-NOT:   graph.mul %sx, %sw
// CHECK:       func.return

// -----
// A reduction to one element whose scalar tail is the group's root (magika's): the tail
// stays in program order after its anchor (its reader, a reshape, is outside the group).
func.func @scalar_root(%x: !layout.tensor<4x16xf32>, %c: !layout.tensor<f32>) -> !layout.tensor<1xf32> {
  %ax = graph.constant dense<[0, 1]> : !layout.tensor<2xi64>
  %m = graph.reduce_mean %x, %ax {keepdims = 0} : (!layout.tensor<4x16xf32>, !layout.tensor<2xi64>) -> !layout.tensor<f32>
  %s = graph.mul %m, %c : !layout.tensor<f32>
  %shape = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %r = graph.reshape %s, %shape : (!layout.tensor<f32>, !layout.tensor<1xi64>) -> !layout.tensor<1xf32>
  func.return %r : !layout.tensor<1xf32>
}
// CHECK-LABEL: func.func @scalar_root
// CHECK:       %s = graph.fused "fused_reduce_mean_mul_{{[0-9]+}}" <comm_reduce> (%x, %ax, %c)
// CHECK-NEXT:  ^bb0
// CHECK-NEXT:    %m = graph.reduce_mean
// CHECK-NEXT:    %s_1 = graph.mul %m, %c_1
// CHECK:       %r = graph.reshape %s, %shape

// STATS: fuse-ops (ran 1x)
// STATS: scalar-programs-cloned 1
