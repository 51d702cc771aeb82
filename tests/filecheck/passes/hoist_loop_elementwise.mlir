// RUN: tilegraph-opt %s -p 'hoist-loop-elementwise' | filecheck %s

// tf2onnx's masked step: Cast(Not(m_t)) and Cast(m_t) of row %i of the captured mask.
// Both become rows of the ops of the whole mask, computed once before the loop; the
// mask itself and Not(mask) are no longer read in the body and no longer captured.
// CHECK-LABEL: func.func @masked
// CHECK:       %keep_rows = graph.not %mask : !layout.tensor<4x2x1xi1>
// CHECK-NEXT:  %keep_f_rows = graph.cast %keep_rows {to = 1} : (!layout.tensor<4x2x1xi1>) -> !layout.tensor<4x2x1xf32>
// CHECK:       %m_f_rows = graph.cast %mask {to = 1} : (!layout.tensor<4x2x1xi1>) -> !layout.tensor<4x2x1xf32>
// CHECK:       graph.loop max_trip_count[%M] condition[%cond0] initial[%h0] captures[%keep_f_rows, %m_f_rows]
// CHECK:       ^bb0(%i: !layout.tensor<i64>, %cond_in: !layout.tensor<i1>, %h_in: !layout.tensor<2x3xf32>, %keep_f_rows_1: !layout.tensor<4x2x1xf32>, %m_f_rows_1: !layout.tensor<4x2x1xf32>):
// CHECK-NOT:   graph.not
// CHECK-NOT:   graph.cast
// CHECK:       %keep_f = graph.gather %keep_f_rows_1, %i {axis = 0}
// CHECK:       %m_f = graph.gather %m_f_rows_1, %i {axis = 0}
// CHECK:       graph.yield
func.func @masked(%mask: !layout.tensor<4x2x1xi1>, %h0: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %M = graph.constant dense<4> : !layout.tensor<i64>
  %cond0 = graph.constant dense<true> : !layout.tensor<i1>
  %h_final = graph.loop max_trip_count[%M] condition[%cond0] initial[%h0] captures[%mask] : (!layout.tensor<i64>, !layout.tensor<i1>, !layout.tensor<2x3xf32>, !layout.tensor<4x2x1xi1>) -> (!layout.tensor<2x3xf32>) {
  ^bb0(%i: !layout.tensor<i64>, %cond_in: !layout.tensor<i1>, %h_in: !layout.tensor<2x3xf32>, %mask_1: !layout.tensor<4x2x1xi1>):
    %m_t = graph.gather %mask_1, %i {axis = 0} : (!layout.tensor<4x2x1xi1>, !layout.tensor<i64>) -> !layout.tensor<2x1xi1>
    %keep = graph.not %m_t : !layout.tensor<2x1xi1>
    %keep_f = graph.cast %keep {to = 1} : (!layout.tensor<2x1xi1>) -> !layout.tensor<2x1xf32>
    %m_f = graph.cast %m_t {to = 1} : (!layout.tensor<2x1xi1>) -> !layout.tensor<2x1xf32>
    %kept = graph.mul %keep_f, %h_in : (!layout.tensor<2x1xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
    %moved = graph.mul %m_f, %h_in : (!layout.tensor<2x1xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
    %h_out = graph.add %kept, %moved : !layout.tensor<2x3xf32>
    %cond_out = graph.identity %cond_in : !layout.tensor<i1>
    graph.yield %cond_out, %h_out : !layout.tensor<i1>, !layout.tensor<2x3xf32>
  }
  func.return %h_final : !layout.tensor<2x3xf32>
}

// Row T - 1 - i is not the counter's row: left alone.
// CHECK-LABEL: func.func @reversed
// CHECK:       graph.loop
// CHECK:       %m_t = graph.gather %mask_1, %row {axis = 0}
// CHECK-NEXT:  %m_f = graph.cast %m_t
func.func @reversed(%mask: !layout.tensor<4x2x1xi1>, %h0: !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32> {
  %M = graph.constant dense<4> : !layout.tensor<i64>
  %cond0 = graph.constant dense<true> : !layout.tensor<i1>
  %h_final = graph.loop max_trip_count[%M] condition[%cond0] initial[%h0] captures[%mask] : (!layout.tensor<i64>, !layout.tensor<i1>, !layout.tensor<2x3xf32>, !layout.tensor<4x2x1xi1>) -> (!layout.tensor<2x3xf32>) {
  ^bb0(%i: !layout.tensor<i64>, %cond_in: !layout.tensor<i1>, %h_in: !layout.tensor<2x3xf32>, %mask_1: !layout.tensor<4x2x1xi1>):
    %last = graph.constant dense<3> : !layout.tensor<i64>
    %row = graph.sub %last, %i : !layout.tensor<i64>
    %m_t = graph.gather %mask_1, %row {axis = 0} : (!layout.tensor<4x2x1xi1>, !layout.tensor<i64>) -> !layout.tensor<2x1xi1>
    %m_f = graph.cast %m_t {to = 1} : (!layout.tensor<2x1xi1>) -> !layout.tensor<2x1xf32>
    %h_out = graph.mul %m_f, %h_in : (!layout.tensor<2x1xf32>, !layout.tensor<2x3xf32>) -> !layout.tensor<2x3xf32>
    %cond_out = graph.identity %cond_in : !layout.tensor<i1>
    graph.yield %cond_out, %h_out : !layout.tensor<i1>, !layout.tensor<2x3xf32>
  }
  func.return %h_final : !layout.tensor<2x3xf32>
}
