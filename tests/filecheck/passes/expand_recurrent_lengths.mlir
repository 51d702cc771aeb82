// RUN: tilegraph-opt %s -p 'expand-recurrent-lengths' | filecheck %s

// Forward: the layer without sequence_lens; Y kept where t < len[b] (a [T, B, 1] mask
// from the step numbers 0..2), Y_h row 0 of ReverseSequence(Y) (the step len[b] - 1),
// zero where len[b] = 0.
// CHECK-LABEL: func.func @forward
// CHECK:       %[[ZERO:.*]] = graph.constant dense<0.0> : !layout.tensor<f32>
// CHECK:       %[[LENS:.*]] = graph.unsqueeze %lens, {{.*}} -> !layout.tensor<1x2x1xi32>
// CHECK:       %[[STEPS:.*]] = graph.constant dense<{{\[\[\[}}0]], {{\[\[}}1]], {{\[\[}}2]]]> : !layout.tensor<3x1x1xi32>
// CHECK:       %[[VALID:.*]] = graph.less %[[STEPS]], %[[LENS]] {{.*}} -> !layout.tensor<3x2x1xi1>
// CHECK:       %[[STARTED:.*]] = graph.greater %[[LENS]], %{{.*}} -> !layout.tensor<1x2x1xi1>
// CHECK:       %[[Y1:.*]], %{{.*}} = graph.rnn %X, %W, %R {direction = "forward", hidden_size = 8}
// CHECK:       %[[Y3:.*]] = graph.squeeze %[[Y1]], {{.*}} -> !layout.tensor<3x2x8xf32>
// CHECK:       %[[BACK:.*]] = graph.reverse_sequence %[[Y3]], %lens {batch_axis = 1, time_axis = 0}
// CHECK:       %[[KEPT:.*]] = graph.where %[[VALID]], %[[Y3]], %[[ZERO]]
// CHECK:       %Y = graph.unsqueeze %[[KEPT]], {{.*}} -> !layout.tensor<3x1x2x8xf32>
// CHECK:       %[[LAST:.*]] = graph.slice %[[BACK]], {{.*}} -> !layout.tensor<1x2x8xf32>
// CHECK:       %Y_h = graph.where %[[STARTED]], %[[LAST]], %[[ZERO]]
// CHECK:       func.return %Y, %Y_h
func.func @forward(%X: !layout.tensor<3x2x4xf32>, %lens: !layout.tensor<2xi32>) -> (!layout.tensor<3x1x2x8xf32>, !layout.tensor<1x2x8xf32>) {
  %W = graph.constant dense<0.5> : !layout.tensor<1x8x4xf32>
  %R = graph.constant dense<0.25> : !layout.tensor<1x8x8xf32>
  %Y, %Y_h = graph.rnn %X, %W, %R, none, %lens, none {hidden_size = 8} : (!layout.tensor<3x2x4xf32>, !layout.tensor<1x8x4xf32>, !layout.tensor<1x8x8xf32>, !layout.tensor<2xi32>) -> (!layout.tensor<3x1x2x8xf32>, !layout.tensor<1x2x8xf32>)
  func.return %Y, %Y_h : !layout.tensor<3x1x2x8xf32>, !layout.tensor<1x2x8xf32>
}

