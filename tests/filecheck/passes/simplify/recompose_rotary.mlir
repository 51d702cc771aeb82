// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=recompose-rotary-half,recompose-rotary-partial},dce' --split-input-file | filecheck %s

// recompose-rotary-half: Hugging Face's x * cos + rotate_half(x) * sin, the half a constant
// (a static export), is one graph.apply_rotary; the slices, Neg and Concat go.
func.func @rotary_static(%x: !layout.tensor<2x4x5x8xf32>, %cos: !layout.tensor<2x1x5x8xf32>, %sin: !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %half = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %xc = graph.mul %x, %cos : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
  %x1 = graph.slice %x, %zero, %half, %ax : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4xf32>
  %x2 = graph.slice %x, %half, %end, %ax : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4xf32>
  %n = graph.neg %x2 : !layout.tensor<2x4x5x4xf32>
  %r = graph.concat %n, %x1 {axis = -1 : i64} : (!layout.tensor<2x4x5x4xf32>, !layout.tensor<2x4x5x4xf32>) -> !layout.tensor<2x4x5x8xf32>
  %rs = graph.mul %r, %sin : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
  %y = graph.add %xc, %rs : !layout.tensor<2x4x5x8xf32>
  func.return %y : !layout.tensor<2x4x5x8xf32>
}
// CHECK-LABEL: func.func @rotary_static
// CHECK-NOT:     graph.slice
// CHECK:         %y = graph.apply_rotary %x, %cos, %sin : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<2x1x5x8xf32>, !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
// CHECK-NEXT:    func.return %y

// -----
// The dynamic export's half: unsqueeze(shape(x)[3] / 2), x's last dim unknown (the tables'
// is 8); sin * rotate_half and cos * x in the other operand orders.
func.func @rotary_dynamic(%x: !layout.tensor<?x?x?x?xf32>, %cos: !layout.tensor<?x1x?x8xf32>, %sin: !layout.tensor<?x1x?x8xf32>) -> !layout.tensor<?x?x?x8xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %three = graph.constant dense<3> : !layout.tensor<i64>
  %two = graph.constant dense<2> : !layout.tensor<i64>
  %end = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %s = graph.shape %x : (!layout.tensor<?x?x?x?xf32>) -> !layout.tensor<4xi64>
  %d = graph.gather %s, %three {axis = 0 : i64} : (!layout.tensor<4xi64>, !layout.tensor<i64>) -> !layout.tensor<i64>
  %h = graph.div %d, %two : !layout.tensor<i64>
  %half = graph.unsqueeze %h, %zero : (!layout.tensor<i64>, !layout.tensor<1xi64>) -> !layout.tensor<1xi64>
  %xc = graph.mul %cos, %x : (!layout.tensor<?x1x?x8xf32>, !layout.tensor<?x?x?x?xf32>) -> !layout.tensor<?x?x?x8xf32>
  %x2 = graph.slice %x, %half, %end, %ax : (!layout.tensor<?x?x?x?xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x?x?x?xf32>
  %n = graph.neg %x2 : !layout.tensor<?x?x?x?xf32>
  %x1 = graph.slice %x, %zero, %half, %ax : (!layout.tensor<?x?x?x?xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x?x?x?xf32>
  %r = graph.concat %n, %x1 {axis = -1 : i64} : !layout.tensor<?x?x?x?xf32>
  %rs = graph.mul %sin, %r : (!layout.tensor<?x1x?x8xf32>, !layout.tensor<?x?x?x?xf32>) -> !layout.tensor<?x?x?x8xf32>
  %y = graph.add %rs, %xc : !layout.tensor<?x?x?x8xf32>
  func.return %y : !layout.tensor<?x?x?x8xf32>
}
// CHECK-LABEL: func.func @rotary_dynamic
// CHECK-NOT:     graph.concat
// CHECK:         %y = graph.apply_rotary %x, %cos, %sin
// CHECK-NEXT:    func.return %y

// -----
// Not rotate_half: the halves swapped without the Neg (a plain rotation by d / 2): kept.
func.func @no_neg(%x: !layout.tensor<2x5x8xf32>, %cos: !layout.tensor<1x5x8xf32>, %sin: !layout.tensor<1x5x8xf32>) -> !layout.tensor<2x5x8xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %half = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %xc = graph.mul %x, %cos : (!layout.tensor<2x5x8xf32>, !layout.tensor<1x5x8xf32>) -> !layout.tensor<2x5x8xf32>
  %x1 = graph.slice %x, %zero, %half, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %x2 = graph.slice %x, %half, %end, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %r = graph.concat %x2, %x1 {axis = -1 : i64} : (!layout.tensor<2x5x4xf32>, !layout.tensor<2x5x4xf32>) -> !layout.tensor<2x5x8xf32>
  %rs = graph.mul %r, %sin : (!layout.tensor<2x5x8xf32>, !layout.tensor<1x5x8xf32>) -> !layout.tensor<2x5x8xf32>
  %y = graph.add %xc, %rs : !layout.tensor<2x5x8xf32>
  func.return %y : !layout.tensor<2x5x8xf32>
}
// CHECK-LABEL: func.func @no_neg
// CHECK-NOT:     graph.apply_rotary
// CHECK:         graph.concat %x2, %x1

