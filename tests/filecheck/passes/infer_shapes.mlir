// RUN: tilegraph-opt %s -p infer-shapes | filecheck %s
// RUN: tilegraph-opt %s -p O1 | filecheck %s --check-prefix=O1

// Unknown dims are refined from constant shape operands; formats are kept; the function
// type follows the refined result.
func.func @refine(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<?x?xf32> {
  %s = graph.constant dense<[2, 3]> : !layout.tensor<2xi64>
  %z = graph.constant_of_shape %s {value = #graph.dense<f32, [1], [0.0]>} : (!layout.tensor<2xi64>) -> !layout.tensor<?x?xf32>
  %r = graph.relu %z : !layout.tensor<?x?xf32>
  %dead = graph.exp %x : !layout.tensor<2x3xf32>
  %dup = graph.relu %z : !layout.tensor<?x?xf32>
  %sum = graph.add %r, %dup : !layout.tensor<?x?xf32>
  func.return %sum : !layout.tensor<?x?xf32>
}
// CHECK-LABEL: func.func @refine(%x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
// CHECK:      %z = graph.constant_of_shape %s {value = #graph.dense<f32, [1], [0.0]>} : (!layout.tensor<2xi64>) -> !layout.tensor<2x3xf32>
// CHECK-NEXT: %r = graph.relu %z : !layout.tensor<2x3xf32>
// CHECK-NEXT: %dead = graph.exp %x : !layout.tensor<2x3xf32>
// CHECK-NEXT: %dup = graph.relu %z : !layout.tensor<2x3xf32>
// CHECK-NEXT: %sum = graph.add %r, %dup : !layout.tensor<2x3xf32>
// CHECK-NEXT: func.return %sum : !layout.tensor<2x3xf32>

// O1 folds what is computed from constants only, and removes the dead exp.
// O1-LABEL: func.func @refine
// O1-NEXT:  %z = graph.constant dense<0.0> : !layout.tensor<2x3xf32>
// O1-NEXT:  func.return %z : !layout.tensor<2x3xf32>

// Known dims that the shape function cannot see stay as written (no narrowing to ?).
func.func @keep(%x: !layout.tensor<4x8xf32, ND>) -> !layout.tensor<4x8xf32> {
  %r = graph.sigmoid %x : !layout.tensor<4x8xf32>
  func.return %r : !layout.tensor<4x8xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK-NEXT: %r = graph.sigmoid %x : !layout.tensor<4x8xf32>
