// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=identity,dropout-inference,cast-to-same-type,cast-chain,noop-slice,noop-tile,noop-expand,noop-split,noop-concat,empty-concat-operand,noop-flatten},dce' --split-input-file | filecheck %s

// identity: graph.identity x is x, also in a format-carrying origin view.
func.func @identity(%x: !layout.tensor<1x3x4x4xf32, NCHW>) -> !layout.tensor<1x3x4x4xf32, NCHW> {
  %a = graph.identity %x : !layout.tensor<1x3x4x4xf32, NCHW>
  %b = graph.relu %a : !layout.tensor<1x3x4x4xf32, NCHW>
  func.return %b : !layout.tensor<1x3x4x4xf32, NCHW>
}
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:  %b = graph.relu %x : !layout.tensor<1x3x4x4xf32, NCHW>
// CHECK-NEXT:  func.return %b

// -----
// identity must not fire on a storage view (the rules work on origin views only).
func.func @identity_no(%x: !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0>) -> !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0> {
  %a = graph.identity %x : !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0>
  func.return %a : !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0>
}
// CHECK-LABEL: func.func @identity_no
// CHECK-NEXT:  %a = graph.identity %x
// CHECK-NEXT:  func.return %a

// -----
// dropout-inference: no training_mode, or a constant false one (with a ratio).
func.func @dropout(%x: !layout.tensor<2x3xf32>) -> (!layout.tensor<2x3xf32>, !layout.tensor<2x3xf32>) {
  %ratio = graph.constant dense<0.5> : !layout.tensor<f32>
  %off = graph.constant dense<false> : !layout.tensor<i1>
  %a = graph.dropout %x : !layout.tensor<2x3xf32>
  %b = graph.dropout %x, %ratio, %off : (!layout.tensor<2x3xf32>, !layout.tensor<f32>, !layout.tensor<i1>) -> !layout.tensor<2x3xf32>
  func.return %a, %b : !layout.tensor<2x3xf32>, !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @dropout
// CHECK-NOT:   graph.dropout
// CHECK:       func.return %x, %x

// -----
// dropout-inference must not fire when training_mode is not a constant.
func.func @dropout_no(%x: !layout.tensor<2x3xf32>, %t: !layout.tensor<i1>) -> !layout.tensor<2x3xf32> {
  %a = graph.dropout %x, none, %t : (!layout.tensor<2x3xf32>, !layout.tensor<i1>) -> !layout.tensor<2x3xf32>
  func.return %a : !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @dropout_no
// CHECK-NEXT:  %a = graph.dropout %x, none, %t
// CHECK-NEXT:  func.return %a

// -----
// cast-to-same-type: f32 -> f32 (to = 1) is x.
func.func @cast_same(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %a = graph.cast %x {to = 1} : !layout.tensor<2x3xf32>
  func.return %a : !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @cast_same
// CHECK-NEXT:  func.return %x

// -----
// cast-to-same-type must not fire on a real conversion.
func.func @cast_same_no(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf16> {
  %a = graph.cast %x {to = 10} : (!layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf16>
  func.return %a : !layout.tensor<2x3xf16>
}
// CHECK-LABEL: func.func @cast_same_no
// CHECK-NEXT:  %a = graph.cast %x {to = 10}
// CHECK-NEXT:  func.return %a

// -----
// cast-chain: f16 -> f32 -> f64 is f16 -> f64; int8 -> int32 -> f32 is int8 -> f32;
// f32 -> f64 -> f32 is x; bool -> int8 -> f32 is bool -> f32.
func.func @cast_chain(%h: !layout.tensor<4xf16>, %i: !layout.tensor<4xi8>, %f: !layout.tensor<4xf32>, %b: !layout.tensor<4xi1>) -> (!layout.tensor<4xf64>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %h1 = graph.cast %h {to = 1} : (!layout.tensor<4xf16>) -> !layout.tensor<4xf32>
  %h2 = graph.cast %h1 {to = 11} : (!layout.tensor<4xf32>) -> !layout.tensor<4xf64>
  %i1 = graph.cast %i {to = 6} : (!layout.tensor<4xi8>) -> !layout.tensor<4xi32>
  %i2 = graph.cast %i1 {to = 1} : (!layout.tensor<4xi32>) -> !layout.tensor<4xf32>
  %f1 = graph.cast %f {to = 11} : (!layout.tensor<4xf32>) -> !layout.tensor<4xf64>
  %f2 = graph.cast %f1 {to = 1} : (!layout.tensor<4xf64>) -> !layout.tensor<4xf32>
  %b1 = graph.cast %b {to = 3} : (!layout.tensor<4xi1>) -> !layout.tensor<4xi8>
  %b2 = graph.cast %b1 {to = 1} : (!layout.tensor<4xi8>) -> !layout.tensor<4xf32>
  func.return %h2, %i2, %f2, %b2 : !layout.tensor<4xf64>, !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @cast_chain
// CHECK-NEXT:  %h2 = graph.cast %h {to = 11} : (!layout.tensor<4xf16>) -> !layout.tensor<4xf64>
// CHECK-NEXT:  %i2 = graph.cast %i {to = 1} : (!layout.tensor<4xi8>) -> !layout.tensor<4xf32>
// CHECK-NEXT:  %b2 = graph.cast %b {to = 1} : (!layout.tensor<4xi1>) -> !layout.tensor<4xf32>
// CHECK-NEXT:  func.return %h2, %i2, %f, %b2

// -----
// cast-chain must not fire after a narrowing first cast: f32 -> f16 -> f32 rounds,
// int32 -> int8 -> int32 wraps, f32 -> int32 -> f32 truncates, int64 -> f64 -> int64 rounds
// above 2**53, int32 -> f16 -> f32 rounds above 2048.
func.func @cast_chain_no(%f: !layout.tensor<4xf32>, %i: !layout.tensor<4xi32>, %l: !layout.tensor<4xi64>) -> (!layout.tensor<4xf32>, !layout.tensor<4xi32>, !layout.tensor<4xf32>, !layout.tensor<4xi64>, !layout.tensor<4xf32>) {
  %a1 = graph.cast %f {to = 10} : (!layout.tensor<4xf32>) -> !layout.tensor<4xf16>
  %a2 = graph.cast %a1 {to = 1} : (!layout.tensor<4xf16>) -> !layout.tensor<4xf32>
  %b1 = graph.cast %i {to = 3} : (!layout.tensor<4xi32>) -> !layout.tensor<4xi8>
  %b2 = graph.cast %b1 {to = 6} : (!layout.tensor<4xi8>) -> !layout.tensor<4xi32>
  %c1 = graph.cast %f {to = 6} : (!layout.tensor<4xf32>) -> !layout.tensor<4xi32>
  %c2 = graph.cast %c1 {to = 1} : (!layout.tensor<4xi32>) -> !layout.tensor<4xf32>
  %d1 = graph.cast %l {to = 11} : (!layout.tensor<4xi64>) -> !layout.tensor<4xf64>
  %d2 = graph.cast %d1 {to = 7} : (!layout.tensor<4xf64>) -> !layout.tensor<4xi64>
  %e1 = graph.cast %i {to = 10} : (!layout.tensor<4xi32>) -> !layout.tensor<4xf16>
  %e2 = graph.cast %e1 {to = 1} : (!layout.tensor<4xf16>) -> !layout.tensor<4xf32>
  func.return %a2, %b2, %c2, %d2, %e2 : !layout.tensor<4xf32>, !layout.tensor<4xi32>, !layout.tensor<4xf32>, !layout.tensor<4xi64>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @cast_chain_no
// CHECK-NEXT:  %a1 = graph.cast %f {to = 10}
// CHECK-NEXT:  %a2 = graph.cast %a1 {to = 1}
// CHECK-NEXT:  %b1 = graph.cast %i {to = 3}
// CHECK-NEXT:  %b2 = graph.cast %b1 {to = 6}
// CHECK-NEXT:  %c1 = graph.cast %f {to = 6}
// CHECK-NEXT:  %c2 = graph.cast %c1 {to = 1}
// CHECK-NEXT:  %d1 = graph.cast %l {to = 11}
// CHECK-NEXT:  %d2 = graph.cast %d1 {to = 7}
// CHECK-NEXT:  %e1 = graph.cast %i {to = 10}
// CHECK-NEXT:  %e2 = graph.cast %e1 {to = 1}

// -----
// noop-slice / noop-tile / noop-expand / noop-split / noop-concat / noop-flatten: each
// moves nothing. The slice covers axis 1 with a clamped end and axis 0 with a symbolic
// dim from 0 to INT64_MAX.
func.func @noops(%x: !layout.tensor<[s0, 4], f32>, %y: !layout.tensor<3x1xf32>) -> (!layout.tensor<[s0, 4], f32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>) {
  %st = graph.constant dense<[0, -10]> : !layout.tensor<2xi64>
  %en = graph.constant dense<[9223372036854775807, 100]> : !layout.tensor<2xi64>
  %a = graph.slice %x, %st, %en : (!layout.tensor<[s0, 4], f32>, !layout.tensor<2xi64>, !layout.tensor<2xi64>) -> !layout.tensor<[s0, 4], f32>
  %ones = graph.constant dense<[1, 1]> : !layout.tensor<2xi64>
  %b = graph.tile %y, %ones : (!layout.tensor<3x1xf32>, !layout.tensor<2xi64>) -> !layout.tensor<3x1xf32>
  %sh = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %c = graph.expand %y, %sh : (!layout.tensor<3x1xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x1xf32>
  %d = graph.split %y {axis = 0, num_outputs = 1} : (!layout.tensor<3x1xf32>) -> !layout.tensor<3x1xf32>
  %e = graph.concat %y {axis = 1} : !layout.tensor<3x1xf32>
  %f = graph.flatten %y : !layout.tensor<3x1xf32>
  func.return %a, %b, %c, %d, %e, %f : !layout.tensor<[s0, 4], f32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>
}
// CHECK-LABEL: func.func @noops
// CHECK-NEXT:  func.return %x, %y, %y, %y, %y, %y

// -----
// The noop rules must not fire: a slice from 1, a slice of an UNKNOWN dim to 5 (the
// result type is the same, the op is not the identity), a negative step, tile by 2, an
// expand that broadcasts, an expand of an UNKNOWN dim, two split pieces, two concat
// operands, a flatten that changes the shape.
func.func @noops_no(%x: !layout.tensor<?x4xf32>, %y: !layout.tensor<3x1xf32>, %s: !layout.tensor<2xi64>) -> (!layout.tensor<?x4xf32>, !layout.tensor<?x4xf32>, !layout.tensor<?x4xf32>, !layout.tensor<3x2xf32>, !layout.tensor<3x5xf32>, !layout.tensor<?x?xf32>, !layout.tensor<1x1xf32>, !layout.tensor<6x1xf32>, !layout.tensor<1x3xf32>) {
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %big = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %five = graph.constant dense<[5]> : !layout.tensor<1xi64>
  %m1 = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %a = graph.slice %x, %one, %big : (!layout.tensor<?x4xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x4xf32>
  %b = graph.slice %x, %zero, %five : (!layout.tensor<?x4xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x4xf32>
  %c = graph.slice %x, %m1, %big, %zero, %m1 : (!layout.tensor<?x4xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x4xf32>
  %r = graph.constant dense<[1, 2]> : !layout.tensor<2xi64>
  %d = graph.tile %y, %r : (!layout.tensor<3x1xf32>, !layout.tensor<2xi64>) -> !layout.tensor<3x2xf32>
  %sh = graph.constant dense<[3, 5]> : !layout.tensor<2xi64>
  %e = graph.expand %y, %sh : (!layout.tensor<3x1xf32>, !layout.tensor<2xi64>) -> !layout.tensor<3x5xf32>
  %u = graph.reshape %y, %s : (!layout.tensor<3x1xf32>, !layout.tensor<2xi64>) -> !layout.tensor<?x?xf32>
  %f = graph.expand %u, %s : (!layout.tensor<?x?xf32>, !layout.tensor<2xi64>) -> !layout.tensor<?x?xf32>
  %g:2 = graph.split %y {axis = 1, num_outputs = 2} : (!layout.tensor<3x1xf32>) -> (!layout.tensor<3x1xf32>, !layout.tensor<3x0xf32>)
  %h = graph.concat %y, %y {axis = 0} : (!layout.tensor<3x1xf32>, !layout.tensor<3x1xf32>) -> !layout.tensor<6x1xf32>
  %i = graph.flatten %y {axis = 0} : (!layout.tensor<3x1xf32>) -> !layout.tensor<1x3xf32>
  %gg = graph.slice %g#0, %zero, %one : (!layout.tensor<3x1xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x1xf32>
  func.return %a, %b, %c, %d, %e, %f, %gg, %h, %i : !layout.tensor<?x4xf32>, !layout.tensor<?x4xf32>, !layout.tensor<?x4xf32>, !layout.tensor<3x2xf32>, !layout.tensor<3x5xf32>, !layout.tensor<?x?xf32>, !layout.tensor<1x1xf32>, !layout.tensor<6x1xf32>, !layout.tensor<1x3xf32>
}
// CHECK-LABEL: func.func @noops_no
// CHECK:       %a = graph.slice
// CHECK-NEXT:  %b = graph.slice
// CHECK-NEXT:  %c = graph.slice
// CHECK:       %d = graph.tile
// CHECK:       %e = graph.expand
// CHECK:       %f = graph.expand
// CHECK-NEXT:  %g, %{{.*}} = graph.split
// CHECK-NEXT:  %h = graph.concat
// CHECK-NEXT:  %i = graph.flatten

// -----
// empty-concat-operand: a decoder's first step concatenates its empty KV cache (past
// length 0) with the step's keys; the empty operand goes, a concat of two left stays, and
// a concat whose operands are all empty is left alone.
func.func @empty_cache(%past: !layout.tensor<2x4x0x16xf32>, %k: !layout.tensor<2x4x7x16xf32>, %v: !layout.tensor<2x4x3x16xf32>, %e: !layout.tensor<2x0xf32>) -> (!layout.tensor<2x4x7x16xf32>, !layout.tensor<2x4x10x16xf32>, !layout.tensor<2x0xf32>) {
  %a = graph.concat %past, %k {axis = 2} : (!layout.tensor<2x4x0x16xf32>, !layout.tensor<2x4x7x16xf32>) -> !layout.tensor<2x4x7x16xf32>
  %b = graph.concat %k, %past, %v {axis = -2} : (!layout.tensor<2x4x7x16xf32>, !layout.tensor<2x4x0x16xf32>, !layout.tensor<2x4x3x16xf32>) -> !layout.tensor<2x4x10x16xf32>
  %c = graph.concat %e, %e {axis = 1} : (!layout.tensor<2x0xf32>, !layout.tensor<2x0xf32>) -> !layout.tensor<2x0xf32>
  func.return %a, %b, %c : !layout.tensor<2x4x7x16xf32>, !layout.tensor<2x4x10x16xf32>, !layout.tensor<2x0xf32>
}
// CHECK-LABEL: func.func @empty_cache
// CHECK-NEXT:  %b = graph.concat %k, %v {axis = -2}
// CHECK-NEXT:  %c = graph.concat %e, %e {axis = 1}
// CHECK-NEXT:  func.return %k, %b, %c
