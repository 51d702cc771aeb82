// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=add-zero,sub-zero,mul-one,div-one,add-self,mul-neg-one,pow-one,neg-neg}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=add-pos-zero,mul-zero,sub-self,div-self,pow-two,reciprocal-reciprocal,reciprocal-mul fast-math=true}' --split-input-file | filecheck %s --check-prefix=FAST
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=add-pos-zero,mul-zero,sub-self,div-self,pow-two,reciprocal-reciprocal,reciprocal-mul}' --split-input-file | filecheck %s --check-prefix=EXACT

// add-zero: x + -0.0 and -0.0 + x are x; integer 0 too.
func.func @add_zero(%x: !layout.tensor<2x3xf32>, %i: !layout.tensor<4xi32>) -> (!layout.tensor<2x3xf32>, !layout.tensor<2x3xf32>, !layout.tensor<4xi32>) {
  %z = graph.constant dense<-0.0> : !layout.tensor<f32>
  %zi = graph.constant dense<0> : !layout.tensor<4xi32>
  %a = graph.add %x, %z : (!layout.tensor<2x3xf32>, !layout.tensor<f32>) -> !layout.tensor<2x3xf32>
  %b = graph.add %z, %x : (!layout.tensor<f32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
  %c = graph.add %i, %zi : !layout.tensor<4xi32>
  func.return %a, %b, %c : !layout.tensor<2x3xf32>, !layout.tensor<2x3xf32>, !layout.tensor<4xi32>
}
// CHECK-LABEL: func.func @add_zero
// CHECK-NOT:   graph.add
// CHECK:       func.return %x, %x, %i

// -----
// add-zero must not fire: +0.0 (not exact for x = -0.0), a zero that broadcasts x, a
// non-splat constant.
func.func @add_zero_no(%x: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<2x3xf32>, !layout.tensor<3xf32>) {
  %p = graph.constant dense<0.0> : !layout.tensor<f32>
  %big = graph.constant dense<-0.0> : !layout.tensor<2x3xf32>
  %mixed = graph.constant dense<[-0.0, 0.0, -0.0]> : !layout.tensor<3xf32>
  %a = graph.add %x, %p : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %b = graph.add %x, %big : (!layout.tensor<3xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
  %c = graph.add %x, %mixed : !layout.tensor<3xf32>
  func.return %a, %b, %c : !layout.tensor<3xf32>, !layout.tensor<2x3xf32>, !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @add_zero_no
// CHECK:       %a = graph.add %x, %p
// CHECK-NEXT:  %b = graph.add %x, %big
// CHECK-NEXT:  %c = graph.add %x, %mixed
// FAST-LABEL:  func.func @add_zero_no
// FAST-NOT:    %a = graph.add
// FAST:        %b = graph.add %x, %big
// FAST-NEXT:   %c = graph.add %x, %mixed
// FAST-NEXT:   func.return %x, %b, %c
// EXACT-LABEL: func.func @add_zero_no
// EXACT:       %a = graph.add %x, %p

// -----
// sub-zero: x - +0.0 is x; x - -0.0 and 0 - x are not.
func.func @sub_zero(%x: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %p = graph.constant dense<0.0> : !layout.tensor<f32>
  %n = graph.constant dense<-0.0> : !layout.tensor<f32>
  %a = graph.sub %x, %p : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %b = graph.sub %x, %n : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %c = graph.sub %p, %x : (!layout.tensor<f32>, !layout.tensor<3xf32>) -> !layout.tensor<3xf32>
  func.return %a, %b, %c : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @sub_zero
// CHECK:       %b = graph.sub %x, %n
// CHECK-NEXT:  %c = graph.sub %p, %x
// CHECK-NEXT:  func.return %x, %b, %c

// -----
// mul-one and div-one: x * 1, 1 * x, x / 1 are x; 1 / x and a broadcasting 1 stay.
func.func @mul_div_one(%x: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<2x3xf32>) {
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %ones = graph.constant dense<1.0> : !layout.tensor<2x3xf32>
  %a = graph.mul %x, %one : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %b = graph.mul %one, %x : (!layout.tensor<f32>, !layout.tensor<3xf32>) -> !layout.tensor<3xf32>
  %c = graph.div %x, %one : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %d = graph.div %one, %x : (!layout.tensor<f32>, !layout.tensor<3xf32>) -> !layout.tensor<3xf32>
  %e = graph.mul %x, %ones : (!layout.tensor<3xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
  func.return %a, %b, %c, %d, %e : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @mul_div_one
// CHECK:       %d = graph.div %one, %x
// CHECK-NEXT:  %e = graph.mul %x, %ones
// CHECK-NEXT:  func.return %x, %x, %x, %d, %e

// -----
// mul-zero (fast-math only): x * 0 becomes zeros of the result's type.
func.func @mul_zero(%x: !layout.tensor<2x2xf32>) -> !layout.tensor<2x2xf32> {
  %z = graph.constant dense<0.0> : !layout.tensor<f32>
  %a = graph.mul %x, %z : (!layout.tensor<2x2xf32>, !layout.tensor<f32>) -> !layout.tensor<2x2xf32>
  func.return %a : !layout.tensor<2x2xf32>
}
// CHECK-LABEL: func.func @mul_zero
// CHECK:       graph.mul
// FAST-LABEL:  func.func @mul_zero
// FAST:        %a = graph.constant dense<0.0> : !layout.tensor<2x2xf32>
// FAST-NEXT:   func.return %a
// EXACT-LABEL: func.func @mul_zero
// EXACT:       graph.mul

// -----
// mul-zero does not fire for a symbolic result shape.
func.func @mul_zero_symbolic(%x: !layout.tensor<[N, 2], f32>) -> !layout.tensor<[N, 2], f32> {
  %z = graph.constant dense<0.0> : !layout.tensor<f32>
  %a = graph.mul %x, %z : (!layout.tensor<[N, 2], f32>, !layout.tensor<f32>) -> !layout.tensor<[N, 2], f32>
  func.return %a : !layout.tensor<[N, 2], f32>
}
// FAST-LABEL:  func.func @mul_zero_symbolic
// FAST:        graph.mul

// -----
// add-self: x + x becomes x * 2 (a scalar of x's element type); x + y stays.
func.func @add_self(%x: !layout.tensor<1x3x2x2xf16, NCHW>, %y: !layout.tensor<1x3x2x2xf16, NCHW>) -> (!layout.tensor<1x3x2x2xf16, NCHW>, !layout.tensor<1x3x2x2xf16, NCHW>) {
  %a = graph.add %x, %x : !layout.tensor<1x3x2x2xf16, NCHW>
  %b = graph.add %x, %y : !layout.tensor<1x3x2x2xf16, NCHW>
  func.return %a, %b : !layout.tensor<1x3x2x2xf16, NCHW>, !layout.tensor<1x3x2x2xf16, NCHW>
}
// CHECK-LABEL: func.func @add_self
// CHECK:       %a_k0 = graph.constant dense<2.0> : !layout.tensor<f16>
// CHECK-NEXT:  %a = graph.mul %x, %a_k0 : (!layout.tensor<1x3x2x2xf16, NCHW>, !layout.tensor<f16>) -> !layout.tensor<1x3x2x2xf16, NCHW>
// CHECK-NEXT:  %b = graph.add %x, %y

// -----
// sub-self and div-self (fast-math only).
func.func @self_ops(%x: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %a = graph.sub %x, %x : !layout.tensor<3xf32>
  %b = graph.div %x, %x : !layout.tensor<3xf32>
  func.return %a, %b : !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// FAST-LABEL:  func.func @self_ops
// FAST:        %a = graph.constant dense<0.0> : !layout.tensor<3xf32>
// FAST-NEXT:   %b = graph.constant dense<1.0> : !layout.tensor<3xf32>
// EXACT-LABEL: func.func @self_ops
// EXACT:       graph.sub %x, %x
// EXACT:       graph.div %x, %x

// -----
// mul-neg-one: x * -1 is neg(x); a broadcasting -1 is not rewritten.
func.func @mul_neg_one(%x: !layout.tensor<3xi32>) -> (!layout.tensor<3xi32>, !layout.tensor<2x3xi32>) {
  %m = graph.constant dense<-1> : !layout.tensor<i32>
  %mm = graph.constant dense<-1> : !layout.tensor<2x3xi32>
  %a = graph.mul %m, %x : (!layout.tensor<i32>, !layout.tensor<3xi32>) -> !layout.tensor<3xi32>
  %b = graph.mul %x, %mm : (!layout.tensor<3xi32>, !layout.tensor<2x3xi32>) -> !layout.tensor<2x3xi32>
  func.return %a, %b : !layout.tensor<3xi32>, !layout.tensor<2x3xi32>
}
// CHECK-LABEL: func.func @mul_neg_one
// CHECK:       %a = graph.neg %x : !layout.tensor<3xi32>
// CHECK-NEXT:  %b = graph.mul %x, %mm

// -----
// pow-one (exact) and pow-two (fast-math); pow(x, 3) stays.
func.func @pow(%x: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %one = graph.constant dense<1> : !layout.tensor<i64>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %three = graph.constant dense<3.0> : !layout.tensor<f32>
  %a = graph.pow %x, %one : (!layout.tensor<3xf32>, !layout.tensor<i64>) -> !layout.tensor<3xf32>
  %b = graph.pow %x, %two : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  %c = graph.pow %x, %three : (!layout.tensor<3xf32>, !layout.tensor<f32>) -> !layout.tensor<3xf32>
  func.return %a, %b, %c : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @pow
// CHECK:       %b = graph.pow %x, %two
// CHECK-NEXT:  %c = graph.pow %x, %three
// CHECK-NEXT:  func.return %x, %b, %c
// FAST-LABEL:  func.func @pow
// FAST:        %b = graph.mul %x, %x : !layout.tensor<3xf32>
// FAST-NEXT:   %c = graph.pow %x, %three
// EXACT-LABEL: func.func @pow
// EXACT:       %b = graph.pow %x, %two

// -----
// neg-neg: exact; reciprocal-reciprocal: fast-math, floats only.
func.func @involutions(%x: !layout.tensor<3xf32>, %i: !layout.tensor<3xi32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xi32>) {
  %n = graph.neg %x : !layout.tensor<3xf32>
  %nn = graph.neg %n : !layout.tensor<3xf32>
  %r = graph.reciprocal %x : !layout.tensor<3xf32>
  %rr = graph.reciprocal %r : !layout.tensor<3xf32>
  %ri = graph.reciprocal %i : !layout.tensor<3xi32>
  %rri = graph.reciprocal %ri : !layout.tensor<3xi32>
  func.return %nn, %rr, %rri : !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xi32>
}
// CHECK-LABEL: func.func @involutions
// CHECK-NOT:   graph.neg
// CHECK:       %rr = graph.reciprocal %r
// CHECK:       func.return %x, %rr, %rri
// FAST-LABEL:  func.func @involutions
// FAST:        %rri = graph.reciprocal %ri
// FAST-NEXT:   func.return %nn, %x, %rri
// EXACT-LABEL: func.func @involutions
// EXACT:       func.return %nn, %rr, %rri

// -----
// reciprocal-mul (fast-math): reciprocal(x) * y is y / x; the reciprocal stays for its
// other user.
func.func @reciprocal_mul(%x: !layout.tensor<3xf32>, %y: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %r = graph.reciprocal %x : !layout.tensor<3xf32>
  %a = graph.mul %y, %r : !layout.tensor<3xf32>
  func.return %a, %r : !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// FAST-LABEL:  func.func @reciprocal_mul
// FAST:        %r = graph.reciprocal %x
// FAST-NEXT:   %a = graph.div %y, %x : !layout.tensor<3xf32>
// EXACT-LABEL: func.func @reciprocal_mul
// EXACT:       %a = graph.mul %y, %r

// -----
// neg-neg must not fire through another op: neg(abs(neg(x))) stays as is.
func.func @neg_neg_no(%x: !layout.tensor<3xf32>) -> !layout.tensor<3xf32> {
  %n = graph.neg %x : !layout.tensor<3xf32>
  %a = graph.abs %n : !layout.tensor<3xf32>
  %m = graph.neg %a : !layout.tensor<3xf32>
  func.return %m : !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @neg_neg_no
// CHECK-NEXT:  %n = graph.neg %x
// CHECK-NEXT:  %a = graph.abs %n
// CHECK-NEXT:  %m = graph.neg %a
