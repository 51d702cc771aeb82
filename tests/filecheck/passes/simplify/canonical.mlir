// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=commutative-order}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=reassociate-constants,distribute-constant,factor-common-operand,broadcast-minimize fast-math=true}' --split-input-file | filecheck %s --check-prefix=FAST
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=reassociate-constants,distribute-constant,factor-common-operand,broadcast-minimize}' --split-input-file | filecheck %s --check-prefix=EXACT

// commutative-order: constants go right, block arguments by index, op results by position;
// b + a and a + b then look the same to CSE. Ordered ops are left alone.
func.func @order(%a: !layout.tensor<3xf32>, %b: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xi1>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %c = graph.constant dense<2.0> : !layout.tensor<3xf32>
  %x = graph.mul %c, %a : !layout.tensor<3xf32>
  %y = graph.add %b, %a : !layout.tensor<3xf32>
  %e = graph.equal %x, %a : (!layout.tensor<3xf32>, !layout.tensor<3xf32>) -> !layout.tensor<3xi1>
  %s = graph.sum %y, %x : !layout.tensor<3xf32>
  %ok = graph.add %a, %b : !layout.tensor<3xf32>
  func.return %x, %y, %e, %s, %ok : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xi1>, !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @order
// CHECK:       %x = graph.mul %a, %c
// CHECK-NEXT:  %y = graph.add %a, %b
// CHECK-NEXT:  %e = graph.equal %a, %x
// CHECK-NEXT:  %s = graph.sum %x, %y
// CHECK-NEXT:  %ok = graph.add %a, %b

// -----
// commutative-order must not reorder: float max/min (signed-zero ties), a float sum of three
// inputs (rounding order), or a swap that changes the result type (the NCHW lhs decides).
func.func @order_no(%a: !layout.tensor<1x3x1x1xf32, NCHW>, %b: !layout.tensor<1x3x1x1xf32>, %i: !layout.tensor<3xi32>, %j: !layout.tensor<3xi32>) -> (!layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32>, !layout.tensor<3xi32>) {
  %mx = graph.max %b, %b, %b : !layout.tensor<1x3x1x1xf32>
  %m = graph.max %mx, %b : !layout.tensor<1x3x1x1xf32>
  %s = graph.sum %m, %b, %b : !layout.tensor<1x3x1x1xf32>
  %t = graph.add %b, %a : (!layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32, NCHW>) -> !layout.tensor<1x3x1x1xf32>
  %k = graph.min %j, %i : !layout.tensor<3xi32>
  func.return %mx, %m, %s, %t, %k : !layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32>, !layout.tensor<1x3x1x1xf32>, !layout.tensor<3xi32>
}
// CHECK-LABEL: func.func @order_no
// CHECK:       %m = graph.max %mx, %b
// CHECK-NEXT:  %s = graph.sum %m, %b, %b
// CHECK-NEXT:  %t = graph.add %b, %a
// CHECK-NEXT:  %k = graph.min %i, %j

// -----
// reassociate-constants (fast-math): (x + 1) + 2 is x + 3; (x * 2) * 3 is x * 6; not when
// the inner op has another user.
func.func @reassociate(%x: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %three = graph.constant dense<[3.0, 4.0, 5.0]> : !layout.tensor<3xf32>
  %a = graph.add %x, %one : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %b = graph.add %two, %a : (!layout.tensor<f32>, !layout.tensor<3xf32>) -> !layout.tensor<3xf32>
  %c = graph.mul %x, %two : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %d = graph.mul %c, %three : !layout.tensor<3xf32>
  %e = graph.add %x, %one : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %f = graph.add %e, %two : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  func.return %b, %d, %e, %f : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// FAST-LABEL:  func.func @reassociate
// FAST:        %b_k0 = graph.constant dense<3.0> : !layout.tensor<f32>
// FAST-NEXT:   %b = graph.add %x, %b_k0
// FAST:        %d_k0 = graph.constant dense<[6.0, 8.0, 10.0]> : !layout.tensor<3xf32>
// FAST-NEXT:   %d = graph.mul %x, %d_k0
// FAST:        %f = graph.add %e, %two
// EXACT-LABEL: func.func @reassociate
// EXACT:       %b = graph.add %two, %a

// -----
// distribute-constant (fast-math): (x + c1) * c2 is x * c2 + c1 * c2.
func.func @distribute(%x: !layout.tensor<1x2x3x3xf32, NCHW>) -> !layout.tensor<1x2x3x3xf32, NCHW> {
  %c1 = graph.constant dense<[[[1.0]], [[2.0]]]> : !layout.tensor<2x1x1xf32>
  %c2 = graph.constant dense<[[[0.5]], [[4.0]]]> : !layout.tensor<2x1x1xf32>
  %a = graph.add %x, %c1 : (!layout.tensor<1x2x3x3xf32, NCHW>, !layout.tensor<2x1x1xf32>) -> !layout.tensor<1x2x3x3xf32, NCHW>
  %m = graph.mul %a, %c2 : (!layout.tensor<1x2x3x3xf32, NCHW>, !layout.tensor<2x1x1xf32>) -> !layout.tensor<1x2x3x3xf32, NCHW>
  func.return %m : !layout.tensor<1x2x3x3xf32, NCHW>
}
// FAST-LABEL:  func.func @distribute
// FAST:        %m_k0 = graph.mul %x, %c2
// FAST-NEXT:   %m_k1 = graph.constant dense<{{\[\[\[}}0.5]], {{\[\[}}8.0]]]> : !layout.tensor<2x1x1xf32>
// FAST-NEXT:   %m = graph.add %m_k0, %m_k1
// FAST-NOT:    graph.mul
// EXACT-LABEL: func.func @distribute
// EXACT:       %m = graph.mul %a, %c2

// -----
// factor-common-operand (fast-math): a * b + c * a is a * (b + c); constants fold.
func.func @factor(%a: !layout.tensor<3xf32>, %b: !layout.tensor<3xf32>, %c: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %ab = graph.mul %a, %b : !layout.tensor<3xf32>
  %ca = graph.mul %c, %a : !layout.tensor<3xf32>
  %y = graph.add %ab, %ca : !layout.tensor<3xf32>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %three = graph.constant dense<3.0> : !layout.tensor<f32>
  %a2 = graph.mul %a, %two : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %a3 = graph.mul %three, %a : (!layout.tensor<f32>, !layout.tensor<3xf32>) -> !layout.tensor<3xf32>
  %z = graph.add %a2, %a3 : !layout.tensor<3xf32>
  func.return %y, %z : !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// FAST-LABEL:  func.func @factor
// FAST:        %y_k0 = graph.add %b, %c
// FAST-NEXT:   %y = graph.mul %a, %y_k0
// FAST:        %z_k0 = graph.constant dense<5.0> : !layout.tensor<f32>
// FAST-NEXT:   %z = graph.mul %a, %z_k0
// EXACT-LABEL: func.func @factor
// EXACT:       %y = graph.add %ab, %ca

// -----
// factor-common-operand must not fire when a product has another user.
func.func @factor_no(%a: !layout.tensor<3xf32>, %b: !layout.tensor<3xf32>, %c: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %ab = graph.mul %a, %b : !layout.tensor<3xf32>
  %ac = graph.mul %a, %c : !layout.tensor<3xf32>
  %y = graph.add %ab, %ac : !layout.tensor<3xf32>
  func.return %y, %ab : !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// FAST-LABEL:  func.func @factor_no
// FAST:        %y = graph.add %ab, %ac

// -----
// broadcast-minimize (fast-math): (A + b) + c with small b, c is A + (b + c); not when c
// is as big as A.
func.func @bcast(%A: !layout.tensor<2x3x4xf32>, %b: !layout.tensor<3x1xf32>, %c: !layout.tensor<4xf32>, %d: !layout.tensor<2x3x4xf32>) -> (!layout.tensor<2x3x4xf32>, !layout.tensor<2x3x4xf32>) {
  %t = graph.add %A, %b : (!layout.tensor<2x3x4xf32>, !layout.tensor<3x1xf32>) -> !layout.tensor<2x3x4xf32>
  %y = graph.add %t, %c : (!layout.tensor<2x3x4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<2x3x4xf32>
  %u = graph.mul %A, %b : (!layout.tensor<2x3x4xf32>, !layout.tensor<3x1xf32>) -> !layout.tensor<2x3x4xf32>
  %z = graph.mul %u, %d : !layout.tensor<2x3x4xf32>
  func.return %y, %z : !layout.tensor<2x3x4xf32>, !layout.tensor<2x3x4xf32>
}
// FAST-LABEL:  func.func @bcast
// FAST:        %y_k0 = graph.add %b, %c : (!layout.tensor<3x1xf32>, !layout.tensor<4xf32>) -> !layout.tensor<3x4xf32>
// FAST-NEXT:   %y = graph.add %A, %y_k0 : (!layout.tensor<2x3x4xf32>, !layout.tensor<3x4xf32>) -> !layout.tensor<2x3x4xf32>
// FAST:        %z = graph.mul %u, %d
// EXACT-LABEL: func.func @bcast
// EXACT:       %y = graph.add %t, %c

// -----
// distribute-constant must not fire when the add has another user or x + c1 has no constant.
func.func @distribute_no(%x: !layout.tensor<3xf32>, %y: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %c = graph.constant dense<2.0> : !layout.tensor<f32>
  %a = graph.add %x, %c : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %m = graph.mul %a, %c : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %b = graph.add %x, %y : !layout.tensor<3xf32>
  %n = graph.mul %b, %c : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  func.return %m, %a, %n : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// FAST-LABEL:  func.func @distribute_no
// FAST:        %m = graph.mul %a, %c
// FAST:        %n = graph.mul %b, %c
