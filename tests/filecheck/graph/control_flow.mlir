// RUN: TILEGRAPH_ROUNDTRIP
// RUN: TILEGRAPH_GENERIC_ROUNDTRIP
// RUN: tilegraph-opt %s -p O2 | filecheck %s --check-prefix=O2

// graph.if with captures: each branch receives the captured values as block arguments.
func.func @select(%c: !layout.tensor<i1>, %x: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %y = graph.if cond[%c] captures[%x] : (!layout.tensor<i1>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  ^bb0(%x_1: !layout.tensor<2x3xf32>):
    %r = graph.relu %x_1 : !layout.tensor<2x3xf32>
    graph.yield %r : !layout.tensor<2x3xf32>
  } {
  ^bb0(%x_2: !layout.tensor<2x3xf32>):
    graph.yield %x_2 : !layout.tensor<2x3xf32>
  }
  func.return %y : !layout.tensor<2x3xf32>
}
// CHECK-LABEL: func.func @select
// CHECK:      %y = graph.if cond[%c] captures[%x] : (!layout.tensor<i1>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
// CHECK-NEXT: ^bb0(%x_1: !layout.tensor<2x3xf32>):
// CHECK-NEXT:   %r = graph.relu %x_1 : !layout.tensor<2x3xf32>
// CHECK-NEXT:   graph.yield %r : !layout.tensor<2x3xf32>
// CHECK-NEXT: } {
// CHECK-NEXT: ^bb0(%x_2: !layout.tensor<2x3xf32>):
// CHECK-NEXT:   graph.yield %x_2 : !layout.tensor<2x3xf32>
// CHECK-NEXT: }
// GENERIC: "graph.if"(%{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1>}> ({

// graph.loop: no condition operand; the scan output's length is only known at run time.
func.func @accumulate(%n: !layout.tensor<i64>, %a: !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<?x3xf32>) {
  %acc, %all = graph.loop max_trip_count[%n] initial[%a] : (!layout.tensor<i64>, !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<?x3xf32>) {
  ^bb0(%i: !layout.tensor<i64>, %go: !layout.tensor<i1>, %v: !layout.tensor<3xf32>):
    %w = graph.add %v, %v : !layout.tensor<3xf32>
    graph.yield %go, %w, %w : !layout.tensor<i1>, !layout.tensor<3xf32>, !layout.tensor<3xf32>
  }
  func.return %acc, %all : !layout.tensor<3xf32>, !layout.tensor<?x3xf32>
}
// CHECK-LABEL: func.func @accumulate
// CHECK: %acc, %all = graph.loop max_trip_count[%n] initial[%a] : (!layout.tensor<i64>, !layout.tensor<3xf32>) -> (!layout.tensor<3xf32>, !layout.tensor<?x3xf32>) {

// Sequences are values too: !graph.seq<element tensor type>.
func.func @sequences(%x: !layout.tensor<3x4xf32>) -> !layout.tensor<?x4xf32> {
  %s = graph.split_to_sequence %x {keepdims = 1} : (!layout.tensor<3x4xf32>) -> !graph.seq<!layout.tensor<1x4xf32>>
  %n = graph.sequence_length %s : (!graph.seq<!layout.tensor<1x4xf32>>) -> !layout.tensor<i64>
  %y = graph.concat_from_sequence %s {axis = 0} : (!graph.seq<!layout.tensor<1x4xf32>>) -> !layout.tensor<?x4xf32>
  func.return %y : !layout.tensor<?x4xf32>
}
// CHECK-LABEL: func.func @sequences
// CHECK: graph.split_to_sequence %x {keepdims = 1} : (!layout.tensor<3x4xf32>) -> !graph.seq<!layout.tensor<1x4xf32>>

// O2 optimises around control flow; an If of small branches on a run-time condition
// becomes both branches and a Where (if-as-where), fused into one kernel.
// O2-LABEL: func.func @select
// O2-NOT:     graph.if
// O2:         %r = graph.relu %x_1
// O2:         graph.where %c_1, %r, %x_1
// O2-LABEL: func.func @sequences
// O2:         graph.concat_from_sequence
