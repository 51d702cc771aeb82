// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=selects-as-split,slices-as-split}' --split-input-file | filecheck %s

// selects-as-split: the three constant selects of a packed [3, S, E] projection are the
// parts of one split (each squeezed), in index order whatever order the gathers come in.
func.func @packed(%x: !layout.tensor<3x5x8xf32>) -> (!layout.tensor<5x8xf32>, !layout.tensor<5x8xf32>, !layout.tensor<5x8xf32>) {
  %i0 = graph.constant dense<0> : !layout.tensor<i64>
  %i1 = graph.constant dense<1> : !layout.tensor<i64>
  %i2 = graph.constant dense<-1> : !layout.tensor<i64>
  %q = "graph.gather"(%x, %i0) {axis = 0 : i64} : (!layout.tensor<3x5x8xf32>, !layout.tensor<i64>) -> !layout.tensor<5x8xf32>
  %v = "graph.gather"(%x, %i2) {axis = 0 : i64} : (!layout.tensor<3x5x8xf32>, !layout.tensor<i64>) -> !layout.tensor<5x8xf32>
  %k = "graph.gather"(%x, %i1) {axis = 0 : i64} : (!layout.tensor<3x5x8xf32>, !layout.tensor<i64>) -> !layout.tensor<5x8xf32>
  func.return %q, %k, %v : !layout.tensor<5x8xf32>, !layout.tensor<5x8xf32>, !layout.tensor<5x8xf32>
}
// CHECK-LABEL: func.func @packed
// CHECK:      %[[P0:.*]], %[[P1:.*]], %[[P2:.*]] = graph.split %x, %{{.*}} {axis = 0} : (!layout.tensor<3x5x8xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<1x5x8xf32>, !layout.tensor<1x5x8xf32>, !layout.tensor<1x5x8xf32>)
// CHECK:      %q = graph.squeeze %[[P0]],
// CHECK:      %k = graph.squeeze %[[P1]],
// CHECK:      %v = graph.squeeze %[[P2]],
// CHECK-NOT:  graph.gather
// CHECK:      func.return %q, %k, %v

// -----
// Not all parts selected (x has another user), or an index twice: the gathers stay.
func.func @partial(%x: !layout.tensor<3x4xf32>) -> (!layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) {
  %i0 = graph.constant dense<0> : !layout.tensor<i64>
  %i1 = graph.constant dense<1> : !layout.tensor<i64>
  %a = "graph.gather"(%x, %i0) {axis = 0 : i64} : (!layout.tensor<3x4xf32>, !layout.tensor<i64>) -> !layout.tensor<4xf32>
  %b = "graph.gather"(%x, %i1) {axis = 0 : i64} : (!layout.tensor<3x4xf32>, !layout.tensor<i64>) -> !layout.tensor<4xf32>
  %c = "graph.gather"(%x, %i1) {axis = 0 : i64} : (!layout.tensor<3x4xf32>, !layout.tensor<i64>) -> !layout.tensor<4xf32>
  func.return %a, %b, %c : !layout.tensor<4xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>
}
// CHECK-LABEL: func.func @partial
// CHECK-NOT:  graph.split
// CHECK:      graph.gather

// -----
// slices-as-split: Phi-3's fused projection sliced into q, k and v along
// the last axis is one split, its parts in range order whatever order the slices come in.
func.func @fused_qkv(%x: !layout.tensor<2x5x16xf32>) -> (!layout.tensor<2x5x8xf32>, !layout.tensor<2x5x4xf32>, !layout.tensor<2x5x4xf32>) {
  %s0 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %s8 = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %s12 = graph.constant dense<[12]> : !layout.tensor<1xi64>
  %end = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %ax = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %v = graph.slice %x, %s12, %end, %ax : (!layout.tensor<2x5x16xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  %q = graph.slice %x, %s0, %s8, %ax : (!layout.tensor<2x5x16xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x8xf32>
  %k = graph.slice %x, %s8, %s12, %ax : (!layout.tensor<2x5x16xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x5x4xf32>
  func.return %q, %k, %v : !layout.tensor<2x5x8xf32>, !layout.tensor<2x5x4xf32>, !layout.tensor<2x5x4xf32>
}
// CHECK-LABEL: func.func @fused_qkv
// CHECK:      %q, %k, %v = graph.split %x, %{{.*}} {axis = 2} : (!layout.tensor<2x5x16xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<2x5x8xf32>, !layout.tensor<2x5x4xf32>, !layout.tensor<2x5x4xf32>)
// CHECK-NOT:  graph.slice
// CHECK:      func.return %q, %k, %v
