// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},hoist-recurrent-projection' | filecheck %s

// A bidirectional LSTM of hidden 512 over an input of 512 (ddddocr's): on 910B its W
// (2 x 2048 x 512) does not fit L1 beside R, so every step would stream it. The input
// projection of all 6 steps is one matmul of 6 x 2 = 12 rows by W's transpose as
// [512, 2 x 4 x 512], its result [6, 2, 4096] the layer's X; the layer has no W.
// CHECK-LABEL: func.func @streaming
// CHECK:       %[[WT:.*]] = graph.transpose %W {perm = [2, 0, 1]} {{.*}} -> !layout.tensor<512x2x2048xf32>
// CHECK:       %[[WM:.*]] = graph.reshape %[[WT]], {{.*}} -> !layout.tensor<512x4096xf32>
// CHECK:       %[[ROWS:.*]] = graph.reshape %X, {{.*}} -> !layout.tensor<12x512xf32>
// CHECK:       %[[G:.*]] = graph.matmul %[[ROWS]], %[[WM]] {{.*}} -> !layout.tensor<12x4096xf32>
// CHECK:       %[[G3:.*]] = graph.reshape %[[G]], {{.*}} -> !layout.tensor<6x2x4096xf32>
// CHECK:       %Y, %Y_h, %Y_c = graph.lstm %[[G3]], none, %R {direction = "bidirectional", hidden_size = 512}
// CHECK-NOT:   graph.lstm %X
func.func @streaming(%X: !layout.tensor<6x2x512xf32>) -> (!layout.tensor<6x2x2x512xf32>) {
  %W = graph.constant dense<0.01> : !layout.tensor<2x2048x512xf32>
  %R = graph.constant dense<0.02> : !layout.tensor<2x2048x512xf32>
  %Y, %Y_h, %Y_c = graph.lstm %X, %W, %R, none, none, none, none, none {hidden_size = 512, direction = "bidirectional"} : (!layout.tensor<6x2x512xf32>, !layout.tensor<2x2048x512xf32>, !layout.tensor<2x2048x512xf32>) -> (!layout.tensor<6x2x2x512xf32>, !layout.tensor<2x2x512xf32>, !layout.tensor<2x2x512xf32>)
  func.return %Y : !layout.tensor<6x2x2x512xf32>
}

// A GRU of hidden 20 over an input of 12: W fits L1 beside R, the step's x_t matmul
// stays (hoisting would save little and cost a launch).
// CHECK-LABEL: func.func @resident
// CHECK-NOT:   graph.matmul
// CHECK:       graph.gru %X, %W, %R
func.func @resident(%X: !layout.tensor<6x2x12xf32>) -> (!layout.tensor<6x1x2x20xf32>) {
  %W = graph.constant dense<0.01> : !layout.tensor<1x60x12xf32>
  %R = graph.constant dense<0.02> : !layout.tensor<1x60x20xf32>
  %Y, %Y_h = graph.gru %X, %W, %R, none, none, none {hidden_size = 20} : (!layout.tensor<6x2x12xf32>, !layout.tensor<1x60x12xf32>, !layout.tensor<1x60x20xf32>) -> (!layout.tensor<6x1x2x20xf32>, !layout.tensor<1x2x20xf32>)
  func.return %Y : !layout.tensor<6x1x2x20xf32>
}