// -----
// Integer tensors: the op is a float op, so the chain stays.
func.func @integers(%x: !layout.tensor<2x5x8xi32>, %cos: !layout.tensor<1x5x8xi32>, %sin: !layout.tensor<1x5x8xi32>) -> !layout.tensor<2x5x8xi32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %half = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %xc = graph.mul %x, %cos : (!layout.tensor<2x5x8xi32>, !layout.tensor<1x5x8xi32>) -> !layout.tensor<2x5x8xi32>
  %x1 = graph.slice %x, %zero, %half, %ax : (!layout.tensor<2x5x8xi32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xi32>
  %x2 = graph.slice %x, %half, %end, %ax : (!layout.tensor<2x5x8xi32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xi32>
  %n = graph.neg %x2 : !layout.tensor<2x5x4xi32>
  %r = graph.concat %n, %x1 {axis = -1 : i64} : (!layout.tensor<2x5x4xi32>, !layout.tensor<2x5x4xi32>) -> !layout.tensor<2x5x8xi32>
  %rs = graph.mul %r, %sin : (!layout.tensor<2x5x8xi32>, !layout.tensor<1x5x8xi32>) -> !layout.tensor<2x5x8xi32>
  %y = graph.add %xc, %rs : !layout.tensor<2x5x8xi32>
  func.return %y : !layout.tensor<2x5x8xi32>
}
// CHECK-LABEL: func.func @integers
// CHECK-NOT:     graph.apply_rotary
// CHECK:         graph.neg %x2

// -----
// GPT-J's rotate_every_two (the interleaved form): stack(-x[..., 1::2], x[..., ::2]) over a
// new last axis, flattened back to x's shape, is apply_rotary with interleaved = 1.
func.func @rotary_interleaved(%x: !layout.tensor<2x4x5x8xf32>, %cos: !layout.tensor<2x1x5x8xf32>, %sin: !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %shape = graph.constant dense<[2, 4, 5, 8]> : !layout.tensor<4xi64>
  %xc = graph.mul %x, %cos : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
  %even = graph.slice %x, %zero, %end, %ax, %two : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4xf32>
  %odd = graph.slice %x, %one, %end, %ax, %two : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4xf32>
  %n = graph.neg %odd : !layout.tensor<2x4x5x4xf32>
  %un = graph.unsqueeze %n, %ax : (!layout.tensor<2x4x5x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4x1xf32>
  %ue = graph.unsqueeze %even, %ax : (!layout.tensor<2x4x5x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4x1xf32>
  %st = graph.concat %un, %ue {axis = -1 : i64} : (!layout.tensor<2x4x5x4x1xf32>, !layout.tensor<2x4x5x4x1xf32>) -> !layout.tensor<2x4x5x4x2xf32>
  %r = graph.reshape %st, %shape : (!layout.tensor<2x4x5x4x2xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x4x5x8xf32>
  %rs = graph.mul %r, %sin : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<2x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
  %y = graph.add %xc, %rs : !layout.tensor<2x4x5x8xf32>
  func.return %y : !layout.tensor<2x4x5x8xf32>
}
// CHECK-LABEL: func.func @rotary_interleaved
// CHECK-NOT:     graph.slice
// CHECK:         %y = graph.apply_rotary %x, %cos, %sin {interleaved = 1}
// CHECK-NEXT:    func.return %y

// -----
// Not rotate_every_two: the pairs stacked without the Neg (a plain swap of each pair): kept.
func.func @interleaved_no_neg(%x: !layout.tensor<5x8xf32>, %cos: !layout.tensor<5x8xf32>, %sin: !layout.tensor<5x8xf32>) -> !layout.tensor<5x8xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %shape = graph.constant dense<[5, 8]> : !layout.tensor<2xi64>
  %xc = graph.mul %x, %cos : !layout.tensor<5x8xf32>
  %even = graph.slice %x, %zero, %end, %ax, %two : (!layout.tensor<5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<5x4xf32>
  %odd = graph.slice %x, %one, %end, %ax, %two : (!layout.tensor<5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<5x4xf32>
  %un = graph.unsqueeze %odd, %ax : (!layout.tensor<5x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<5x4x1xf32>
  %ue = graph.unsqueeze %even, %ax : (!layout.tensor<5x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<5x4x1xf32>
  %st = graph.concat %un, %ue {axis = -1 : i64} : (!layout.tensor<5x4x1xf32>, !layout.tensor<5x4x1xf32>) -> !layout.tensor<5x4x2xf32>
  %r = graph.reshape %st, %shape : (!layout.tensor<5x4x2xf32>, !layout.tensor<2xi64>) -> !layout.tensor<5x8xf32>
  %rs = graph.mul %r, %sin : !layout.tensor<5x8xf32>
  %y = graph.add %xc, %rs : !layout.tensor<5x8xf32>
  func.return %y : !layout.tensor<5x8xf32>
}
// CHECK-LABEL: func.func @interleaved_no_neg
// CHECK:         graph.reshape
// CHECK-NOT:     graph.apply_rotary

// -----
// A partial rotary (GPT-J's rotary_dim = 4 of a head of 8) after slice-of-slice folding:
// the rotation's step-2 slices read the whole head, ending at the rotary width (the even
// one clamped to 3), while cos multiplies head[..., :4]. That part is x.
func.func @partial_interleaved(%h: !layout.tensor<2x5x8xf32>, %cos: !layout.tensor<1x5x4xf32>, %sin: !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x4xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %two = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %three = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %four = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %shape = graph.constant dense<[2, 5, 4]> : !layout.tensor<3xi64>
  %x = graph.slice %h, %zero, %four, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %xc = graph.mul %x, %cos : (!layout.tensor<2x5x4xf32>, !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x4xf32>
  %even = graph.slice %h, %zero, %three, %ax, %two : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x2xf32>
  %odd = graph.slice %h, %one, %four, %ax, %two : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x2xf32>
  %n = graph.neg %odd : !layout.tensor<2x5x2xf32>
  %un = graph.unsqueeze %n, %ax : (!layout.tensor<2x5x2xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x2x1xf32>
  %ue = graph.unsqueeze %even, %ax : (!layout.tensor<2x5x2xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x2x1xf32>
  %st = graph.concat %un, %ue {axis = -1 : i64} : (!layout.tensor<2x5x2x1xf32>, !layout.tensor<2x5x2x1xf32>) -> !layout.tensor<2x5x2x2xf32>
  %r = graph.reshape %st, %shape : (!layout.tensor<2x5x2x2xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x5x4xf32>
  %rs = graph.mul %r, %sin : (!layout.tensor<2x5x4xf32>, !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x4xf32>
  %y = graph.add %xc, %rs : !layout.tensor<2x5x4xf32>
  func.return %y : !layout.tensor<2x5x4xf32>
}
// CHECK-LABEL: func.func @partial_interleaved
// CHECK:         %x = graph.slice %h
// CHECK-NOT:     graph.neg
// CHECK:         %y = graph.apply_rotary %x, %cos, %sin {interleaved = 1}
// CHECK-NEXT:    func.return %y

// -----
// recompose-rotary-partial: the rotated first 4 columns of a head of 8 concatenated with
// the other 4 are one apply_rotary with rotary_dim = 4; the slices and the Concat go.
func.func @partial_concat(%h: !layout.tensor<2x5x8xf32>, %cos: !layout.tensor<1x5x4xf32>, %sin: !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x8xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %four = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %x = graph.slice %h, %zero, %four, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %rest = graph.slice %h, %four, %end, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %r = graph.apply_rotary %x, %cos, %sin {interleaved = 1} : (!layout.tensor<2x5x4xf32>, !layout.tensor<1x5x4xf32>, !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x4xf32>
  %y = graph.concat %r, %rest {axis = -1 : i64} : (!layout.tensor<2x5x4xf32>, !layout.tensor<2x5x4xf32>) -> !layout.tensor<2x5x8xf32>
  func.return %y : !layout.tensor<2x5x8xf32>
}
// CHECK-LABEL: func.func @partial_concat
// CHECK-NOT:     graph.slice
// CHECK:         %y = graph.apply_rotary %h, %cos, %sin {interleaved = 1, rotary_dim = 4}
// CHECK-NEXT:    func.return %y

// -----
// The rest starts past the rotated part (column 5 of 8): a gap, not the head: kept.
func.func @partial_gap(%h: !layout.tensor<2x5x8xf32>, %cos: !layout.tensor<1x5x4xf32>, %sin: !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x7xf32> {
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %four = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %five = graph.constant dense<[5]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %x = graph.slice %h, %zero, %four, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %rest = graph.slice %h, %five, %end, %ax : (!layout.tensor<2x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x3xf32>
  %r = graph.apply_rotary %x, %cos, %sin : (!layout.tensor<2x5x4xf32>, !layout.tensor<1x5x4xf32>, !layout.tensor<1x5x4xf32>) -> !layout.tensor<2x5x4xf32>
  %y = graph.concat %r, %rest {axis = -1 : i64} : (!layout.tensor<2x5x4xf32>, !layout.tensor<2x5x3xf32>) -> !layout.tensor<2x5x7xf32>
  func.return %y : !layout.tensor<2x5x7xf32>
}
// CHECK-LABEL: func.func @partial_gap
// CHECK:         graph.apply_rotary %x, %cos, %sin :
// CHECK:         graph.concat

// -----
// Tables of a lower rank than x (Pixtral's 2-D tables against [B, H, S, D]): the op takes
// them with 1s prepended, as the Muls broadcast them — a constant reshaped, a value
// unsqueezed — so its tables have x's rank (the rotary kernel reads them so).
func.func @rotary_low_rank_tables(%x: !layout.tensor<2x4x5x8xf32>, %sin: !layout.tensor<5x8xf32>) -> !layout.tensor<2x4x5x8xf32> {
  %cos = graph.constant dense<0.5> : !layout.tensor<5x8xf32>
  %zero = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %half = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %xc = graph.mul %x, %cos : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
  %x1 = graph.slice %x, %zero, %half, %ax : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4xf32>
  %x2 = graph.slice %x, %half, %end, %ax : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x4x5x4xf32>
  %n = graph.neg %x2 : !layout.tensor<2x4x5x4xf32>
  %r = graph.concat %n, %x1 {axis = -1 : i64} : (!layout.tensor<2x4x5x4xf32>, !layout.tensor<2x4x5x4xf32>) -> !layout.tensor<2x4x5x8xf32>
  %rs = graph.mul %r, %sin : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
  %y = graph.add %xc, %rs : !layout.tensor<2x4x5x8xf32>
  func.return %y : !layout.tensor<2x4x5x8xf32>
}
// CHECK-LABEL: func.func @rotary_low_rank_tables
// CHECK-DAG:     %[[COS:[^ ]*]] = graph.constant dense<0.5> : !layout.tensor<1x1x5x8xf32>
// CHECK-DAG:     %[[SIN:[^ ]*]] = graph.unsqueeze %sin, %{{.*}} : (!layout.tensor<5x8xf32>, !layout.tensor<2xi64>) -> !layout.tensor<1x1x5x8xf32>
// CHECK:         %[[Y:[^ ]*]] = graph.apply_rotary %x, %[[COS]], %[[SIN]] : (!layout.tensor<2x4x5x8xf32>, !layout.tensor<1x1x5x8xf32>, !layout.tensor<1x1x5x8xf32>) -> !layout.tensor<2x4x5x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
