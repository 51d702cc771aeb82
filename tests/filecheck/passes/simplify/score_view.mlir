// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=scale-before-shared-movement,batch-split-through-elementwise,scale-before-gather-elements,batch-merge-after-gather-elements,batch-merge-after-transpose,transposed-gathered-product,reshape-chain,reshape-to-same-shape},constant-fold,algebraic-simplify{only=scale-before-shared-movement,batch-split-through-elementwise,scale-before-gather-elements,batch-merge-after-gather-elements,batch-merge-after-transpose,transposed-gathered-product,reshape-chain,reshape-to-same-shape},dce' --split-input-file | filecheck %s

// DeBERTa-v2's keys: the merged head split is read by the division (for Q·Kᵀ) and by the
// p2c product. The division climbs the split; the split stays for the product.
func.func @shared_split(%k: !layout.tensor<2x5x12xf32>, %q: !layout.tensor<6x5x4xf32>, %pos: !layout.tensor<6x4x7xf32>) -> (!layout.tensor<6x5x5xf32>, !layout.tensor<6x5x7xf32>) {
  %s = graph.constant dense<[2, 5, 3, 4]> : !layout.tensor<4xi64>
  %m = graph.constant dense<[6, 5, 4]> : !layout.tensor<3xi64>
  %kh = graph.reshape %k, %s : (!layout.tensor<2x5x12xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x5x3x4xf32>
  %kt = graph.transpose %kh {perm = [0, 2, 1, 3]} : (!layout.tensor<2x5x3x4xf32>) -> !layout.tensor<2x3x5x4xf32>
  %km = graph.reshape %kt, %m : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x4xf32>
  %c = graph.constant dense<3.4641016> : !layout.tensor<f32>
  %ks = graph.div %km, %c : (!layout.tensor<6x5x4xf32>, !layout.tensor<f32>) -> !layout.tensor<6x5x4xf32>
  %kst = graph.transpose %ks {perm = [0, 2, 1]} : (!layout.tensor<6x5x4xf32>) -> !layout.tensor<6x4x5xf32>
  %scores = graph.matmul %q, %kst : (!layout.tensor<6x5x4xf32>, !layout.tensor<6x4x5xf32>) -> !layout.tensor<6x5x5xf32>
  %p2c = graph.matmul %km, %pos : (!layout.tensor<6x5x4xf32>, !layout.tensor<6x4x7xf32>) -> !layout.tensor<6x5x7xf32>
  func.return %scores, %p2c : !layout.tensor<6x5x5xf32>, !layout.tensor<6x5x7xf32>
}
// CHECK-LABEL: func.func @shared_split
// CHECK:      %[[KS:.*]] = graph.div %k, %c : (!layout.tensor<2x5x12xf32>, !layout.tensor<f32>) -> !layout.tensor<2x5x12xf32>
// CHECK:      graph.matmul %km, %pos
// CHECK-NOT:  graph.div

// -----
// The scaled keys are also read by a ReLU (no product): the division stays after the split.
func.func @other_reader(%k: !layout.tensor<2x5x12xf32>, %q: !layout.tensor<2x5x3x4xf32>) -> (!layout.tensor<2x5x3x4xf32>, !layout.tensor<2x5x3x4xf32>) {
  %s = graph.constant dense<[2, 5, 3, 4]> : !layout.tensor<4xi64>
  %kh = graph.reshape %k, %s : (!layout.tensor<2x5x12xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x5x3x4xf32>
  %c = graph.constant dense<3.0> : !layout.tensor<f32>
  %ks = graph.div %kh, %c : (!layout.tensor<2x5x3x4xf32>, !layout.tensor<f32>) -> !layout.tensor<2x5x3x4xf32>
  %r = graph.relu %ks : !layout.tensor<2x5x3x4xf32>
  %o = graph.add %kh, %q : !layout.tensor<2x5x3x4xf32>
  func.return %r, %o : !layout.tensor<2x5x3x4xf32>, !layout.tensor<2x5x3x4xf32>
}
// CHECK-LABEL: func.func @other_reader
// CHECK:      %ks = graph.div %kh, %c

// -----
// The summed scores viewed back [B, H, S, S]: the add reads the unmerged product and the
// term viewed over its dims; the position terms are gathered and scaled over the unmerged
// heads too (the scales on the products' results, the transpose over the heads).
func.func @score_terms(%q: !layout.tensor<2x3x5x4xf32>, %kt: !layout.tensor<2x3x4x5xf32>, %p2c: !layout.tensor<2x3x5x7xf32>, %pos: !layout.tensor<2x3x4x7xf32>) -> !layout.tensor<2x3x5x5xf32> {
  %m = graph.constant dense<[6, 5, 5]> : !layout.tensor<3xi64>
  %m7 = graph.constant dense<[6, 5, 7]> : !layout.tensor<3xi64>
  %v = graph.constant dense<[2, 3, 5, 5]> : !layout.tensor<4xi64>
  %c = graph.constant dense<3.4641016> : !layout.tensor<f32>
  %i = graph.constant dense<2> : !layout.tensor<6x5x5xi64>
  %s4 = graph.matmul %q, %kt : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<2x3x4x5xf32>) -> !layout.tensor<2x3x5x5xf32>
  %s = graph.reshape %s4, %m : (!layout.tensor<2x3x5x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x5xf32>
  %a4 = graph.matmul %q, %pos : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<2x3x4x7xf32>) -> !layout.tensor<2x3x5x7xf32>
  %a = graph.reshape %a4, %m7 : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x7xf32>
  %ag = graph.gather_elements %a, %i {axis = -1} : (!layout.tensor<6x5x7xf32>, !layout.tensor<6x5x5xi64>) -> !layout.tensor<6x5x5xf32>
  %as = graph.div %ag, %c : (!layout.tensor<6x5x5xf32>, !layout.tensor<f32>) -> !layout.tensor<6x5x5xf32>
  %b = graph.reshape %p2c, %m7 : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x7xf32>
  %bg = graph.gather_elements %b, %i {axis = -1} : (!layout.tensor<6x5x7xf32>, !layout.tensor<6x5x5xi64>) -> !layout.tensor<6x5x5xf32>
  %bt = graph.transpose %bg {perm = [0, 2, 1]} : (!layout.tensor<6x5x5xf32>) -> !layout.tensor<6x5x5xf32>
  %t = graph.add %as, %bt : !layout.tensor<6x5x5xf32>
  %sum = graph.add %s, %t : !layout.tensor<6x5x5xf32>
  %y = graph.reshape %sum, %v : (!layout.tensor<6x5x5xf32>, !layout.tensor<4xi64>) -> !layout.tensor<2x3x5x5xf32>
  func.return %y : !layout.tensor<2x3x5x5xf32>
}
// CHECK-LABEL: func.func @score_terms
// CHECK-DAG:  %[[S:.*]] = graph.matmul %q, %kt : {{.*}} -> !layout.tensor<2x3x5x5xf32>
// CHECK-DAG:  %[[A:.*]] = graph.matmul %q, %pos
// CHECK-DAG:  %[[AS:.*]] = graph.div %[[A]], %{{.*}} : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<{{.*}}xf32>) -> !layout.tensor<2x3x5x7xf32>
// CHECK-DAG:  %[[AG:.*]] = graph.gather_elements %[[AS]], %{{.*}} {axis = 3} : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<2x3x5x5xi64>) -> !layout.tensor<2x3x5x5xf32>
// CHECK-DAG:  %[[BG:.*]] = graph.gather_elements %p2c, %{{.*}} {axis = 3} : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<2x3x5x5xi64>) -> !layout.tensor<2x3x5x5xf32>
// CHECK-DAG:  %[[BT:.*]] = graph.transpose %[[BG]] {perm = [0, 1, 3, 2]}
// CHECK-DAG:  %[[T:.*]] = graph.add %[[AG]], %[[BT]] : !layout.tensor<2x3x5x5xf32>
// CHECK:      %[[Y:.*]] = graph.add %[[S]], %[[T]] : !layout.tensor<2x3x5x5xf32>
// CHECK-NEXT: func.return %[[Y]]

// -----
// A gather along the merged dim: no batch merge to move (the indices pick across heads).
func.func @gather_across_the_merge(%x: !layout.tensor<2x3x5x7xf32>, %i: !layout.tensor<6x5x7xi64>) -> !layout.tensor<6x5x7xf32> {
  %m = graph.constant dense<[6, 5, 7]> : !layout.tensor<3xi64>
  %a = graph.reshape %x, %m : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<3xi64>) -> !layout.tensor<6x5x7xf32>
  %g = graph.gather_elements %a, %i {axis = 0} : (!layout.tensor<6x5x7xf32>, !layout.tensor<6x5x7xi64>) -> !layout.tensor<6x5x7xf32>
  func.return %g : !layout.tensor<6x5x7xf32>
}
// CHECK-LABEL: func.func @gather_across_the_merge
// CHECK:      graph.gather_elements %a, %i {axis = 0} : (!layout.tensor<6x5x7xf32>