// Bidirectional: two forward layers on each direction's weights; the second reads
// ReverseSequence(X) and its Y is reversed back (kept by the same mask); Y and Y_h
// concatenated on the direction axis.
// CHECK-LABEL: func.func @bidirectional
// CHECK:       %[[WF:.*]] = graph.slice %W, {{.*}} -> !layout.tensor<1x24x4xf32>
// CHECK:       %[[YF:.*]], %{{.*}} = graph.gru %X, %[[WF]], {{.*}} {direction = "forward", hidden_size = 8, linear_before_reset = 1}
// CHECK:       %[[XR:.*]] = graph.reverse_sequence %X, %lens {batch_axis = 1, time_axis = 0}
// CHECK:       %[[WR:.*]] = graph.slice %W, {{.*}} -> !layout.tensor<1x24x4xf32>
// CHECK:       %[[YR:.*]], %{{.*}} = graph.gru %[[XR]], %[[WR]], {{.*}} {direction = "forward"
// CHECK:       %[[YR3:.*]] = graph.squeeze %[[YR]]
// CHECK:       %[[BACK:.*]] = graph.reverse_sequence %[[YR3]], %lens
// CHECK:       graph.where %{{.*}}, %[[BACK]], %{{.*}}
// CHECK:       %Y = graph.concat %{{.*}}, %{{.*}} {axis = 1} {{.*}} -> !layout.tensor<3x2x2x8xf32>
// CHECK:       %Y_h = graph.concat %{{.*}}, %{{.*}} {axis = 0} {{.*}} -> !layout.tensor<2x2x8xf32>
// CHECK-NOT:   graph.gru {{.*}}%lens
func.func @bidirectional(%X: !layout.tensor<3x2x4xf32>, %lens: !layout.tensor<2xi32>) -> (!layout.tensor<3x2x2x8xf32>, !layout.tensor<2x2x8xf32>) {
  %W = graph.constant dense<0.5> : !layout.tensor<2x24x4xf32>
  %R = graph.constant dense<0.25> : !layout.tensor<2x24x8xf32>
  %Y, %Y_h = graph.gru %X, %W, %R, none, %lens, none {hidden_size = 8, direction = "bidirectional", linear_before_reset = 1} : (!layout.tensor<3x2x4xf32>, !layout.tensor<2x24x4xf32>, !layout.tensor<2x24x8xf32>, !layout.tensor<2xi32>) -> (!layout.tensor<3x2x2x8xf32>, !layout.tensor<2x2x8xf32>)
  func.return %Y, %Y_h : !layout.tensor<3x2x2x8xf32>, !layout.tensor<2x2x8xf32>
}

// An LSTM whose final cell state is used: the layer is graph.lstm_cells, whose fourth
// result holds c after each step; Y_c is its row at step len[b] - 1 (ReverseSequence, row
// 0), zero where len[b] = 0, as Y_h would be taken from Y. Y and Y_h unused: no
// ReverseSequence of Y, no mask of Y.
// CHECK-LABEL: func.func @cell_state_used
// CHECK:       %[[ZERO:.*]] = graph.constant dense<0.0>
// CHECK:       %[[STARTED:.*]] = graph.greater
// CHECK-NOT:   graph.less
// CHECK:       %{{.*}}, %{{.*}}, %{{.*}}, %[[C1:.*]] = graph.lstm_cells %X, %W, %R {direction = "forward", hidden_size = 8{{.*}}} {{.*}} -> (!layout.tensor<3x1x2x8xf32>, !layout.tensor<1x2x8xf32>, !layout.tensor<1x2x8xf32>, !layout.tensor<3x1x2x8xf32>)
// CHECK:       %[[C3:.*]] = graph.squeeze %[[C1]], {{.*}} -> !layout.tensor<3x2x8xf32>
// CHECK:       %[[BACK:.*]] = graph.reverse_sequence %[[C3]], %lens {batch_axis = 1, time_axis = 0}
// CHECK:       %[[LAST:.*]] = graph.slice %[[BACK]], {{.*}} -> !layout.tensor<1x2x8xf32>
// CHECK:       %Y_c = graph.where %[[STARTED]], %[[LAST]], %[[ZERO]]
// CHECK:       func.return %Y_c
// CHECK-NOT:   graph.lstm {{.*}}%lens
func.func @cell_state_used(%X: !layout.tensor<3x2x4xf32>, %lens: !layout.tensor<2xi32>) -> (!layout.tensor<1x2x8xf32>) {
  %W = graph.constant dense<0.5> : !layout.tensor<1x32x4xf32>
  %R = graph.constant dense<0.25> : !layout.tensor<1x32x8xf32>
  %Y, %Y_h, %Y_c = graph.lstm %X, %W, %R, none, %lens, none, none, none {hidden_size = 8} : (!layout.tensor<3x2x4xf32>, !layout.tensor<1x32x4xf32>, !layout.tensor<1x32x8xf32>, !layout.tensor<2xi32>) -> (!layout.tensor<3x1x2x8xf32>, !layout.tensor<1x2x8xf32>, !layout.tensor<1x2x8xf32>)
  func.return %Y_c : !layout.tensor<1x2x8xf32>
}

