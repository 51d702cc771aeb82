// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=transpose-between-reshapes,scale-before-movement,offset-before-movement,elementwise-before-movement},dce' --split-input-file | filecheck %s

// torch's SDPA decomposition: Kᵀ as Reshape / Transpose / Reshape, then times √s. The chain
// is one transpose of the last two dims, and the scale moves before it.
func.func @key(%k: !layout.tensor<3x4x11x8xf32>) -> !layout.tensor<3x4x8x11xf32> {
  %flat = graph.constant dense<[12, 11, 8]> : !layout.tensor<3xi64>
  %back = graph.constant dense<[3, 4, 8, 11]> : !layout.tensor<4xi64>
  %s = graph.constant dense<0.594603539> : !layout.tensor<f32>
  %a = graph.reshape %k, %flat : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<3xi64>) -> !layout.tensor<12x11x8xf32>
  %b = graph.transpose %a {perm = [0, 2, 1]} : (!layout.tensor<12x11x8xf32>) -> !layout.tensor<12x8x11xf32>
  %c = graph.reshape %b, %back : (!layout.tensor<12x8x11xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x4x8x11xf32>
  %y = graph.mul %c, %s : (!layout.tensor<3x4x8x11xf32>, !layout.tensor<f32>) -> !layout.tensor<3x4x8x11xf32>
  func.return %y : !layout.tensor<3x4x8x11xf32>
}
// CHECK-LABEL: func.func @key
// CHECK:         %[[SCALED:.*]] = graph.mul %k, %s {{.*}} -> !layout.tensor<3x4x11x8xf32>
// CHECK:         %y = graph.transpose %[[SCALED]] {perm = [0, 1, 3, 2]}
// CHECK-NOT:     graph.reshape

// -----
// A per-element scale (not one element) stays after the movement.
func.func @per_element(%x: !layout.tensor<4x6xf32>, %w: !layout.tensor<6x4xf32>) -> !layout.tensor<6x4xf32> {
  %t = graph.transpose %x {perm = [1, 0]} : (!layout.tensor<4x6xf32>) -> !layout.tensor<6x4xf32>
  %y = graph.mul %t, %w : (!layout.tensor<6x4xf32>, !layout.tensor<6x4xf32>) -> !layout.tensor<6x4xf32>
  func.return %y : !layout.tensor<6x4xf32>
}
// CHECK-LABEL: func.func @per_element
// CHECK:         %t = graph.transpose %x
// CHECK:         %y = graph.mul %t, %w

// -----
// elementwise-before-movement: the residual add of two transposed tensors and the GELU of
// a transposed one run before the transposes (SqueezeBERT's channels-first layers).
func.func @residual(%a: !layout.tensor<2x5x8xf32>, %b: !layout.tensor<2x5x8xf32>) -> !layout.tensor<2x8x5xf32> {
  %ta = graph.transpose %a {perm = [0, 2, 1]} : (!layout.tensor<2x5x8xf32>) -> !layout.tensor<2x8x5xf32>
  %tb = graph.transpose %b {perm = [0, 2, 1]} : (!layout.tensor<2x5x8xf32>) -> !layout.tensor<2x8x5xf32>
  %s = graph.add %ta, %tb : (!layout.tensor<2x8x5xf32>, !layout.tensor<2x8x5xf32>) -> !layout.tensor<2x8x5xf32>
  %y = graph.gelu %s : !layout.tensor<2x8x5xf32>
  func.return %y : !layout.tensor<2x8x5xf32>
}
// CHECK-LABEL: func.func @residual
// CHECK:         %[[S:.*]] = graph.add %a, %b : !layout.tensor<2x5x8xf32>
// CHECK:         %[[G:.*]] = graph.gelu %[[S]] : !layout.tensor<2x5x8xf32>
// CHECK:         %y = graph.transpose %[[G]] {perm = [0, 2, 1]}

