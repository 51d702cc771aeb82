// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @branch_types_differ(%c: !layout.tensor<i1>, %x: !layout.tensor<2xf32>) {
  %y = graph.if cond[%c] captures[%x] : (!layout.tensor<i1>, !layout.tensor<2xf32>) -> !layout.tensor<2xf32> {
  ^bb0(%a: !layout.tensor<2xf32>):
    graph.yield %a : !layout.tensor<2xf32>
  } {
  ^bb0(%b: !layout.tensor<2xf32>):
    %i = graph.cast %b {to = 7} : (!layout.tensor<2xf32>) -> !layout.tensor<2xi64>
    graph.yield %i : !layout.tensor<2xi64>
  }
  func.return
}
// CHECK: If output #0: element types f32 and i64 differ

// -----
func.func @capture_types_differ(%c: !layout.tensor<i1>, %x: !layout.tensor<2xf32>) {
  %y = graph.if cond[%c] captures[%x] : (!layout.tensor<i1>, !layout.tensor<2xf32>) -> !layout.tensor<2xf32> {
  ^bb0(%a: !layout.tensor<3xf32>):
    graph.yield %a : !layout.tensor<3xf32>
  } {
  ^bb0(%b: !layout.tensor<2xf32>):
    graph.yield %b : !layout.tensor<2xf32>
  }
  func.return
}
// CHECK: a body's trailing arguments must have the captures' types

// -----
func.func @stray_yield(%x: !layout.tensor<2xf32>) {
  graph.yield %x : !layout.tensor<2xf32>
}
// CHECK: graph.yield must be the terminator of a graph.fused or control-flow body
