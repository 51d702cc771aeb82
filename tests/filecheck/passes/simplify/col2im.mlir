// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=col2im-as-conv-transpose},dce' --split-input-file | filecheck %s

// col2im-as-conv-transpose: F.fold of 3x3 blocks at stride 2, pad 1 into 10x14 (a row and a
// column left over: output_padding 1): the 35 block positions as a 5x7 grid, 2 groups of
// 9 channels, one-hot filters; a reshape of the same dims gives back the ND image.
func.func @fold(%x: !layout.tensor<?x18x35xf32>) -> !layout.tensor<?x2x10x14xf32> {
  %image = graph.constant dense<[10, 14]> : !layout.tensor<2xi64>
  %block = graph.constant dense<[3, 3]> : !layout.tensor<2xi64>
  %y = graph.col2im %x, %image, %block {strides = [2, 2], pads = [1, 1, 1, 1]} : (!layout.tensor<?x18x35xf32>, !layout.tensor<2xi64>, !layout.tensor<2xi64>) -> !layout.tensor<?x2x10x14xf32>
  func.return %y : !layout.tensor<?x2x10x14xf32>
}
// CHECK-LABEL: func.func @fold
// CHECK:         graph.constant dense<[0, 18, 5, 7]>
// CHECK:         %[[GRID:.*]] = graph.reshape %x, {{.*}} -> !layout.tensor<?x18x5x7xf32>
// CHECK:         %[[W:.*]] = graph.constant {{.*}} : !layout.tensor<18x1x3x3xf32>
// CHECK:         %[[T:.*]] = graph.conv_transpose %[[GRID]], %[[W]] {{.*}}group = 2{{.*}}output_padding = [1, 1]
// CHECK:         %y = graph.reshape %[[T]], {{.*}} -> !layout.tensor<?x2x10x14xf32>
// CHECK-NOT:     graph.col2im
