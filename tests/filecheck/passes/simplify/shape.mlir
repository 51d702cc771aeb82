// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=transpose-compose,transpose-identity,transpose-to-reshape,reshape-chain,reshape-to-same-shape,squeeze-unsqueeze-inverse,merge-squeezes,merge-unsqueezes,reduce-keepdims,reshape-like-chain},dce' --split-input-file | filecheck %s

// transpose-compose: two transposes become one; inverse perms give x.
func.func @transpose_compose(%x: !layout.tensor<2x3x4xf32>) -> (!layout.tensor<4x2x3xf32>, !layout.tensor<2x3x4xf32>) {
  %a = graph.transpose %x {perm = [1, 0, 2]} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<3x2x4xf32>
  %b = graph.transpose %a {perm = [2, 1, 0]} : (!layout.tensor<3x2x4xf32>) -> !layout.tensor<4x2x3xf32>
  %c = graph.transpose %x {perm = [2, 0, 1]} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<4x2x3xf32>
  %d = graph.transpose %c {perm = [1, 2, 0]} : (!layout.tensor<4x2x3xf32>) -> !layout.tensor<2x3x4xf32>
  func.return %b, %d : !layout.tensor<4x2x3xf32>, !layout.tensor<2x3x4xf32>
}
// CHECK-LABEL: func.func @transpose_compose
// CHECK-NEXT:  %b = graph.transpose %x {perm = [2, 0, 1]} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<4x2x3xf32>
// CHECK-NEXT:  func.return %b, %x

// -----
// transpose-compose / transpose-identity must not replace by an NCHW x: the consumers
// expect the ND result (the pair becomes one identity transpose). A non-identity perm stays.
func.func @transpose_no(%x: !layout.tensor<1x3x4x5xf32, NCHW>, %y: !layout.tensor<2x3xf32>) -> (!layout.tensor<1x3x4x5xf32>, !layout.tensor<1x3x4x5xf32>, !layout.tensor<3x2xf32>) {
  %a = graph.transpose %x {perm = [0, 2, 3, 1]} : (!layout.tensor<1x3x4x5xf32, NCHW>) -> !layout.tensor<1x4x5x3xf32>
  %b = graph.transpose %a {perm = [0, 3, 1, 2]} : (!layout.tensor<1x4x5x3xf32>) -> !layout.tensor<1x3x4x5xf32>
  %c = graph.transpose %x {perm = [0, 1, 2, 3]} : (!layout.tensor<1x3x4x5xf32, NCHW>) -> !layout.tensor<1x3x4x5xf32>
  %d = graph.transpose %y : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  func.return %b, %c, %d : !layout.tensor<1x3x4x5xf32>, !layout.tensor<1x3x4x5xf32>, !layout.tensor<3x2xf32>
}
// CHECK-LABEL: func.func @transpose_no
// CHECK-NEXT:  %b = graph.transpose %x {perm = [0, 1, 2, 3]} : (!layout.tensor<1x3x4x5xf32, NCHW>) -> !layout.tensor<1x3x4x5xf32>
// CHECK-NEXT:  %c = graph.transpose %x {perm = [0, 1, 2, 3]}
// CHECK-NEXT:  %d = graph.transpose %y :
// CHECK-NEXT:  func.return %b, %c, %d

// -----
// transpose-identity: an identity perm on an ND tensor, and a rank-1 default perm.
func.func @transpose_identity(%x: !layout.tensor<2x3xf32>, %v: !layout.tensor<5xf32>) -> (!layout.tensor<2x3xf32>, !layout.tensor<5xf32>) {
  %a = graph.transpose %x {perm = [0, 1]} : !layout.tensor<2x3xf32>
  %b = graph.transpose %v : !layout.tensor<5xf32>
  func.return %a, %b : !layout.tensor<2x3xf32>, !layout.tensor<5xf32>
}
// CHECK-LABEL: func.func @transpose_identity
// CHECK-NEXT:  func.return %x, %v

