// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=combine-parallel,combined-projection-scale,concat-of-casts,concat-of-transposes,slice-before-cast,slice-before-transpose,reshape-across-matmul},dce' --split-input-file | filecheck %s

// combine-parallel: three 1x1 convs on one input become one conv and a Split.
func.func @siblings(%x: !layout.tensor<1x2x4x4xf32, NCHW>) -> (!layout.tensor<1x1x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x1x4x4xf32, NCHW>) {
  %w1 = graph.constant dense<[[[[1.0]], [[2.0]]]]> : !layout.tensor<1x2x1x1xf32, NCHW>
  %w2 = graph.constant dense<[[[[3.0]], [[4.0]]], [[[5.0]], [[6.0]]]]> : !layout.tensor<2x2x1x1xf32, NCHW>
  %w3 = graph.constant dense<[[[[7.0]], [[8.0]]]]> : !layout.tensor<1x2x1x1xf32, NCHW>
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x1x1xf32, NCHW>) -> !layout.tensor<1x1x4x4xf32, NCHW>
  %b = graph.conv2d %x, %w2 : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<2x2x1x1xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  %c = graph.conv2d %x, %w3 : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x1x1xf32, NCHW>) -> !layout.tensor<1x1x4x4xf32, NCHW>
  func.return %a, %b, %c : !layout.tensor<1x1x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x1x4x4xf32, NCHW>
}
// CHECK-LABEL: func.func @siblings
// CHECK:       %[[W:.*]] = graph.constant dense<{{.*}}> : !layout.tensor<4x2x1x1xf32, NCHW>
// CHECK:       %[[C:.*]] = graph.conv2d %x, %[[W]] : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<4x2x1x1xf32, NCHW>) -> !layout.tensor<1x4x4x4xf32, NCHW>
// CHECK:       %a, %b, %c = graph.split %[[C]], %{{.*}} {axis = 1}
// CHECK-NEXT:  func.return %a, %b, %c

// -----
// ... but not two of them: the Split costs the launch the merge saves.
func.func @two(%x: !layout.tensor<1x2x4x4xf32, NCHW>) -> (!layout.tensor<1x1x4x4xf32, NCHW>, !layout.tensor<1x1x4x4xf32, NCHW>) {
  %w1 = graph.constant dense<[[[[1.0]], [[2.0]]]]> : !layout.tensor<1x2x1x1xf32, NCHW>
  %w3 = graph.constant dense<[[[[7.0]], [[8.0]]]]> : !layout.tensor<1x2x1x1xf32, NCHW>
  %a = graph.conv2d %x, %w1 : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x1x1xf32, NCHW>) -> !layout.tensor<1x1x4x4xf32, NCHW>
  %c = graph.conv2d %x, %w3 : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x1x1xf32, NCHW>) -> !layout.tensor<1x1x4x4xf32, NCHW>
  func.return %a, %c : !layout.tensor<1x1x4x4xf32, NCHW>, !layout.tensor<1x1x4x4xf32, NCHW>
}
// CHECK-LABEL: func.func @two
// CHECK:       %a = graph.conv2d %x, %w1
// CHECK:       %c = graph.conv2d %x, %w3

