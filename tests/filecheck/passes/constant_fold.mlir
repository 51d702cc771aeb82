// RUN: tilegraph-opt %s -p 'constant-fold,dce' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'constant-fold{max-bytes=8},dce' --split-input-file | filecheck %s --check-prefix=SMALL
// RUN: tilegraph-opt %s -p 'constant-fold' --split-input-file --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS
// STATS: folded 2
// STATS: deduplicated 1
// STATS: shape-queries 2
// STATS: skipped-growth 1
// STATS: rule.reshape-concat-shape 1

// An op on constants becomes a constant; the two equal constants it leaves are shared.
func.func @arith() -> (!layout.tensor<3xf32>, !layout.tensor<3xf32>) {
  %a = graph.constant dense<[1.0, 2.0, 3.0]> : !layout.tensor<3xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : !layout.tensor<3xf32>
  %c = graph.add %a, %b : !layout.tensor<3xf32>
  %d = graph.mul %b, %b : !layout.tensor<3xf32>
  func.return %c, %d : !layout.tensor<3xf32>, !layout.tensor<3xf32>
}
// CHECK-LABEL: func.func @arith
// CHECK-NEXT:  %c = graph.constant dense<[2.0, 4.0, 6.0]> : !layout.tensor<3xf32>
// CHECK-NEXT:  %d = graph.constant dense<[1.0, 4.0, 9.0]> : !layout.tensor<3xf32>
// CHECK-NEXT:  func.return %c, %d
// SMALL-LABEL: func.func @arith
// SMALL:       graph.add
// SMALL:       graph.mul

// -----
// Equal constants are shared; a different dtype or value is not merged.
func.func @dedup() -> (!layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf64>) {
  %a = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf32>
  %b = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf32>
  %c = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf64>
  func.return %a, %b, %c : !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf64>
}
// CHECK-LABEL: func.func @dedup
// CHECK-NEXT:  %a = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf32>
// CHECK-NEXT:  %c = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf64>
// CHECK-NEXT:  func.return %a, %a, %c

// -----
// Shape queries fold over the static dims only: dim 0 is symbolic.
func.func @shape(%x: !layout.tensor<[N, 3, 4], f32>) -> (!layout.tensor<2xi64>, !layout.tensor<1xi64>, !layout.tensor<2xi64>, !layout.tensor<i64>) {
  %s = graph.shape %x : (!layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<3xi64>
  %i = graph.constant dense<[1, 2]> : !layout.tensor<2xi64>
  %hw = graph.gather %s, %i {axis = 0} : (!layout.tensor<3xi64>, !layout.tensor<2xi64>) -> !layout.tensor<2xi64>
  %i0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %n = graph.gather %s, %i0 {axis = 0} : (!layout.tensor<3xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1xi64>
  %tail = graph.shape %x {start = 1} : (!layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<2xi64>
  %size = graph.size %x : (!layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<i64>
  func.return %hw, %n, %tail, %size : !layout.tensor<2xi64>, !layout.tensor<1xi64>, !layout.tensor<2xi64>, !layout.tensor<i64>
}
// CHECK-LABEL: func.func @shape
// CHECK-DAG:   %hw = graph.constant dense<[3, 4]> : !layout.tensor<2xi64>
// CHECK-DAG:   %n = graph.gather %s, %i0
// CHECK-DAG:   %size = graph.size %x
// CHECK:       func.return %hw, %n, %hw, %size

// -----
// Slice(Shape) of the static part folds.
func.func @slice_shape(%x: !layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<2xi64> {
  %s = graph.shape %x : (!layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<3xi64>
  %b = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %e = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %t = graph.slice %s, %b, %e : (!layout.tensor<3xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2xi64>
  func.return %t : !layout.tensor<2xi64>
}
// CHECK-LABEL: func.func @slice_shape
// CHECK-NEXT:  %t = graph.constant dense<[3, 4]> : !layout.tensor<2xi64>
// CHECK-NEXT:  func.return %t

// -----
// ConstantOfShape with a constant shape folds; a large Expand of a small constant does not
// (growth), nor a result above max-bytes.
func.func @bloat() -> (!layout.tensor<2x2xf32>, !layout.tensor<256x256xf32>) {
  %shape = graph.constant dense<[2, 2]> : !layout.tensor<2xi64>
  %z = graph.constant_of_shape %shape {value = #graph.dense<f32, [1], [7.0]>} : (!layout.tensor<2xi64>) -> !layout.tensor<2x2xf32>
  %one = graph.constant dense<[1.0]> : !layout.tensor<1xf32>
  %big = graph.constant dense<[256, 256]> : !layout.tensor<2xi64>
  %e = graph.expand %one, %big : (!layout.tensor<1xf32>, !layout.tensor<2xi64>) -> !layout.tensor<256x256xf32>
  func.return %z, %e : !layout.tensor<2x2xf32>, !layout.tensor<256x256xf32>
}
// CHECK-LABEL: func.func @bloat
// CHECK-NEXT:  %z = graph.constant dense<7.0> : !layout.tensor<2x2xf32>
// CHECK:       %e = graph.expand %one, %big
// SMALL-LABEL: func.func @bloat
// SMALL:       graph.constant_of_shape

// -----
// Rule 16: a Concat shape with one unknown 1-element piece becomes a constant with -1.
func.func @concat_shape(%x: !layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<?x12xf32> {
  %s = graph.shape %x : (!layout.tensor<[N, 3, 4], f32>) -> !layout.tensor<3xi64>
  %i0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %n = graph.gather %s, %i0 {axis = 0} : (!layout.tensor<3xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1xi64>
  %t = graph.constant dense<[12]> : !layout.tensor<1xi64>
  %shape = graph.concat %n, %t {axis = 0} : (!layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2xi64>
  %r = graph.reshape %x, %shape : (!layout.tensor<[N, 3, 4], f32>, !layout.tensor<2xi64>) -> !layout.tensor<?x12xf32>
  func.return %r : !layout.tensor<?x12xf32>
}
// CHECK-LABEL: func.func @concat_shape
// CHECK-NEXT:  %shape = graph.constant dense<[-1, 12]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %r = graph.reshape %x, %shape

// -----
// ... but not when a constant piece is 0 with allowzero = 1 (the -1 would be ambiguous).
func.func @concat_shape_zero(%x: !layout.tensor<[N, 3, 4], f32>, %n: !layout.tensor<1xi64>) -> !layout.tensor<?x?xf32> {
  %t = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %shape = graph.concat %n, %t {axis = 0} : (!layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2xi64>
  %r = graph.reshape %x, %shape {allowzero = 1} : (!layout.tensor<[N, 3, 4], f32>, !layout.tensor<2xi64>) -> !layout.tensor<?x?xf32>
  func.return %r : !layout.tensor<?x?xf32>
}
// CHECK-LABEL: func.func @concat_shape_zero
// CHECK:       %shape = graph.concat %n, %t

