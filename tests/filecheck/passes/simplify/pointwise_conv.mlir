// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=pointwise-conv1d-as-matmul,transposed-product},dce' --split-input-file | filecheck %s

// pointwise-conv1d-as-matmul: a grouped 1x1 Conv1d (SqueezeBERT's projections) is the
// channels-last product: the input transposed and its 4 groups split as heads, the weight
// [g, C/g, M/g], the bias per group, the groups merged and the result transposed back.
// The data is channels-last transposed in (as SqueezeBERT's hidden states are), so the
// product's transposes meet that one.
func.func @grouped(%h: !layout.tensor<[n, l, 8], f32>) -> !layout.tensor<[n, 12, l], f32> {
  %w = graph.constant dense<1.0> : !layout.tensor<12x2x1xf32>
  %b = graph.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]> : !layout.tensor<12xf32>
  %x = graph.transpose %h {perm = [0, 2, 1]} : (!layout.tensor<[n, l, 8], f32>) -> !layout.tensor<[n, 8, l], f32>
  %y = graph.conv %x, %w, %b {group = 4, kernel_shape = [1]} : (!layout.tensor<[n, 8, l], f32>, !layout.tensor<12x2x1xf32>, !layout.tensor<12xf32>) -> !layout.tensor<[n, 12, l], f32>
  func.return %y : !layout.tensor<[n, 12, l], f32>
}
// CHECK-LABEL: func.func @grouped
// CHECK:         %[[ROWS:.*]] = graph.transpose %x {perm = [0, 2, 1]}
// CHECK:         %[[SPLIT:.*]] = graph.reshape %[[ROWS]], {{.*}} -> !layout.tensor<[n, l, 4, 2], f32>
// CHECK:         %[[HEADS:.*]] = graph.transpose %[[SPLIT]] {perm = [0, 2, 1, 3]}
// CHECK:         %[[W:.*]] = graph.constant dense<1.0> : !layout.tensor<4x2x3xf32>
// CHECK:         %[[MM:.*]] = graph.matmul %[[HEADS]], %[[W]] {{.*}} -> !layout.tensor<[n, 4, l, 3], f32>
// CHECK:         %[[B:.*]] = graph.constant {{.*}} : !layout.tensor<4x1x3xf32>
// CHECK:         %[[BIASED:.*]] = graph.add %[[MM]], %[[B]]
// CHECK:         %[[MERGE:.*]] = graph.transpose %[[BIASED]] {perm = [0, 2, 1, 3]}
// CHECK:         %[[ROWS_OUT:.*]] = graph.reshape %[[MERGE]], {{.*}} -> !layout.tensor<[n, l, 12], f32>
// CHECK:         %y = graph.transpose %[[ROWS_OUT]] {perm = [0, 2, 1]}
// CHECK-NOT:     graph.conv

// -----
// One group: a plain product with the weight transposed, the bias per output channel; the
// data a head merge (a Transpose reshaped: SqueezeBERT's post-attention convolution).
func.func @dense(%heads: !layout.tensor<2x2x5x4xf32>, %w: !layout.tensor<4x8x1xf32>) -> !layout.tensor<2x4x5xf32> {
  %t = graph.transpose %heads {perm = [0, 1, 3, 2]} : (!layout.tensor<2x2x5x4xf32>) -> !layout.tensor<2x2x4x5xf32>
  %shape = graph.constant dense<[2, 8, 5]> : !layout.tensor<3xi64>
  %x = graph.reshape %t, %shape : (!layout.tensor<2x2x4x5xf32>, !layout.tensor<3xi64>) -> !layout.tensor<2x8x5xf32>
  %y = graph.conv %x, %w {kernel_shape = [1]} : (!layout.tensor<2x8x5xf32>, !layout.tensor<4x8x1xf32>) -> !layout.tensor<2x4x5xf32>
  func.return %y : !layout.tensor<2x4x5xf32>
}
// CHECK-LABEL: func.func @dense
// CHECK:         %[[ROWS:.*]] = graph.transpose %x {perm = [0, 2, 1]}
// CHECK:         %[[FLAT:.*]] = graph.reshape %w, {{.*}} -> !layout.tensor<4x8xf32>
// CHECK:         %[[WT:.*]] = graph.transpose %[[FLAT]] {perm = [1, 0]}
// CHECK:         %[[MM:.*]] = graph.matmul %[[ROWS]], %[[WT]] {{.*}} -> !layout.tensor<2x5x4xf32>
// CHECK:         %y = graph.transpose %[[MM]] {perm = [0, 2, 1]}

