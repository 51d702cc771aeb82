// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=if-as-where},dce' --split-input-file | filecheck %s

// if-as-where: a cascade (run a second scorer only when the first passes a threshold, as
// openWakeWord's verifier models do) computes both branches and selects.
func.func @cascade(%x: !layout.tensor<1x4xf32>, %w: !layout.tensor<4x1xf32>, %p: !layout.tensor<1x1xf32>) -> !layout.tensor<1x1xf32> {
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %c = graph.greater_or_equal %p, %half : (!layout.tensor<1x1xf32>, !layout.tensor<f32>) -> !layout.tensor<1x1xi1>
  %y = graph.if cond[%c] captures[%x, %w, %p] : (!layout.tensor<1x1xi1>, !layout.tensor<1x4xf32>, !layout.tensor<4x1xf32>, !layout.tensor<1x1xf32>) -> !layout.tensor<1x1xf32> {
  ^bb0(%x_1: !layout.tensor<1x4xf32>, %w_1: !layout.tensor<4x1xf32>, %p_1: !layout.tensor<1x1xf32>):
    %m = graph.matmul %x_1, %w_1 : (!layout.tensor<1x4xf32>, !layout.tensor<4x1xf32>) -> !layout.tensor<1x1xf32>
    %s = graph.sigmoid %m : !layout.tensor<1x1xf32>
    graph.yield %s : !layout.tensor<1x1xf32>
  } {
  ^bb0(%x_2: !layout.tensor<1x4xf32>, %w_2: !layout.tensor<4x1xf32>, %p_2: !layout.tensor<1x1xf32>):
    graph.yield %p_2 : !layout.tensor<1x1xf32>
  }
  func.return %y : !layout.tensor<1x1xf32>
}
// CHECK-LABEL: func.func @cascade
// CHECK:         %[[C:.*]] = graph.greater_or_equal %p
// CHECK:         %[[M:.*]] = graph.matmul %x, %w
// CHECK:         %[[S:.*]] = graph.sigmoid %[[M]]
// CHECK:         %y = graph.where %[[C]], %[[S]], %p
// CHECK-NOT:     graph.if