// -----
// DeBERTa-v2's p2c term: the keys times the position queries, scaled, gathered along the
// last axis and transposed. The product is computed transposed (pos·kᵀ) and gathered
// along its rows by the transposed indices: no transpose of the term is left.
func.func @transposed_term(%k: !layout.tensor<2x3x5x4xf32>, %pos: !layout.tensor<2x3x4x7xf32>, %i: !layout.tensor<2x3x5x5xi64>) -> !layout.tensor<2x3x5x5xf32> {
  %c = graph.constant dense<3.4641016> : !layout.tensor<f32>
  %p = graph.matmul %k, %pos : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<2x3x4x7xf32>) -> !layout.tensor<2x3x5x7xf32>
  %ps = graph.div %p, %c : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<f32>) -> !layout.tensor<2x3x5x7xf32>
  %g = graph.gather_elements %ps, %i {axis = -1} : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<2x3x5x5xi64>) -> !layout.tensor<2x3x5x5xf32>
  %t = graph.transpose %g {perm = [0, 1, 3, 2]} : (!layout.tensor<2x3x5x5xf32>) -> !layout.tensor<2x3x5x5xf32>
  func.return %t : !layout.tensor<2x3x5x5xf32>
}
// CHECK-LABEL: func.func @transposed_term
// CHECK-DAG:  %[[PT:.*]] = graph.transpose %pos {perm = [0, 1, 3, 2]} : (!layout.tensor<2x3x4x7xf32>) -> !layout.tensor<2x3x7x4xf32>
// CHECK-DAG:  %[[KT:.*]] = graph.transpose %k {perm = [0, 1, 3, 2]} : (!layout.tensor<2x3x5x4xf32>) -> !layout.tensor<2x3x4x5xf32>
// CHECK-DAG:  %[[IT:.*]] = graph.transpose %i {perm = [0, 1, 3, 2]}
// CHECK:      %[[P:.*]] = graph.matmul %[[PT]], %[[KT]] : {{.*}} -> !layout.tensor<2x3x7x5xf32>
// CHECK:      %[[PS:.*]] = graph.div %[[P]], %c
// CHECK:      %[[G:.*]] = graph.gather_elements %[[PS]], %[[IT]] {axis = 2} : (!layout.tensor<2x3x7x5xf32>, !layout.tensor<2x3x5x5xi64>) -> !layout.tensor<2x3x5x5xf32>
// CHECK-NEXT: func.return %[[G]]

// -----
// The gathered product is also read untransposed: it stays.
func.func @gathered_twice(%k: !layout.tensor<2x3x5x4xf32>, %pos: !layout.tensor<2x3x4x7xf32>, %i: !layout.tensor<2x3x5x5xi64>) -> (!layout.tensor<2x3x5x5xf32>, !layout.tensor<2x3x5x5xf32>) {
  %p = graph.matmul %k, %pos : (!layout.tensor<2x3x5x4xf32>, !layout.tensor<2x3x4x7xf32>) -> !layout.tensor<2x3x5x7xf32>
  %g = graph.gather_elements %p, %i {axis = -1} : (!layout.tensor<2x3x5x7xf32>, !layout.tensor<2x3x5x5xi64>) -> !layout.tensor<2x3x5x5xf32>
  %t = graph.transpose %g {perm = [0, 1, 3, 2]} : (!layout.tensor<2x3x5x5xf32>) -> !layout.tensor<2x3x5x5xf32>
  func.return %t, %g : !layout.tensor<2x3x5x5xf32>, !layout.tensor<2x3x5x5xf32>
}
// CHECK-LABEL: func.func @gathered_twice
// CHECK:      %t = graph.transpose %g
