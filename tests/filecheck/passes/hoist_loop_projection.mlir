// RUN: tilegraph-opt %s -p 'hoist-loop-projection' | filecheck %s

// Row %i of the captured %xs times the captured %W: the product of all rows is computed
// once before the loop and the body gathers its row %i (a new trailing capture). The
// product is one matrix of all 4 x 2 rows, reshaped back (batched, each slice's 2 rows
// would be padded to a cube fractal of 16).
// CHECK-LABEL: func.func @hoisted
// CHECK:       %[[FLAT:.*]] = graph.constant dense<[8, 5]> : !layout.tensor<2xi64>
// CHECK-NEXT:  %[[ROWS:.*]] = graph.reshape %xs, %[[FLAT]] : (!layout.tensor<4x2x5xf32>, !layout.tensor<2xi64>) -> !layout.tensor<8x5xf32>
// CHECK-NEXT:  %y_t_rows_flat = graph.matmul %[[ROWS]], %W : (!layout.tensor<8x5xf32>, !layout.tensor<5x3xf32>) -> !layout.tensor<8x3xf32>
// CHECK-NEXT:  %[[BACK:.*]] = graph.constant dense<[4, 2, 3]> : !layout.tensor<3xi64>
// CHECK-NEXT:  %y_t_rows = graph.reshape %y_t_rows_flat, %[[BACK]] : (!layout.tensor<8x3xf32>, !layout.tensor<3xi64>) -> !layout.tensor<4x2x3xf32>
// CHECK:       graph.loop max_trip_count[%M] condition[%cond0] initial[%s0] captures[%xs, %W, %y_t_rows]
// CHECK:       ^bb0(%i: !layout.tensor<i64>, {{.*}}, %y_t_rows_1: !layout.tensor<4x2x3xf32>):
// CHECK-NOT:   graph.matmul
// CHECK-NOT:   graph.gather %xs_1
// CHECK:       %y_t = graph.gather %y_t_rows_1, %i {axis = 0} : (!layout.tensor<4x2x3xf32>, !layout.tensor<i64>) -> !layout.tensor<2x3xf32>
// CHECK:       graph.yield %cond_out, %s_out, %y_t
func.func @hoisted(%xs: !layout.tensor<4x2x5xf32>) -> !layout.tensor<?x2x3xf32> {
  %M = graph.constant dense<4> : !layout.tensor<i64>
  %cond0 = graph.constant dense<true> : !layout.tensor<i1>
  %s0 = graph.constant dense<1.0> : !layout.tensor<f32>
  %W = graph.constant dense<0.5> : !layout.tensor<5x3xf32>
  %s_final, %ys = graph.loop max_trip_count[%M] condition[%cond0] initial[%s0] captures[%xs, %W] : (!layout.tensor<i64>, !layout.tensor<i1>, !layout.tensor<f32>, !layout.tensor<4x2x5xf32>, !layout.tensor<5x3xf32>) -> (!layout.tensor<f32>, !layout.tensor<?x2x3xf32>) {
  ^bb0(%i: !layout.tensor<i64>, %cond_in: !layout.tensor<i1>, %s_in: !layout.tensor<f32>, %xs_1: !layout.tensor<4x2x5xf32>, %W_1: !layout.tensor<5x3xf32>):
    %two = graph.constant dense<2.0> : !layout.tensor<f32>
    %s_out = graph.mul %s_in, %two : !layout.tensor<f32>
    %cond_out = graph.identity %cond_in : !layout.tensor<i1>
    %x_t = graph.gather %xs_1, %i {axis = 0} : (!layout.tensor<4x2x5xf32>, !layout.tensor<i64>) -> !layout.tensor<2x5xf32>
    %y_t = graph.matmul %x_t, %W_1 : (!layout.tensor<2x5xf32>, !layout.tensor<5x3xf32>) -> !layout.tensor<2x3xf32>
    graph.yield %cond_out, %s_out, %y_t : !layout.tensor<i1>, !layout.tensor<f32>, !layout.tensor<2x3xf32>
  }
  func.return %ys : !layout.tensor<?x2x3xf32>
}

// The gathered data is computed in the body (%xs scaled by a carried value): it differs
// from one iteration to the next, the product stays in the body.
// CHECK-LABEL: func.func @data_of_the_iteration
// CHECK:       graph.loop
// CHECK:       %x_t = graph.gather %scaled, %i
// CHECK:       %y_t = graph.matmul %x_t, %W_1
func.func @data_of_the_iteration(%xs: !layout.tensor<4x2x5xf32>) -> !layout.tensor<?x2x3xf32> {
  %M = graph.constant dense<4> : !layout.tensor<i64>
  %cond0 = graph.constant dense<true> : !layout.tensor<i1>
  %s0 = graph.constant dense<1.0> : !layout.tensor<f32>
  %W = graph.constant dense<0.5> : !layout.tensor<5x3xf32>
  %s_final, %ys = graph.loop max_trip_count[%M] condition[%cond0] initial[%s0] captures[%xs, %W] : (!layout.tensor<i64>, !layout.tensor<i1>, !layout.tensor<f32>, !layout.tensor<4x2x5xf32>, !layout.tensor<5x3xf32>) -> (!layout.tensor<f32>, !layout.tensor<?x2x3xf32>) {
  ^bb0(%i: !layout.tensor<i64>, %cond_in: !layout.tensor<i1>, %s_in: !layout.tensor<f32>, %xs_1: !layout.tensor<4x2x5xf32>, %W_1: !layout.tensor<5x3xf32>):
    %two = graph.constant dense<2.0> : !layout.tensor<f32>
    %s_out = graph.mul %s_in, %two : !layout.tensor<f32>
    %scaled = graph.mul %xs_1, %s_in : (!layout.tensor<4x2x5xf32>, !layout.tensor<f32>) -> !layout.tensor<4x2x5xf32>
    %cond_out = graph.identity %cond_in : !layout.tensor<i1>
    %x_t = graph.gather %scaled, %i {axis = 0} : (!layout.tensor<4x2x5xf32>, !layout.tensor<i64>) -> !layout.tensor<2x5xf32>
    %y_t = graph.matmul %x_t, %W_1 : (!layout.tensor<2x5xf32>, !layout.tensor<5x3xf32>) -> !layout.tensor<2x3xf32>
    graph.yield %cond_out, %s_out, %y_t : !layout.tensor<i1>, !layout.tensor<f32>, !layout.tensor<2x3xf32>
  }
  func.return %ys : !layout.tensor<?x2x3xf32>
}