// -----
// Channels-first data (a 1x1 convolution between wider ones in DAC or silero): the
// transposes would meet nothing and stay kernels of their own; the convolution stays.
func.func @channels_first(%x: !layout.tensor<2x8x5xf32>, %w: !layout.tensor<4x8x1xf32>) -> !layout.tensor<2x4x5xf32> {
  %r = graph.relu %x : !layout.tensor<2x8x5xf32>
  %y = graph.conv %r, %w {kernel_shape = [1]} : (!layout.tensor<2x8x5xf32>, !layout.tensor<4x8x1xf32>) -> !layout.tensor<2x4x5xf32>
  func.return %y : !layout.tensor<2x4x5xf32>
}
// CHECK-LABEL: func.func @channels_first
// CHECK-NOT:     graph.transpose
// CHECK:         %y = graph.conv %r, %w

// -----
// A window of three stays a convolution.
func.func @window(%x: !layout.tensor<2x8x5xf32>, %w: !layout.tensor<4x8x3xf32>) -> !layout.tensor<2x4x5xf32> {
  %y = graph.conv %x, %w {kernel_shape = [3], pads = [1, 1]} : (!layout.tensor<2x8x5xf32>, !layout.tensor<4x8x3xf32>) -> !layout.tensor<2x4x5xf32>
  func.return %y : !layout.tensor<2x4x5xf32>
}
// CHECK-LABEL: func.func @window
// CHECK:         %y = graph.conv %x, %w

// -----
// transposed-product: a channels-last product read transposed by a matmul (SqueezeBERT's
// key) becomes the channels-first product: the weight and bias transposed, x read
// transposed.
func.func @key(%x: !layout.tensor<2x5x8xf32>, %q: !layout.tensor<2x7x6xf32>) -> !layout.tensor<2x7x5xf32> {
  %w = graph.constant dense<0.5> : !layout.tensor<8x6xf32>
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : !layout.tensor<6xf32>
  %p = graph.matmul %x, %w : (!layout.tensor<2x5x8xf32>, !layout.tensor<8x6xf32>) -> !layout.tensor<2x5x6xf32>
  %pb = graph.add %p, %b : (!layout.tensor<2x5x6xf32>, !layout.tensor<6xf32>) -> !layout.tensor<2x5x6xf32>
  %k = graph.transpose %pb {perm = [0, 2, 1]} : (!layout.tensor<2x5x6xf32>) -> !layout.tensor<2x6x5xf32>
  %s = graph.matmul %q, %k : (!layout.tensor<2x7x6xf32>, !layout.tensor<2x6x5xf32>) -> !layout.tensor<2x7x5xf32>
  func.return %s : !layout.tensor<2x7x5xf32>
}
// CHECK-LABEL: func.func @key
// CHECK:         %[[WT:.*]] = graph.constant dense<0.5> : !layout.tensor<6x8xf32>
// CHECK:         %[[XT:.*]] = graph.transpose %x {perm = [0, 2, 1]}
// CHECK:         %[[KP:.*]] = graph.matmul %[[WT]], %[[XT]] {{.*}} -> !layout.tensor<2x6x5xf32>
// CHECK:         %[[BT:.*]] = graph.constant {{.*}} : !layout.tensor<1x6x1xf32>
// CHECK:         %k = graph.add %[[KP]], %[[BT]]
// CHECK:         %s = graph.matmul %q, %k