// -----
// transpose-to-reshape: only size-1 dims move.
func.func @transpose_to_reshape(%x: !layout.tensor<1x5x1x6xf32>) -> !layout.tensor<5x1x6x1xf32> {
  %a = graph.transpose %x {perm = [1, 2, 3, 0]} : (!layout.tensor<1x5x1x6xf32>) -> !layout.tensor<5x1x6x1xf32>
  func.return %a : !layout.tensor<5x1x6x1xf32>
}
// CHECK-LABEL: func.func @transpose_to_reshape
// CHECK-NEXT:  %{{.*}} = graph.constant dense<[5, 1, 6, 1]> : !layout.tensor<4xi64>
// CHECK-NEXT:  %a = graph.reshape %x, %{{.*}} : (!layout.tensor<1x5x1x6xf32>, !layout.tensor<4xi64>) -> !layout.tensor<5x1x6x1xf32>
// CHECK-NEXT:  func.return %a

// -----
// transpose-to-reshape must not fire when non-1 dims swap, nor on symbolic shapes.
func.func @transpose_to_reshape_no(%x: !layout.tensor<1x5x6xf32>, %y: !layout.tensor<[1, s0], f32>) -> (!layout.tensor<6x5x1xf32>, !layout.tensor<[s0, 1], f32>) {
  %a = graph.transpose %x {perm = [2, 1, 0]} : (!layout.tensor<1x5x6xf32>) -> !layout.tensor<6x5x1xf32>
  %b = graph.transpose %y : (!layout.tensor<[1, s0], f32>) -> !layout.tensor<[s0, 1], f32>
  func.return %a, %b : !layout.tensor<6x5x1xf32>, !layout.tensor<[s0, 1], f32>
}
// CHECK-LABEL: func.func @transpose_to_reshape_no
// CHECK-NEXT:  %a = graph.transpose %x {perm = [2, 1, 0]}
// CHECK-NEXT:  %b = graph.transpose %y :
// CHECK-NEXT:  func.return %a, %b