// -----
// Different perms, or a movement read elsewhere, stay.
func.func @mixed(%a: !layout.tensor<4x4xf32>, %b: !layout.tensor<4x4xf32>) -> (!layout.tensor<4x4xf32>, !layout.tensor<4x4xf32>) {
  %ta = graph.transpose %a {perm = [1, 0]} : (!layout.tensor<4x4xf32>) -> !layout.tensor<4x4xf32>
  %s = graph.add %ta, %b : (!layout.tensor<4x4xf32>, !layout.tensor<4x4xf32>) -> !layout.tensor<4x4xf32>
  %r = graph.relu %ta : !layout.tensor<4x4xf32>
  func.return %s, %r : !layout.tensor<4x4xf32>, !layout.tensor<4x4xf32>
}
// CHECK-LABEL: func.func @mixed
// CHECK:         %ta = graph.transpose %a
// CHECK:         %s = graph.add %ta, %b
// CHECK:         %r = graph.relu %ta

// -----
// The GELU after a reshape of a product's result stays there: the product's epilogue reads
// across that reshape (a legacy export's addmm); before it, it would read FRACTAL_NZ.
func.func @addmm_gelu(%x: !layout.tensor<6x8xf32>, %w: !layout.tensor<8x16xf32>) -> !layout.tensor<2x3x16xf32> {
  %shape = graph.constant dense<[2, 3, 16]> : !layout.tensor<3xi64>
  %m = graph.matmul %x, %w : (!layout.tensor<6x8xf32>, !layout.tensor<8x16xf32>) -> !layout.tensor<6x16xf32>
  %r = graph.reshape %m, %shape : (!layout.tensor<6x16xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x3x16xf32>
  %y = graph.gelu %r : !layout.tensor<2x3x16xf32>
  func.return %y : !layout.tensor<2x3x16xf32>
}
// CHECK-LABEL: func.func @addmm_gelu
// CHECK:         %r = graph.reshape %m, %shape
// CHECK-NEXT:    %y = graph.gelu %r

// -----
// Paddle's query scaling, scale(q, s, 0.0): Add(Mul(split, s), 0.0) after the head split.
// Both move before the split, into the projection's epilogue.
func.func @paddle_scale(%q: !layout.tensor<3x11x32xf32>) -> !layout.tensor<3x4x11x8xf32> {
  %heads = graph.constant dense<[3, 11, 4, 8]> : !layout.tensor<4xi64>
  %s = graph.constant dense<0.353553385> : !layout.tensor<1xf32>
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %r = graph.reshape %q, %heads : (!layout.tensor<3x11x32xf32>, !layout.tensor<4xi64>) -> !layout.tensor<3x11x4x8xf32>
  %t = graph.transpose %r {perm = [0, 2, 1, 3]} : (!layout.tensor<3x11x4x8xf32>) -> !layout.tensor<3x4x11x8xf32>
  %m = graph.mul %t, %s : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<1xf32>) -> !layout.tensor<3x4x11x8xf32>
  %y = graph.add %m, %zero : (!layout.tensor<3x4x11x8xf32>, !layout.tensor<f32>) -> !layout.tensor<3x4x11x8xf32>
  func.return %y : !layout.tensor<3x4x11x8xf32>
}
// CHECK-LABEL: func.func @paddle_scale
// CHECK:         %[[M:.*]] = graph.mul %q, %s {{.*}} -> !layout.tensor<3x11x32xf32>
// CHECK:         %[[A:.*]] = graph.add %[[M]], %zero {{.*}} -> !layout.tensor<3x11x32xf32>
// CHECK:         %[[R:.*]] = graph.reshape %[[A]], %heads
// CHECK:         %y = graph.transpose %[[R]] {perm = [0, 2, 1, 3]}

// -----
// A per-row offset (not one element) stays behind the transpose.
func.func @per_row(%x: !layout.tensor<4x6xf32>, %c: !layout.tensor<6x1xf32>) -> !layout.tensor<6x4xf32> {
  %t = graph.transpose %x {perm = [1, 0]} : (!layout.tensor<4x6xf32>) -> !layout.tensor<6x4xf32>
  %y = graph.sub %t, %c : (!layout.tensor<6x4xf32>, !layout.tensor<6x1xf32>) -> !layout.tensor<6x4xf32>
  func.return %y : !layout.tensor<6x4xf32>
}
// CHECK-LABEL: func.func @per_row
// CHECK:         %t = graph.transpose %x
// CHECK-NEXT:    %y = graph.sub %t, %c