// A sequence of unknown length: the step numbers are Range(0, Shape(X)[0]), cast to the
// lengths' type, their column typed with X's dim T (Range's length is unknown to shape
// inference), so Y keeps its type.
// CHECK-LABEL: func.func @symbolic
// CHECK:       %[[T:.*]] = graph.shape %X {start = 0, end = 1}
// CHECK:       %[[N:.*]] = graph.squeeze %[[T]]
// CHECK:       %[[STEPS:.*]] = graph.range %{{.*}}, %[[N]], %{{.*}} : {{.*}} -> !layout.tensor<?xi64>
// CHECK:       %[[CAST:.*]] = graph.cast %[[STEPS]] {to = 6}
// CHECK:       %[[COLUMN:.*]] = graph.unsqueeze %[[CAST]], {{.*}} -> !layout.tensor<[T, 1, 1], i32>
// CHECK:       graph.less %[[COLUMN]], %{{.*}} -> !layout.tensor<[T, 2, 1], i1>
// CHECK:       graph.rnn %X, %W, %R {direction = "forward", hidden_size = 8}
func.func @symbolic(%X: !layout.tensor<[T, 2, 4], f32>, %lens: !layout.tensor<2xi32>) -> (!layout.tensor<[T, 1, 2, 8], f32>, !layout.tensor<1x2x8xf32>) {
  %W = graph.constant dense<0.5> : !layout.tensor<1x8x4xf32>
  %R = graph.constant dense<0.25> : !layout.tensor<1x8x8xf32>
  %Y, %Y_h = graph.rnn %X, %W, %R, none, %lens, none {hidden_size = 8} : (!layout.tensor<[T, 2, 4], f32>, !layout.tensor<1x8x4xf32>, !layout.tensor<1x8x8xf32>, !layout.tensor<2xi32>) -> (!layout.tensor<[T, 1, 2, 8], f32>, !layout.tensor<1x2x8xf32>)
  func.return %Y, %Y_h : !layout.tensor<[T, 1, 2, 8], f32>, !layout.tensor<1x2x8xf32>
}

// A forward layer whose Y_h is not read: no ReverseSequence, no final-state select.
// CHECK-LABEL: func.func @y_only
// CHECK:       graph.rnn %X, %W, %R {direction = "forward", hidden_size = 8}
// CHECK-NOT:   graph.reverse_sequence
// CHECK-NOT:   graph.greater
// CHECK:       %Y = graph.unsqueeze
func.func @y_only(%X: !layout.tensor<3x2x4xf32>, %lens: !layout.tensor<2xi32>) -> (!layout.tensor<3x1x2x8xf32>) {
  %W = graph.constant dense<0.5> : !layout.tensor<1x8x4xf32>
  %R = graph.constant dense<0.25> : !layout.tensor<1x8x8xf32>
  %Y, %Y_h = graph.rnn %X, %W, %R, none, %lens, none {hidden_size = 8} : (!layout.tensor<3x2x4xf32>, !layout.tensor<1x8x4xf32>, !layout.tensor<1x8x8xf32>, !layout.tensor<2xi32>) -> (!layout.tensor<3x1x2x8xf32>, !layout.tensor<1x2x8xf32>)
  func.return %Y : !layout.tensor<3x1x2x8xf32>
}