// -----
// combine-parallel: Q, K, V projections with their row biases (BERT's; the bias either
// operand) are one MatMul, one Add of the concatenated biases, and the Split.
func.func @biased(%x: !layout.tensor<1x3x2xf32>) -> (!layout.tensor<1x3x1xf32>, !layout.tensor<1x3x2xf32>, !layout.tensor<1x3x1xf32>) {
  %w1 = graph.constant dense<[[1.0], [2.0]]> : !layout.tensor<2x1xf32>
  %w2 = graph.constant dense<[[3.0, 4.0], [5.0, 6.0]]> : !layout.tensor<2x2xf32>
  %w3 = graph.constant dense<[[7.0], [8.0]]> : !layout.tensor<2x1xf32>
  %b1 = graph.constant dense<[0.5]> : !layout.tensor<1xf32>
  %b2 = graph.constant dense<[[[1.5, 2.5]]]> : !layout.tensor<1x1x2xf32>
  %b3 = graph.constant dense<[3.5]> : !layout.tensor<1xf32>
  %p1 = graph.matmul %x, %w1 : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<1x3x1xf32>
  %q = graph.add %p1, %b1 : (!layout.tensor<1x3x1xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x3x1xf32>
  %p2 = graph.matmul %x, %w2 : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<1x3x2xf32>
  %k = graph.add %b2, %p2 : (!layout.tensor<1x1x2xf32>, !layout.tensor<1x3x2xf32>) -> !layout.tensor<1x3x2xf32>
  %p3 = graph.matmul %x, %w3 : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<1x3x1xf32>
  %v = graph.add %p3, %b3 : (!layout.tensor<1x3x1xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x3x1xf32>
  func.return %q, %k, %v : !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x2xf32>, !layout.tensor<1x3x1xf32>
}
// CHECK-LABEL: func.func @biased
// CHECK:       %p1_combined_weight = graph.constant dense<{{\[}}[1.0, 3.0, 4.0, 7.0], [2.0, 5.0, 6.0, 8.0]]> : !layout.tensor<2x4xf32>
// CHECK-NEXT:  %p1_combined = graph.matmul %x, %p1_combined_weight : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x4xf32>) -> !layout.tensor<1x3x4xf32>
// CHECK-NEXT:  %p1_combined_bias = graph.constant dense<[0.5, 1.5, 2.5, 3.5]> : !layout.tensor<4xf32>
// CHECK-NEXT:  %q_combined = graph.add %p1_combined, %p1_combined_bias : (!layout.tensor<1x3x4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<1x3x4xf32>
// CHECK:       %q, %k, %v = graph.split %q_combined, %{{.*}} {axis = -1}
// CHECK-NEXT:  func.return %q, %k, %v

// -----
// combined-projection-scale: q's piece scaled by 2 after the Split: its columns of the
// weight and of the bias are doubled, the Mul goes.
func.func @scaled_piece(%x: !layout.tensor<1x3x2xf32>) -> (!layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>) {
  %w = graph.constant dense<[[1.0, 3.0, 7.0], [2.0, 5.0, 8.0]]> : !layout.tensor<2x3xf32>
  %b = graph.constant dense<[0.5, 1.5, 3.5]> : !layout.tensor<3xf32>
  %sizes = graph.constant dense<1> : !layout.tensor<3xi64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %p = graph.matmul %x, %w : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<1x3x3xf32>
  %s = graph.add %p, %b : (!layout.tensor<1x3x3xf32>, !layout.tensor<3xf32>) -> !layout.tensor<1x3x3xf32>
  %q, %k, %v = graph.split %s, %sizes {axis = -1} : (!layout.tensor<1x3x3xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>)
  %q2 = graph.mul %q, %two : (!layout.tensor<1x3x1xf32>, !layout.tensor<f32>) -> !layout.tensor<1x3x1xf32>
  func.return %q2, %k, %v : !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>
}
// CHECK-LABEL: func.func @scaled_piece
// CHECK:       %w = graph.constant dense<{{\[}}[2.0, 3.0, 7.0], [4.0, 5.0, 8.0]]> : !layout.tensor<2x3xf32>
// CHECK-NEXT:  %p = graph.matmul %x, %w
// CHECK-NEXT:  %{{.*}} = graph.constant dense<[1.0, 1.5, 3.5]> : !layout.tensor<3xf32>
// CHECK-NEXT:  %s = graph.add %p, %{{.*}}
// CHECK-NEXT:  %q2, %k, %v = graph.split %s, %sizes {axis = -1}
// CHECK-NEXT:  func.return %q2, %k, %v

// -----
// ... but not when one bias varies over the rows ([3, 1]: no row vector).
func.func @row_varying(%x: !layout.tensor<1x3x2xf32>) -> (!layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>) {
  %w1 = graph.constant dense<[[1.0], [2.0]]> : !layout.tensor<2x1xf32>
  %w2 = graph.constant dense<[[3.0], [4.0]]> : !layout.tensor<2x1xf32>
  %w3 = graph.constant dense<[[7.0], [8.0]]> : !layout.tensor<2x1xf32>
  %b1 = graph.constant dense<[0.5]> : !layout.tensor<1xf32>
  %b2 = graph.constant dense<[[1.5], [2.5], [3.5]]> : !layout.tensor<3x1xf32>
  %p1 = graph.matmul %x, %w1 : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<1x3x1xf32>
  %q = graph.add %p1, %b1 : (!layout.tensor<1x3x1xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x3x1xf32>
  %p2 = graph.matmul %x, %w2 : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<1x3x1xf32>
  %k = graph.add %p2, %b2 : (!layout.tensor<1x3x1xf32>, !layout.tensor<3x1xf32>) -> !layout.tensor<1x3x1xf32>
  %p3 = graph.matmul %x, %w3 : (!layout.tensor<1x3x2xf32>, !layout.tensor<2x1xf32>) -> !layout.tensor<1x3x1xf32>
  %v = graph.add %p3, %b1 : (!layout.tensor<1x3x1xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x3x1xf32>
  func.return %q, %k, %v : !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>, !layout.tensor<1x3x1xf32>
}
// CHECK-LABEL: func.func @row_varying
// CHECK-COUNT-3: graph.matmul
// CHECK-NOT:   graph.split

// -----
// concat-of-casts and slice-before-cast.
func.func @casts(%x: !layout.tensor<2x3xf32>, %y: !layout.tensor<2x3xf32>) -> (!layout.tensor<4x3xf64>, !layout.tensor<2x1xf64>) {
  %cx = graph.cast %x {to = 11} : (!layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf64>
  %cy = graph.cast %y {to = 11} : (!layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf64>
  %cat = graph.concat %cx, %cy {axis = 0} : (!layout.tensor<2x3xf64>, !layout.tensor<2x3xf64>) -> !layout.tensor<4x3xf64>
  %c2 = graph.cast %y {to = 11} : (!layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf64>
  %s = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %sl = graph.slice %c2, %s, %e, %s : (!layout.tensor<2x3xf64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf64>
  func.return %cat, %sl : !layout.tensor<4x3xf64>, !layout.tensor<2x1xf64>
}
// CHECK-LABEL: func.func @casts
// CHECK:       %cat_moved = graph.concat %x, %y {axis = 0}
// CHECK-NEXT:  %cat = graph.cast %cat_moved {to = 11}
// CHECK:       %sl_moved = graph.slice %y, %s, %e, %s
// CHECK-NEXT:  %sl = graph.cast %sl_moved {to = 11}

// -----
// A cast with a second user stays where it is.
func.func @shared(%x: !layout.tensor<2x3xf32>) -> (!layout.tensor<2x1xf64>, !layout.tensor<2x3xf64>) {
  %c = graph.cast %x {to = 11} : (!layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf64>
  %s = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %sl = graph.slice %c, %s, %e, %s : (!layout.tensor<2x3xf64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf64>
  func.return %sl, %c : !layout.tensor<2x1xf64>, !layout.tensor<2x3xf64>
}
// CHECK-LABEL: func.func @shared
// CHECK:       %c = graph.cast %x
// CHECK:       %sl = graph.slice %c

// -----
// concat-of-transposes and slice-before-transpose.
func.func @transposes(%x: !layout.tensor<2x3xf32>, %y: !layout.tensor<2x3xf32>) -> (!layout.tensor<6x2xf32>, !layout.tensor<1x2xf32>) {
  %tx = graph.transpose %x {perm = [1, 0]} : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  %ty = graph.transpose %y {perm = [1, 0]} : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  %cat = graph.concat %tx, %ty {axis = 0} : (!layout.tensor<3x2xf32>, !layout.tensor<3x2xf32>) -> !layout.tensor<6x2xf32>
  %t2 = graph.transpose %y {perm = [1, 0]} : (!layout.tensor<2x3xf32>) -> !layout.tensor<3x2xf32>
  %s = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %a = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %sl = graph.slice %t2, %s, %e, %a : (!layout.tensor<3x2xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x2xf32>
  func.return %cat, %sl : !layout.tensor<6x2xf32>, !layout.tensor<1x2xf32>
}
// CHECK-LABEL: func.func @transposes
// CHECK:       %cat_moved = graph.concat %x, %y {axis = 1}
// CHECK-NEXT:  %cat = graph.transpose %cat_moved {perm = [1, 0]}
// CHECK:       %sl_axes = graph.constant dense<[1]>
// CHECK-NEXT:  %sl_moved = graph.slice %y, %s, %e, %sl_axes :
// CHECK-NEXT:  %sl = graph.transpose %sl_moved {perm = [1, 0]}

// -----
// Different permutations are not one transpose.
func.func @mixed_perms(%x: !layout.tensor<2x2x3xf32>, %y: !layout.tensor<2x2x3xf32>) -> !layout.tensor<4x2x3xf32> {
  %tx = graph.transpose %x {perm = [1, 0, 2]} : (!layout.tensor<2x2x3xf32>) -> !layout.tensor<2x2x3xf32>
  %ty = graph.transpose %y {perm = [0, 1, 2]} : (!layout.tensor<2x2x3xf32>) -> !layout.tensor<2x2x3xf32>
  %cat = graph.concat %tx, %ty {axis = 0} : (!layout.tensor<2x2x3xf32>, !layout.tensor<2x2x3xf32>) -> !layout.tensor<4x2x3xf32>
  func.return %cat : !layout.tensor<4x2x3xf32>
}
// CHECK-LABEL: func.func @mixed_perms
// CHECK:       %cat = graph.concat %tx, %ty

// -----
// reshape-across-matmul: flatten for a 2-D MatMul and restore -> one batched MatMul.
func.func @linear(%x: !layout.tensor<2x16x4xf32>) -> !layout.tensor<2x16x5xf32> {
  %w = graph.constant dense<1.0> : !layout.tensor<4x5xf32>
  %s1 = graph.constant dense<[32, 4]> : !layout.tensor<2xi64>
  %s2 = graph.constant dense<[2, 16, 5]> : !layout.tensor<3xi64>
  %f = graph.reshape %x, %s1 : (!layout.tensor<2x16x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<32x4xf32>
  %m = graph.matmul %f, %w : (!layout.tensor<32x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<32x5xf32>
  %y = graph.reshape %m, %s2 : (!layout.tensor<32x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x16x5xf32>
  func.return %y : !layout.tensor<2x16x5xf32>
}
// CHECK-LABEL: func.func @linear
// CHECK:       %y = graph.matmul %x, %w : (!layout.tensor<2x16x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<2x16x5xf32>
// CHECK-NEXT:  func.return %y

// -----
// Slices of 3 rows, fewer than a cube fractal's 16: batched, each would be padded to 16
// rows (2 x 16 against the flat form's 16): kept flat.
func.func @few_rows(%x: !layout.tensor<2x3x4xf32>) -> !layout.tensor<2x3x5xf32> {
  %w = graph.constant dense<1.0> : !layout.tensor<4x5xf32>
  %s1 = graph.constant dense<[6, 4]> : !layout.tensor<2xi64>
  %s2 = graph.constant dense<[2, 3, 5]> : !layout.tensor<3xi64>
  %f = graph.reshape %x, %s1 : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
  %m = graph.matmul %f, %w : (!layout.tensor<6x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<6x5xf32>
  %y = graph.reshape %m, %s2 : (!layout.tensor<6x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x3x5xf32>
  func.return %y : !layout.tensor<2x3x5xf32>
}
// CHECK-LABEL: func.func @few_rows
// CHECK:       %f = graph.reshape %x, %s1
// CHECK-NEXT:  %m = graph.matmul %f, %w
// CHECK-NEXT:  %y = graph.reshape %m, %s2

// -----
// A reshape that regroups the rows differently ([3, 2, 5]) is not the inverse: kept.
func.func @regroup(%x: !layout.tensor<2x3x4xf32>) -> !layout.tensor<3x2x5xf32> {
  %w = graph.constant dense<1.0> : !layout.tensor<4x5xf32>
  %s1 = graph.constant dense<[6, 4]> : !layout.tensor<2xi64>
  %s2 = graph.constant dense<[3, 2, 5]> : !layout.tensor<3xi64>
  %f = graph.reshape %x, %s1 : (!layout.tensor<2x3x4xf32>, !layout.tensor<2xi64>) -> !layout.tensor<6x4xf32>
  %m = graph.matmul %f, %w : (!layout.tensor<6x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<6x5xf32>
  %y = graph.reshape %m, %s2 : (!layout.tensor<6x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<3x2x5xf32>
  func.return %y : !layout.tensor<3x2x5xf32>
}
// CHECK-LABEL: func.func @regroup
// CHECK:       %m = graph.matmul %f, %w
