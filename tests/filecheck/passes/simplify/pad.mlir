// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=noop-pad,pad-into-conv,pad-into-pool,merge-slices,merge-concats},dce' --split-input-file | filecheck %s

// noop-pad: all-zero pads in any mode.
func.func @noop_pad(%x: !layout.tensor<3x4xf32>) -> (!layout.tensor<3x4xf32>, !layout.tensor<3x4xf32>) {
  %p = graph.constant dense<[0, 0, 0, 0]> : !layout.tensor<4xi64>
  %a = graph.pad %x, %p : (!layout.tensor<3x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x4xf32>
  %b = graph.pad %x, %p {mode = "reflect"} : (!layout.tensor<3x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x4xf32>
  func.return %a, %b : !layout.tensor<3x4xf32>, !layout.tensor<3x4xf32>
}
// CHECK-LABEL: func.func @noop_pad
// CHECK-NOT:   graph.pad
// CHECK:       func.return %x, %x

// -----
// noop-pad must not fire for pads that add and remove (sum 0) or non-constant pads.
func.func @noop_pad_no(%x: !layout.tensor<3x4xf32>, %q: !layout.tensor<4xi64>) -> (!layout.tensor<3x4xf32>, !layout.tensor<?x?xf32>) {
  %p = graph.constant dense<[1, 0, -1, 0]> : !layout.tensor<4xi64>
  %a = graph.pad %x, %p : (!layout.tensor<3x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x4xf32>
  %b = graph.pad %x, %q : (!layout.tensor<3x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<?x?xf32>
  func.return %a, %b : !layout.tensor<3x4xf32>, !layout.tensor<?x?xf32>
}
// CHECK-LABEL: func.func @noop_pad_no
// CHECK:       %a = graph.pad %x, %p
// CHECK-NEXT:  %b = graph.pad %x, %q

// -----
// pad-into-conv: a zero spatial pad (given with axes) becomes conv pads.
func.func @pad_conv(%x: !layout.tensor<1x3x6x6xf32, NCHW>, %w: !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x5x7xf32, NCHW> {
  %p = graph.constant dense<[1, 0, 0, 2]> : !layout.tensor<4xi64>
  %ax = graph.constant dense<[2, 3]> : !layout.tensor<2xi64>
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %a = graph.pad %x, %p, %zero, %ax : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<4xi64>, !layout.tensor<f32>, !layout.tensor<2xi64>) -> !layout.tensor<1x3x7x8xf32, NCHW>
  %c = graph.conv2d %a, %w {pads = [0, 1, 0, 0]} : (!layout.tensor<1x3x7x8xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x5x7xf32, NCHW>
  func.return %c : !layout.tensor<1x4x5x7xf32, NCHW>
}
// CHECK-LABEL: func.func @pad_conv
// CHECK-NOT:   graph.pad
// CHECK:       %c = graph.conv2d %x, %w {pads = [1, 1, 0, 2]} : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x5x7xf32, NCHW>

// -----
// pad-into-conv must not fire: nonzero fill, reflect mode, channel pad, negative pad,
// SAME auto_pad, a pad with another user.
func.func @pad_conv_no(%x: !layout.tensor<1x3x6x6xf32, NCHW>, %w: !layout.tensor<4x3x3x3xf32, NCHW>, %w5: !layout.tensor<4x5x3x3xf32, NCHW>) -> (!layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x4x3x3xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x3x8x8xf32, NCHW>) {
  %p = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : !layout.tensor<8xi64>
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %a = graph.pad %x, %p, %one : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<8xi64>, !layout.tensor<f32>) -> !layout.tensor<1x3x8x8xf32, NCHW>
  %ca = graph.conv2d %a, %w : (!layout.tensor<1x3x8x8xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x6x6xf32, NCHW>
  %b = graph.pad %x, %p {mode = "reflect"} : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x3x8x8xf32, NCHW>
  %cb = graph.conv2d %b, %w : (!layout.tensor<1x3x8x8xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x6x6xf32, NCHW>
  %pc = graph.constant dense<[0, 1, 1, 1, 0, 1, 1, 1]> : !layout.tensor<8xi64>
  %c = graph.pad %x, %pc : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x5x8x8xf32, NCHW>
  %cc = graph.conv2d %c, %w5 : (!layout.tensor<1x5x8x8xf32, NCHW>, !layout.tensor<4x5x3x3xf32, NCHW>) -> !layout.tensor<1x4x6x6xf32, NCHW>
  %pn = graph.constant dense<[0, 0, -1, -1, 0, 0, 0, 0]> : !layout.tensor<8xi64>
  %d = graph.pad %x, %pn : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x3x5x5xf32, NCHW>
  %cd = graph.conv2d %d, %w : (!layout.tensor<1x3x5x5xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x3x3xf32, NCHW>
  %e = graph.pad %x, %p : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x3x8x8xf32, NCHW>
  %ce = graph.conv2d %e, %w {auto_pad = "SAME_UPPER"} : (!layout.tensor<1x3x8x8xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x8x8xf32, NCHW>
  %f = graph.pad %x, %p : (!layout.tensor<1x3x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x3x8x8xf32, NCHW>
  %cf = graph.conv2d %f, %w : (!layout.tensor<1x3x8x8xf32, NCHW>, !layout.tensor<4x3x3x3xf32, NCHW>) -> !layout.tensor<1x4x6x6xf32, NCHW>
  func.return %ca, %cb, %cc, %cd, %ce, %cf, %f : !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x4x3x3xf32, NCHW>, !layout.tensor<1x4x8x8xf32, NCHW>, !layout.tensor<1x4x6x6xf32, NCHW>, !layout.tensor<1x3x8x8xf32, NCHW>
}
// CHECK-LABEL: func.func @pad_conv_no
// CHECK:       %ca = graph.conv2d %a, %w
// CHECK:       %cb = graph.conv2d %b, %w
// CHECK:       %cc = graph.conv2d %c, %w5
// CHECK:       %cd = graph.conv2d %d, %w
// CHECK:       %ce = graph.conv2d %e, %w
// CHECK:       %cf = graph.conv2d %f, %w

// -----
// pad-into-pool: -inf into max_pool; 0 into avg_pool with count_include_pad = 1, or into
// one without pads of its own (count_include_pad becomes 1).
func.func @pad_pool(%x: !layout.tensor<1x2x6x6xf32, NCHW>) -> (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x6x6xf32, NCHW>) {
  %p = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : !layout.tensor<8xi64>
  %ninf = graph.constant dense<-inf> : !layout.tensor<f32>
  %a = graph.pad %x, %p, %ninf : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>, !layout.tensor<f32>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %ma = graph.max_pool %a {kernel_shape = [3, 3], strides = [2, 2]} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x3x3xf32, NCHW>
  %b = graph.pad %x, %p : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %mb = graph.avg_pool %b {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1, count_include_pad = 1, pads = [0, 0, 1, 1]} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  %c = graph.pad %x, %p : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %mc = graph.avg_pool %c {kernel_shape = [3, 3]} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x6x6xf32, NCHW>
  %r = graph.max_pool %ma {kernel_shape = [1, 1], pads = [0, 0, 0, 0]} : (!layout.tensor<1x2x3x3xf32, NCHW>) -> !layout.tensor<1x2x3x3xf32, NCHW>
  %s = graph.pad %r, %p, %ninf : (!layout.tensor<1x2x3x3xf32, NCHW>, !layout.tensor<8xi64>, !layout.tensor<f32>) -> !layout.tensor<1x2x5x5xf32, NCHW>
  %ms = graph.max_pool %s {kernel_shape = [2, 2]} : (!layout.tensor<1x2x5x5xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  func.return %ms, %mb, %mc : !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x6x6xf32, NCHW>
}
// CHECK-LABEL: func.func @pad_pool
// CHECK-NOT:   graph.pad
// CHECK:       %ma = graph.max_pool %x {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}
// CHECK-NEXT:  %mb = graph.avg_pool %x {kernel_shape = [3, 3], strides = [2, 2], ceil_mode = 1, count_include_pad = 1, pads = [1, 1, 2, 2]}
// CHECK-NEXT:  %mc = graph.avg_pool %x {kernel_shape = [3, 3], pads = [1, 1, 1, 1], count_include_pad = 1}
// CHECK-NEXT:  %r = graph.max_pool %ma
// CHECK-NEXT:  %ms = graph.max_pool %r {kernel_shape = [2, 2], pads = [1, 1, 1, 1]}

// -----
// pad-into-pool must not fire: a zero pad into max_pool, a -inf pad into avg_pool, a zero
// pad into an avg_pool that excludes its own pads from the count (ORT#22177), pads that
// would reach the kernel size.
func.func @pad_pool_no(%x: !layout.tensor<1x2x6x6xf32, NCHW>) -> (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<1x2x8x8xf32, NCHW>, !layout.tensor<1x2x9x9xf32, NCHW>) {
  %p = graph.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : !layout.tensor<8xi64>
  %ninf = graph.constant dense<-inf> : !layout.tensor<f32>
  %a = graph.pad %x, %p : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %ma = graph.max_pool %a {kernel_shape = [3, 3]} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x6x6xf32, NCHW>
  %b = graph.pad %x, %p, %ninf : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>, !layout.tensor<f32>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %mb = graph.avg_pool %b {kernel_shape = [3, 3], count_include_pad = 1} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x6x6xf32, NCHW>
  %c = graph.pad %x, %p : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %mc = graph.avg_pool %c {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %d = graph.pad %x, %p, %ninf : (!layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<8xi64>, !layout.tensor<f32>) -> !layout.tensor<1x2x8x8xf32, NCHW>
  %md = graph.max_pool %d {kernel_shape = [2, 2], pads = [1, 1, 1, 1]} : (!layout.tensor<1x2x8x8xf32, NCHW>) -> !layout.tensor<1x2x9x9xf32, NCHW>
  func.return %ma, %mb, %mc, %md : !layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<1x2x6x6xf32, NCHW>, !layout.tensor<1x2x8x8xf32, NCHW>, !layout.tensor<1x2x9x9xf32, NCHW>
}
// CHECK-LABEL: func.func @pad_pool_no
// CHECK:       %ma = graph.max_pool %a
// CHECK:       %mb = graph.avg_pool %b
// CHECK:       %mc = graph.avg_pool %c
// CHECK:       %md = graph.max_pool %d

// -----
// merge-slices: disjoint axes are combined; one axis sliced twice is composed.
func.func @merge_slices(%x: !layout.tensor<10x8xf32>) -> (!layout.tensor<3x4xf32>, !layout.tensor<2x8xf32>) {
  %s0 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %e0 = graph.constant dense<[5]> : !layout.tensor<1xi64>
  %a0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %a = graph.slice %x, %s0, %e0, %a0 : (!layout.tensor<10x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x8xf32>
  %s1 = graph.constant dense<[4]> : !layout.tensor<1xi32>
  %e1 = graph.constant dense<[2147483647]> : !layout.tensor<1xi32>
  %a1 = graph.constant dense<[-1]> : !layout.tensor<1xi32>
  %b = graph.slice %a, %s1, %e1, %a1 : (!layout.tensor<3x8xf32>, !layout.tensor<1xi32>, !layout.tensor<1xi32>, !layout.tensor<1xi32>) -> !layout.tensor<3x4xf32>
  %s2 = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e2 = graph.constant dense<[9]> : !layout.tensor<1xi64>
  %st = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %c = graph.slice %x, %s2, %e2, %a0, %st : (!layout.tensor<10x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<4x8xf32>
  %s3 = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e3 = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %d = graph.slice %c, %s3, %e3 : (!layout.tensor<4x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x8xf32>
  func.return %b, %d : !layout.tensor<3x4xf32>, !layout.tensor<2x8xf32>
}
// CHECK-LABEL: func.func @merge_slices
// CHECK:       %[[S:.*]] = graph.constant dense<[2, 4]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %[[E:.*]] = graph.constant dense<[5, 2147483647]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %[[A:.*]] = graph.constant dense<[0, 1]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %b = graph.slice %x, %[[S]], %[[E]], %[[A]] : (!layout.tensor<10x8xf32>, !layout.tensor<2xi64>, !layout.tensor<2xi64>, !layout.tensor<2xi64>) -> !layout.tensor<3x4xf32>
// CHECK:       %[[S2:.*]] = graph.constant dense<[3]> : !layout.tensor<1xi64>
// CHECK-NEXT:  %[[E2:.*]] = graph.constant dense<[6]> : !layout.tensor<1xi64>
// CHECK-NEXT:  %[[A2:.*]] = graph.constant dense<[0]> : !layout.tensor<1xi64>
// CHECK-NEXT:  %[[T2:.*]] = graph.constant dense<[2]> : !layout.tensor<1xi64>
// CHECK-NEXT:  %d = graph.slice %x, %[[S2]], %[[E2]], %[[A2]], %[[T2]] : (!layout.tensor<10x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x8xf32>

// -----
// merge-slices must not fire: an axis sliced twice with a symbolic dim, a negative step.
func.func @merge_slices_no(%x: !layout.tensor<[s0, 8], f32>, %y: !layout.tensor<8xf32>) -> (!layout.tensor<?x8xf32>, !layout.tensor<3xf32>) {
  %s = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e = graph.constant dense<[2147483647]> : !layout.tensor<1xi64>
  %a = graph.slice %x, %s, %e : (!layout.tensor<[s0, 8], f32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x8xf32>
  %b = graph.slice %a, %s, %e : (!layout.tensor<?x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x8xf32>
  %r0 = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %r1 = graph.constant dense<[-9]> : !layout.tensor<1xi64>
  %st = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %z = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %c = graph.slice %y, %r0, %r1, %z, %st : (!layout.tensor<8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<8xf32>
  %t3 = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %d = graph.slice %c, %z, %t3 : (!layout.tensor<8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3xf32>
  func.return %b, %d : !layout.tensor<?x8xf32>, !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @merge_slices_no
// CHECK:       %b = graph.slice %a, %s, %e
// CHECK:       %d = graph.slice %c, %z, %t3

// -----
// merge-concats: a single-use inner concat on the same axis (written -1 vs 1) is spliced.
func.func @merge_concats(%a: !layout.tensor<2x1xf32>, %b: !layout.tensor<2x2xf32>, %c: !layout.tensor<2x3xf32>) -> !layout.tensor<2x7xf32> {
  %i = graph.concat %b, %c {axis = -1} : (!layout.tensor<2x2xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x5xf32>
  %o = graph.concat %a, %i, %a {axis = 1} : (!layout.tensor<2x1xf32>, !layout.tensor<2x5xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x7xf32>
  func.return %o : !layout.tensor<2x7xf32>
}
// CHECK-LABEL: func.func @merge_concats
// CHECK-NEXT:  %o = graph.concat %a, %b, %c, %a {axis = 1} : (!layout.tensor<2x1xf32>, !layout.tensor<2x2xf32>, !layout.tensor<2x3xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<2x7xf32>
// CHECK-NEXT:  func.return %o

// -----
// merge-concats must not fire: another axis, an inner concat with another user.
func.func @merge_concats_no(%a: !layout.tensor<2x2xf32>) -> (!layout.tensor<4x4xf32>, !layout.tensor<2x6xf32>, !layout.tensor<2x4xf32>) {
  %i = graph.concat %a, %a {axis = 0} : (!layout.tensor<2x2xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<4x2xf32>
  %o = graph.concat %i, %i {axis = 1} : (!layout.tensor<4x2xf32>, !layout.tensor<4x2xf32>) -> !layout.tensor<4x4xf32>
  %j = graph.concat %a, %a {axis = 1} : (!layout.tensor<2x2xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<2x4xf32>
  %p = graph.concat %j, %a {axis = 1} : (!layout.tensor<2x4xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<2x6xf32>
  func.return %o, %p, %j : !layout.tensor<4x4xf32>, !layout.tensor<2x6xf32>, !layout.tensor<2x4xf32>
}
// CHECK-LABEL: func.func @merge_concats_no
// CHECK:       %o = graph.concat %i, %i {axis = 1}
// CHECK:       %p = graph.concat %j, %a {axis = 1}
