// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=einsum-as-matmul},dce' --split-input-file | filecheck %s

// einsum-as-matmul: attention scores q·kᵀ per head: b and h batch, t rows, s columns, d
// contracted; the head dim moves next to the batch, k is transposed to [b, h, d, s].
func.func @scores(%q: !layout.tensor<?x?x4x8xf32>, %k: !layout.tensor<?x?x4x8xf32>) -> !layout.tensor<?x4x?x?xf32> {
  %s = graph.einsum %q, %k {equation = "bthd,bshd->bhts"} : (!layout.tensor<?x?x4x8xf32>, !layout.tensor<?x?x4x8xf32>) -> !layout.tensor<?x4x?x?xf32>
  func.return %s : !layout.tensor<?x4x?x?xf32>
}
// CHECK-LABEL: func.func @scores
// CHECK:         %[[Q:.*]] = graph.transpose %q {perm = [0, 2, 1, 3]}
// CHECK:         %[[K:.*]] = graph.transpose %k {perm = [0, 2, 3, 1]}
// CHECK:         %s = graph.matmul %[[Q]], %[[K]]
// CHECK-NOT:     graph.einsum

// -----
// A letter of one operand alone (j) is summed first; the matrix-vector product's missing
// column group is a dim of 1 in and out.
func.func @matvec(%a: !layout.tensor<5x6xf32>, %v: !layout.tensor<6x3xf32>) -> !layout.tensor<5xf32> {
  %y = graph.einsum %a, %v {equation = "ij,jk->i"} : (!layout.tensor<5x6xf32>, !layout.tensor<6x3xf32>) -> !layout.tensor<5xf32>
  func.return %y : !layout.tensor<5xf32>
}
// CHECK-LABEL: func.func @matvec
// CHECK:         graph.reduce_sum %v
// CHECK:         graph.reshape {{.*}} -> !layout.tensor<6x1xf32>
// CHECK:         graph.matmul {{.*}} -> !layout.tensor<5x1xf32>
// CHECK:         %y = graph.reshape {{.*}} -> !layout.tensor<5xf32>

// -----
// A diagonal (a subscript twice in a term): the op stays.
func.func @diagonal(%a: !layout.tensor<4x4xf32>) -> !layout.tensor<4xf32> {
  %y = graph.einsum %a {equation = "ii->i"} : (!layout.tensor<4x4xf32>) -> !layout.tensor<4xf32>
  func.return %y : !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @diagonal
// CHECK:         graph.einsum
