// RUN: tilegraph-opt %s -p fuse-ops --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'fuse-ops{platform=test}' --split-input-file | filecheck %s --check-prefix=SMALL
// RUN: tilegraph-opt %s -p fuse-ops --split-input-file | tilegraph-opt --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p fuse-ops --split-input-file --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// A conv's per-channel bias add and ReLU join its group; the result leaves through yield.
func.func @conv_epilogue(%x: !layout.tensor<1x4x8x8xf32, NCHW>, %w: !layout.tensor<4x4x1x1xf32, NCHW>, %b: !layout.tensor<4x1x1xf32>) -> !layout.tensor<1x4x8x8xf32, NCHW> {
  %c = graph.conv2d %x, %w : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %a = graph.add %c, %b : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x1x1xf32>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %r = graph.relu %a : !layout.tensor<1x4x8x8xf32, NCHW>
  func.return %r : !layout.tensor<1x4x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @conv_epilogue
// CHECK-NEXT:  %r = graph.fused "fused_conv2d_add_relu_0" <out_elemwise_fusable> (%x, %w, %b) : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW>, !layout.tensor<4x1x1xf32>) -> !layout.tensor<1x4x8x8xf32, NCHW> {
// CHECK-NEXT:  ^bb0(%x_1: !layout.tensor<1x4x8x8xf32, NCHW>, %w_1: !layout.tensor<4x4x1x1xf32, NCHW>, %b_1: !layout.tensor<4x1x1xf32>):
// CHECK-NEXT:    %c = graph.conv2d %x_1, %w_1
// CHECK-NEXT:    %a = graph.add %c, %b_1
// CHECK-NEXT:    %r_1 = graph.relu %a
// CHECK-NEXT:    graph.yield %r_1 : !layout.tensor<1x4x8x8xf32, NCHW>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return %r

// -----
// An elementwise op before a conv is not a prologue of it; a value with two users is not
// fused into either (no duplicated work): it ends its own group, which the lone tanh
// reading it then joins as a second output (the conv, which does not lead back into it,
// moves after that kernel).
func.func @no_prologue(%x: !layout.tensor<1x4x8x8xf32, NCHW>, %w: !layout.tensor<4x4x1x1xf32, NCHW>) -> (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>) {
  %e = graph.exp %x : !layout.tensor<1x4x8x8xf32, NCHW>
  %s = graph.sigmoid %e : !layout.tensor<1x4x8x8xf32, NCHW>
  %c = graph.conv2d %s, %w : (!layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<4x4x1x1xf32, NCHW>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %t = graph.tanh %s : !layout.tensor<1x4x8x8xf32, NCHW>
  func.return %c, %t : !layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @no_prologue
// CHECK-NEXT:  %s, %t = graph.fused "fused_exp_sigmoid_tanh_0" <elemwise> (%x)
// CHECK:       graph.yield %s_1, %t_1
// CHECK:       %c = graph.conv2d %s, %w
// CHECK-NEXT:  func.return %c, %t

// -----
// Opaque ops stay alone; a reduction takes an elementwise prologue and epilogue.
func.func @reduce(%x: !layout.tensor<4x16xf32>) -> (!layout.tensor<4x16xf32>, !layout.tensor<4x1xf32>) {
  %sm = graph.softmax %x {axis = 1} : !layout.tensor<4x16xf32>
  %sq = graph.mul %x, %x : !layout.tensor<4x16xf32>
  %ax = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %m = graph.reduce_mean %sq, %ax : (!layout.tensor<4x16xf32>, !layout.tensor<1xi64>) -> !layout.tensor<4x1xf32>
  %r = graph.sqrt %m : !layout.tensor<4x1xf32>
  func.return %sm, %r : !layout.tensor<4x16xf32>, !layout.tensor<4x1xf32>
}
// CHECK-LABEL: func.func @reduce
// CHECK-NEXT:  %sm = graph.softmax %x
// CHECK:       %r = graph.fused "fused_mul_reduce_mean_sqrt_0" <comm_reduce> (%x, %ax)

// -----
// The one exception: a LayerNorm / Softmax takes the per-tensor QuantizeLinear of its only
// result as its kernel's tail (the kernel writes int8); nothing else joins that group (the
// add before the LayerNorm stays apart), and a QuantizeLinear whose float input another op
// reads as well, or whose scale is not a constant, stays alone.
func.func @quantize_tail(%x: !layout.tensor<4x16xf32>, %g: !layout.tensor<16xf32>, %rs: !layout.tensor<f32>) -> (!layout.tensor<4x16xi8>, !layout.tensor<4x16xi8>, !layout.tensor<4x16xf32>, !layout.tensor<4x16xi8>) {
  %s = graph.constant dense<0.02> : !layout.tensor<f32>
  %z = graph.constant dense<3> : !layout.tensor<i8>
  %a = graph.add %x, %x : !layout.tensor<4x16xf32>
  %ln = graph.layer_norm %a, %g {axis = -1} : (!layout.tensor<4x16xf32>, !layout.tensor<16xf32>) -> !layout.tensor<4x16xf32>
  %lq = graph.quantize_linear %ln, %s, %z : (!layout.tensor<4x16xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<4x16xi8>
  %sm = graph.softmax %x {axis = 1} : !layout.tensor<4x16xf32>
  %sq = graph.quantize_linear %sm, %s, %z : (!layout.tensor<4x16xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<4x16xi8>
  %r = graph.relu %sm : !layout.tensor<4x16xf32>
  %sm2 = graph.softmax %x {axis = 1} : !layout.tensor<4x16xf32>
  %rq = graph.quantize_linear %sm2, %rs, %z : (!layout.tensor<4x16xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<4x16xi8>
  func.return %lq, %sq, %r, %rq : !layout.tensor<4x16xi8>, !layout.tensor<4x16xi8>, !layout.tensor<4x16xf32>, !layout.tensor<4x16xi8>
}
// CHECK-LABEL: func.func @quantize_tail
// CHECK:       %a = graph.add %x, %x
// CHECK:       %lq = graph.fused "fused_layer_norm_quantize_linear_{{[0-9]+}}" <opaque> (%a, %g, %s, %z)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:    graph.layer_norm
// CHECK-NEXT:    graph.quantize_linear
// CHECK:       %sm = graph.softmax %x
// CHECK-NEXT:  %sq = graph.quantize_linear %sm, %s, %z
// CHECK:       %sm2 = graph.softmax %x
// CHECK-NEXT:  %rq = graph.quantize_linear %sm2, %rs, %z

// -----
// The same exception for a short elementwise chain of one-element constants: torch's SDPA
// NaN guard `where(isnan(p), 0, p)` after a softmax is the softmax kernel's tail. A chain
// that reads a full tensor from outside (the mask multiply) is no tail.
func.func @guard_tail(%x: !layout.tensor<2x8x8xf32>, %m: !layout.tensor<2x8x8xf32>) -> (!layout.tensor<2x8x8xf32>, !layout.tensor<2x8x8xf32>) {
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %p = graph.softmax %x {axis = -1} : !layout.tensor<2x8x8xf32>
  %nan = graph.is_nan %p : (!layout.tensor<2x8x8xf32>) -> !layout.tensor<2x8x8xi1>
  %g = graph.where %nan, %zero, %p : (!layout.tensor<2x8x8xi1>, !layout.tensor<f32>, !layout.tensor<2x8x8xf32>) -> !layout.tensor<2x8x8xf32>
  %p2 = graph.softmax %x {axis = -1} : !layout.tensor<2x8x8xf32>
  %masked = graph.mul %p2, %m : !layout.tensor<2x8x8xf32>
  func.return %g, %masked : !layout.tensor<2x8x8xf32>, !layout.tensor<2x8x8xf32>
}
// CHECK-LABEL: func.func @guard_tail
// CHECK:       %g = graph.fused "fused_softmax_is_nan_where_{{[0-9]+}}" <opaque> (%x, %zero)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:    graph.softmax
// CHECK-NEXT:    graph.is_nan
// CHECK-NEXT:    graph.where
// CHECK:       %p2 = graph.softmax %x
// CHECK-NEXT:  %masked = graph.mul %p2, %m

// -----
// The UB working set bounds a group: on ascend910b the three adds are one kernel; on the
// `test` preset (UB 8 KiB, 1 KiB tiles, inputs and outputs double-buffered) even two of
// them need 9 KiB, so nothing fuses.
func.func @working_set(%a: !layout.tensor<32x32xf32>, %b: !layout.tensor<32x32xf32>, %c: !layout.tensor<32x32xf32>, %d: !layout.tensor<32x32xf32>) -> !layout.tensor<32x32xf32> {
  %ab = graph.add %a, %b : !layout.tensor<32x32xf32>
  %abc = graph.add %ab, %c : !layout.tensor<32x32xf32>
  %abcd = graph.add %abc, %d : !layout.tensor<32x32xf32>
  func.return %abcd : !layout.tensor<32x32xf32>
}
// CHECK-LABEL: func.func @working_set
// CHECK-NEXT:  %abcd = graph.fused "fused_add_0" <broadcast> (%a, %b, %c, %d)
// SMALL-LABEL: func.func @working_set
// SMALL-NOT:   graph.fused
// SMALL-COUNT-3: graph.add
// SMALL:       func.return

// STATS: fuse-ops (ran 1x)
// STATS: groups 1
// STATS: fused-ops 3
// STATS: largest-group 3