// -----
// reshape-chain: reshape of reshape / flatten / unsqueeze reads x directly; a -1 stays.
func.func @reshape_chain(%x: !layout.tensor<[s0, 6], f32>, %y: !layout.tensor<2x3x4xf32>) -> (!layout.tensor<["2*s0", 3], f32>, !layout.tensor<4x6xf32>) {
  %s1 = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %s2 = graph.constant dense<[-1, 3]> : !layout.tensor<2xi64>
  %a = graph.reshape %x, %s1 : (!layout.tensor<[s0, 6], f32>, !layout.tensor<1xi64>) -> !layout.tensor<["6*s0"], f32>
  %b = graph.reshape %a, %s2 : (!layout.tensor<["6*s0"], f32>, !layout.tensor<2xi64>) -> !layout.tensor<["2*s0", 3], f32>
  %f = graph.flatten %y {axis = 2} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<6x4xf32>
  %s3 = graph.constant dense<[4, 6]> : !layout.tensor<2xi64>
  %g = graph.reshape %f, %s3 : (!layout.tensor<6x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<4x6xf32>
  func.return %b, %g : !layout.tensor<["2*s0", 3], f32>, !layout.tensor<4x6xf32>
}
// CHECK-LABEL: func.func @reshape_chain
// CHECK:       %b = graph.reshape %x, %s2 : (!layout.tensor<[s0, 6], f32>, !layout.tensor<2xi64>) -> !layout.tensor<["2*s0", 3], f32>
// CHECK:       %g = graph.reshape %y, %s3 : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<4x6xf32>
// CHECK-NEXT:  func.return %b, %g

// -----
// reshape-chain: a 0 copying a middle dim is resolved to the static final shape.
func.func @reshape_chain_zero(%x: !layout.tensor<2x12xf32>) -> !layout.tensor<6x4xf32> {
  %s1 = graph.constant dense<[6, 4]> : !layout.tensor<2xi64>
  %a = graph.reshape %x, %s1 : (!layout.tensor<2x12xf32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
  %s2 = graph.constant dense<[0, -1]> : !layout.tensor<2xi64>
  %b = graph.reshape %a, %s2 : (!layout.tensor<6x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
  func.return %b : !layout.tensor<6x4xf32>
}
// CHECK-LABEL: func.func @reshape_chain_zero
// CHECK:       %{{.*}} = graph.constant dense<[6, 4]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %b = graph.reshape %x, %{{.*}} : (!layout.tensor<2x12xf32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
// CHECK-NEXT:  func.return %b

// -----
// reshape-chain must not fire when a 0 copies a middle dim of a symbolic shape, nor when
// the inner op is a transpose (it reorders elements).
func.func @reshape_chain_no(%x: !layout.tensor<[6, s0], f32>, %y: !layout.tensor<2x3xf32>) -> (!layout.tensor<[3, 2, s0], f32>, !layout.tensor<6xf32>) {
  %s1 = graph.constant dense<[3, -1]> : !layout.tensor<2xi64>
  %a = graph.reshape %x, %s1 : (!layout.tensor<[6, s0], f32>, !layout.tensor<2xi64>) -> !layout.tensor<[3, "2*s0"], f32>
  %s2 = graph.constant dense<[0, 2, -1]> : !layout.tensor<3xi64>
  %b = graph.reshape %a, %s2 : (!layout.tensor<[3, "2*s0"], f32>, !layout.tensor<3xi64>) -> !layout.tensor<[3, 2, s0], f32>
  %t = graph.transpose %y : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  %s3 = graph.constant dense<[6]> : !layout.tensor<1xi64>
  %c = graph.reshape %t, %s3 : (!layout.tensor<3x2xf32>, !layout.tensor<1xi64>) -> !layout.tensor<6xf32>
  func.return %b, %c : !layout.tensor<[3, 2, s0], f32>, !layout.tensor<6xf32>
}
// CHECK-LABEL: func.func @reshape_chain_no
// CHECK:       %b = graph.reshape %a, %s2
// CHECK:       %c = graph.reshape %t, %s3

// -----
// reshape-to-same-shape: a reshape to x's own (known) shape is x.
func.func @reshape_same(%x: !layout.tensor<[s0, 4], f32>) -> !layout.tensor<[s0, 4], f32> {
  %s = graph.constant dense<[0, 4]> : !layout.tensor<2xi64>
  %a = graph.reshape %x, %s : (!layout.tensor<[s0, 4], f32>, !layout.tensor<2xi64>) -> !layout.tensor<[s0, 4], f32>
  func.return %a : !layout.tensor<[s0, 4], f32>
}
// CHECK-LABEL: func.func @reshape_same
// CHECK-NEXT:  func.return %x

// -----
// reshape-to-same-shape must not fire with UNKNOWN dims (?x? may be another ?x?) nor on an
// NCHW x (the result is ND).
func.func @reshape_same_no(%x: !layout.tensor<?x?xf32>, %s: !layout.tensor<2xi64>, %y: !layout.tensor<1x3x4x4xf32, NCHW>) -> (!layout.tensor<?x?xf32>, !layout.tensor<1x3x4x4xf32>) {
  %a = graph.reshape %x, %s : (!layout.tensor<?x?xf32>, !layout.tensor<2xi64>) -> !layout.tensor<?x?xf32>
  %c = graph.constant dense<[1, 3, 4, 4]> : !layout.tensor<4xi64>
  %b = graph.reshape %y, %c : (!layout.tensor<1x3x4x4xf32, NCHW>, !layout.tensor<4xi64>) -> !layout.tensor<1x3x4x4xf32>
  func.return %a, %b : !layout.tensor<?x?xf32>, !layout.tensor<1x3x4x4xf32>
}
// CHECK-LABEL: func.func @reshape_same_no
// CHECK-NEXT:  %a = graph.reshape %x, %s
// CHECK-NEXT:  %c = graph.constant
// CHECK-NEXT:  %b = graph.reshape %y, %c
// CHECK-NEXT:  func.return %a, %b

// -----
// squeeze-unsqueeze-inverse: both orders, negative axes normalised.
func.func @squeeze_unsqueeze(%x: !layout.tensor<3x1x4xf32>, %y: !layout.tensor<3x4xf32>) -> (!layout.tensor<3x1x4xf32>, !layout.tensor<3x4xf32>) {
  %a1 = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %a2 = graph.constant dense<[-2]> : !layout.tensor<1xi64>
  %s = graph.squeeze %x, %a1 : (!layout.tensor<3x1x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x4xf32>
  %u = graph.unsqueeze %s, %a2 : (!layout.tensor<3x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x1x4xf32>
  %v = graph.unsqueeze %y, %a2 : (!layout.tensor<3x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x1x4xf32>
  %w = graph.squeeze %v, %a1 : (!layout.tensor<3x1x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x4xf32>
  func.return %u, %w : !layout.tensor<3x1x4xf32>, !layout.tensor<3x4xf32>
}
// CHECK-LABEL: func.func @squeeze_unsqueeze
// CHECK-NOT:   graph.squeeze
// CHECK-NOT:   graph.unsqueeze
// CHECK:       func.return %x, %y

// -----
// squeeze-unsqueeze-inverse must not fire for other axes.
func.func @squeeze_unsqueeze_no(%x: !layout.tensor<1x3x4xf32>) -> !layout.tensor<3x4x1xf32> {
  %a0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %a2 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %s = graph.squeeze %x, %a0 : (!layout.tensor<1x3x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x4xf32>
  %u = graph.unsqueeze %s, %a2 : (!layout.tensor<3x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x4x1xf32>
  func.return %u : !layout.tensor<3x4x1xf32>
}
// CHECK-LABEL: func.func @squeeze_unsqueeze_no
// CHECK:       %s = graph.squeeze %x, %a0
// CHECK-NEXT:  %u = graph.unsqueeze %s, %a2

// -----
// merge-squeezes and merge-unsqueezes: axes mapped into one op.
func.func @merge(%x: !layout.tensor<1x3x1x4x1xf32>, %y: !layout.tensor<3x4xf32>) -> (!layout.tensor<3x4xf32>, !layout.tensor<1x3x1x4x1xf32>) {
  %a0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %a2 = graph.constant dense<[1, -1]> : !layout.tensor<2xi64>
  %s = graph.squeeze %x, %a0 : (!layout.tensor<1x3x1x4x1xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x1x4x1xf32>
  %t = graph.squeeze %s, %a2 : (!layout.tensor<3x1x4x1xf32>, !layout.tensor<2xi64>) -> !layout.tensor<3x4xf32>
  %b1 = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %b2 = graph.constant dense<[0, 4]> : !layout.tensor<2xi64>
  %u = graph.unsqueeze %y, %b1 : (!layout.tensor<3x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x1x4xf32>
  %v = graph.unsqueeze %u, %b2 : (!layout.tensor<3x1x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<1x3x1x4x1xf32>
  func.return %t, %v : !layout.tensor<3x4xf32>, !layout.tensor<1x3x1x4x1xf32>
}
// CHECK-LABEL: func.func @merge
// CHECK:       %{{.*}} = graph.constant dense<[0, 2, 4]> : !layout.tensor<3xi64>
// CHECK-NEXT:  %t = graph.squeeze %x, %{{.*}} : (!layout.tensor<1x3x1x4x1xf32>, !layout.tensor<3xi64>) -> !layout.tensor<3x4xf32>
// CHECK:       %{{.*}} = graph.constant dense<[0, 2, 4]> : !layout.tensor<3xi64>
// CHECK-NEXT:  %v = graph.unsqueeze %y, %{{.*}} : (!layout.tensor<3x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x3x1x4x1xf32>
// CHECK-NEXT:  func.return %t, %v

// -----
// merge-squeezes must not fire with a non-constant inner axes operand.
func.func @merge_no(%x: !layout.tensor<1x3x1xf32>, %ax: !layout.tensor<1xi64>) -> !layout.tensor<?xf32> {
  %s = graph.squeeze %x, %ax : (!layout.tensor<1x3x1xf32>, !layout.tensor<1xi64>) -> !layout.tensor<?x?xf32>
  %a0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %t = graph.squeeze %s, %a0 : (!layout.tensor<?x?xf32>, !layout.tensor<1xi64>) -> !layout.tensor<?xf32>
  func.return %t : !layout.tensor<?xf32>
}
// CHECK-LABEL: func.func @merge_no
// CHECK-NEXT:  %s = graph.squeeze %x, %ax
// CHECK-NEXT:  %a0 = graph.constant
// CHECK-NEXT:  %t = graph.squeeze %s, %a0

// -----
// reduce-keepdims: unsqueeze of the reduced axes after keepdims = 0 is keepdims = 1.
func.func @reduce_keepdims(%x: !layout.tensor<2x3x4xf32>) -> (!layout.tensor<2x1x1xf32>, !layout.tensor<2x1x4xi64>) {
  %ax = graph.constant dense<[1, -1]> : !layout.tensor<2xi64>
  %r = graph.reduce_sum %x, %ax {keepdims = 0} : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<2xf32>
  %ax2 = graph.constant dense<[2, 1]> : !layout.tensor<2xi64>
  %u = graph.unsqueeze %r, %ax2 : (!layout.tensor<2xf32>, !layout.tensor<2xi64>) -> !layout.tensor<2x1x1xf32>
  %m = graph.arg_max %x {axis = 1, keepdims = 0} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<2x4xi64>
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %v = graph.unsqueeze %m, %one : (!layout.tensor<2x4xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x1x4xi64>
  func.return %u, %v : !layout.tensor<2x1x1xf32>, !layout.tensor<2x1x4xi64>
}
// CHECK-LABEL: func.func @reduce_keepdims
// CHECK:       %u = graph.reduce_sum %x, %ax {keepdims = 1} : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<2x1x1xf32>
// CHECK:       %v = graph.arg_max %x {axis = 1, keepdims = 1} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<2x1x4xi64>
// CHECK-NEXT:  func.return %u, %v

// -----
// reduce-keepdims must not fire for other axes, nor when the reduction has another user.
func.func @reduce_keepdims_no(%x: !layout.tensor<2x3xf32>) -> (!layout.tensor<1x2xf32>, !layout.tensor<2x1xf32>, !layout.tensor<2xf32>) {
  %ax = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %r = graph.reduce_max %x, %ax {keepdims = 0} : (!layout.tensor<2x3xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2xf32>
  %z = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %u = graph.unsqueeze %r, %z : (!layout.tensor<2xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x2xf32>
  %s = graph.reduce_min %x, %ax {keepdims = 0} : (!layout.tensor<2x3xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2xf32>
  %v = graph.unsqueeze %s, %ax : (!layout.tensor<2xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>
  func.return %u, %v, %s : !layout.tensor<1x2xf32>, !layout.tensor<2x1xf32>, !layout.tensor<2xf32>
}
// CHECK-LABEL: func.func @reduce_keepdims_no
// CHECK:       %u = graph.unsqueeze %r, %z
// CHECK:       %v = graph.unsqueeze %s, %ax

// -----
// reshape-like-chain: squeeze / unsqueeze / flatten after a reshape or flatten is one
// reshape when the final shape is static.
func.func @reshape_like_chain(%x: !layout.tensor<2x3x4xf32>) -> (!layout.tensor<6x4xf32>, !layout.tensor<1x24xf32>) {
  %s = graph.constant dense<[6, 1, 4]> : !layout.tensor<3xi64>
  %a = graph.reshape %x, %s : (!layout.tensor<2x3x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x1x4xf32>
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %b = graph.squeeze %a, %one : (!layout.tensor<6x1x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<6x4xf32>
  %f = graph.flatten %x {axis = 0} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<1x24xf32>
  %g = graph.flatten %f : !layout.tensor<1x24xf32>
  func.return %b, %g : !layout.tensor<6x4xf32>, !layout.tensor<1x24xf32>
}
// CHECK-LABEL: func.func @reshape_like_chain
// CHECK:       %[[S:.*]] = graph.constant dense<[6, 4]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %b = graph.reshape %x, %[[S]] : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
// CHECK:       %[[T:.*]] = graph.constant dense<[1, 24]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %g = graph.reshape %x, %[[T]] : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<1x24xf32>

// -----
// reshape-like-chain must not fire on a symbolic final shape, nor after a transpose.
func.func @reshape_like_chain_no(%x: !layout.tensor<[s0, 4], f32>, %y: !layout.tensor<2x3x1xf32>) -> (!layout.tensor<[s0, 4, 1], f32>, !layout.tensor<3x2xf32>) {
  %a = graph.flatten %x : !layout.tensor<[s0, 4], f32>
  %one = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %b = graph.unsqueeze %a, %one : (!layout.tensor<[s0, 4], f32>, !layout.tensor<1xi64>) -> !layout.tensor<[s0, 4, 1], f32>
  %t = graph.transpose %y {perm = [1, 0, 2]} : (!layout.tensor<2x3x1xf32>) -> !layout.tensor<3x2x1xf32>
  %u = graph.squeeze %t : (!layout.tensor<3x2x1xf32>) -> !layout.tensor<3x2xf32>
  func.return %b, %u : !layout.tensor<[s0, 4, 1], f32>, !layout.tensor<3x2xf32>
}
// CHECK-LABEL: func.func @reshape_like_chain_no
// CHECK:       %b = graph.unsqueeze %a, %one
// CHECK:       %u = graph.squeeze %t
