// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels' | filecheck %s

// Loops that stay host kernels, each with the reason (lowering/conversion/loop_launches.py).

// The condition is computed from data (the sum of h), not a counter's bound.
func.func @data_condition(%h0: !layout.tensor<2x16xf32>) -> !layout.tensor<2x16xf32> {
  %go = graph.constant dense<true> : !layout.tensor<i1>
  %h = graph.loop condition[%go] initial[%h0] : (!layout.tensor<i1>, !layout.tensor<2x16xf32>) -> !layout.tensor<2x16xf32> {
  ^bb0(%i: !layout.tensor<i64>, %c: !layout.tensor<i1>, %h_in: !layout.tensor<2x16xf32>):
    %h_out = graph.tanh %h_in : !layout.tensor<2x16xf32>
    %s = graph.reduce_sum %h_out {keepdims = 0} : (!layout.tensor<2x16xf32>) -> !layout.tensor<f32>
    %lim = graph.constant dense<1.0> : !layout.tensor<f32>
    %more = graph.less %s, %lim : (!layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<i1>
    graph.yield %more, %h_out : !layout.tensor<i1>, !layout.tensor<2x16xf32>
  }
  func.return %h : !layout.tensor<2x16xf32>
}
// CHECK-LABEL: func.func @data_condition(
// CHECK-NOT:     tile.loop_launches
// CHECK:         tile.launch @[[DATA:[a-z_0-9]+]](
// CHECK:       func.func @[[DATA]]({{.*}}tile.host_reason = "a Loop whose condition is computed from data (not a counter's bound)"

// A loop in a loop's body: the inner one would be a device loop, nesting is not built.
func.func @nested(%h0: !layout.tensor<2x16xf32>) -> !layout.tensor<2x16xf32> {
  %n = graph.constant dense<3> : !layout.tensor<i64>
  %h = graph.loop max_trip_count[%n] initial[%h0] : (!layout.tensor<i64>, !layout.tensor<2x16xf32>) -> !layout.tensor<2x16xf32> {
  ^bb0(%i: !layout.tensor<i64>, %c: !layout.tensor<i1>, %h_in: !layout.tensor<2x16xf32>):
    %m = graph.constant dense<2> : !layout.tensor<i64>
    %g = graph.loop max_trip_count[%m] initial[%h_in] : (!layout.tensor<i64>, !layout.tensor<2x16xf32>) -> !layout.tensor<2x16xf32> {
    ^bb0(%j: !layout.tensor<i64>, %d: !layout.tensor<i1>, %g_in: !layout.tensor<2x16xf32>):
      %g_out = graph.tanh %g_in : !layout.tensor<2x16xf32>
      graph.yield %d, %g_out : !layout.tensor<i1>, !layout.tensor<2x16xf32>
    }
    graph.yield %c, %g : !layout.tensor<i1>, !layout.tensor<2x16xf32>
  }
  func.return %h : !layout.tensor<2x16xf32>
}
// CHECK-LABEL: func.func @nested(
// CHECK-NOT:     tile.loop_launches
// CHECK:         tile.launch @[[NESTED:[a-z_0-9]+]](
// CHECK:       func.func @[[NESTED]]({{.*}}tile.host_reason = "a Loop whose body holds a tile.loop_launches (nested device loops are not built)"
