// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=sequence-at-of-split},dce' --split-input-file | filecheck %s

// sequence-at-of-split: torch.unbind then indexing (Pixtral's patch embeddings per image,
// the batch dynamic): each SequenceAt of a constant position is a Gather of that slice
// (keepdims 0: the axis dropped; -1 counts from the end), and the sequence goes.
func.func @unbind(%x: !layout.tensor<?x4x3xf32>) -> (!layout.tensor<4x3xf32>, !layout.tensor<4x3xf32>) {
  %s = graph.split_to_sequence %x {axis = 0 : i64, keepdims = 0 : i64} : (!layout.tensor<?x4x3xf32>) -> !graph.seq<!layout.tensor<4x3xf32>>
  %p0 = graph.constant dense<0> : !layout.tensor<i64>
  %pl = graph.constant dense<-1> : !layout.tensor<i64>
  %a = graph.sequence_at %s, %p0 : (!graph.seq<!layout.tensor<4x3xf32>>, !layout.tensor<i64>) -> !layout.tensor<4x3xf32>
  %b = graph.sequence_at %s, %pl : (!graph.seq<!layout.tensor<4x3xf32>>, !layout.tensor<i64>) -> !layout.tensor<4x3xf32>
  func.return %a, %b : !layout.tensor<4x3xf32>, !layout.tensor<4x3xf32>
}
// CHECK-LABEL: func.func @unbind
// CHECK-NOT:     graph.split_to_sequence
// CHECK:         %a = graph.gather %x, %{{.*}} {axis = 0} : (!layout.tensor<?x4x3xf32>, !layout.tensor<i64>) -> !layout.tensor<4x3xf32>
// CHECK:         %b = graph.gather %x, %{{.*}} {axis = 0} : (!layout.tensor<?x4x3xf32>, !layout.tensor<i64>) -> !layout.tensor<4x3xf32>
// CHECK-NOT:     graph.sequence_at

// -----
// keepdims 1 (the default) keeps the axis as 1: a Gather by a one-element index.
func.func @keep(%x: !layout.tensor<2x5xf32>) -> !layout.tensor<2x1xf32> {
  %s = graph.split_to_sequence %x {axis = 1 : i64} : (!layout.tensor<2x5xf32>) -> !graph.seq<!layout.tensor<2x1xf32>>
  %p = graph.constant dense<3> : !layout.tensor<i64>
  %a = graph.sequence_at %s, %p : (!graph.seq<!layout.tensor<2x1xf32>>, !layout.tensor<i64>) -> !layout.tensor<2x1xf32>
  func.return %a : !layout.tensor<2x1xf32>
}
// CHECK-LABEL: func.func @keep
// CHECK:         %[[I:.*]] = graph.constant dense<[3]> : !layout.tensor<1xi64>
// CHECK:         %a = graph.gather %x, %[[I]] {axis = 1} : (!layout.tensor<2x5xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x1xf32>

// -----
// Split sizes, or a position computed at run time: left as they are.
func.func @kept(%x: !layout.tensor<6x2xf32>, %p: !layout.tensor<i64>) -> (!layout.tensor<?x2xf32>, !layout.tensor<1x2xf32>) {
  %n = graph.constant dense<[2, 4]> : !layout.tensor<2xi64>
  %s = graph.split_to_sequence %x, %n {axis = 0 : i64} : (!layout.tensor<6x2xf32>, !layout.tensor<2xi64>) -> !graph.seq<!layout.tensor<?x2xf32>>
  %z = graph.constant dense<0> : !layout.tensor<i64>
  %a = graph.sequence_at %s, %z : (!graph.seq<!layout.tensor<?x2xf32>>, !layout.tensor<i64>) -> !layout.tensor<?x2xf32>
  %t = graph.split_to_sequence %x {axis = 0 : i64} : (!layout.tensor<6x2xf32>) -> !graph.seq<!layout.tensor<1x2xf32>>
  %b = graph.sequence_at %t, %p : (!graph.seq<!layout.tensor<1x2xf32>>, !layout.tensor<i64>) -> !layout.tensor<1x2xf32>
  func.return %a, %b : !layout.tensor<?x2xf32>, !layout.tensor<1x2xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: graph.sequence_at
// CHECK-NOT:     graph.gather
