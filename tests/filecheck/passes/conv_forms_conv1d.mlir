// RUN: tilegraph-opt %s -p 'conv-forms' --split-input-file | filecheck %s

// conv-forms on a stack of 1-D convolutions: each becomes a conv2d with H = 1 between an
// unsqueeze and a squeeze; then the ReLUs move before the squeezes (onto the conv2d
// results, where fuse-ops takes them into the convolution's epilogue), the residual add of
// two squeezed results becomes the add of the 4-D results, and every squeeze that the next
// convolution's unsqueeze undoes goes: one unsqueeze at the input, one squeeze at the end.
func.func @stack(%x: !layout.tensor<2x8x37xf32>) -> !layout.tensor<2x16x19xf32> {
  %w1 = graph.constant dense<0.25> : !layout.tensor<16x8x3xf32>
  %w2 = graph.constant dense<0.5> : !layout.tensor<16x16x5xf32>
  %w3 = graph.constant dense<0.125> : !layout.tensor<16x16x3xf32>
  %c1 = graph.conv %x, %w1 {pads = [1, 1]} : (!layout.tensor<2x8x37xf32>, !layout.tensor<16x8x3xf32>) -> !layout.tensor<2x16x37xf32>
  %r1 = graph.relu %c1 : !layout.tensor<2x16x37xf32>
  %c2 = graph.conv %r1, %w2 {pads = [2, 2], strides = [2]} : (!layout.tensor<2x16x37xf32>, !layout.tensor<16x16x5xf32>) -> !layout.tensor<2x16x19xf32>
  %r2 = graph.relu %c2 : !layout.tensor<2x16x19xf32>
  %c3 = graph.conv %r2, %w3 {pads = [1, 1]} : (!layout.tensor<2x16x19xf32>, !layout.tensor<16x16x3xf32>) -> !layout.tensor<2x16x19xf32>
  %y = graph.add %c3, %r2 : !layout.tensor<2x16x19xf32>
  func.return %y : !layout.tensor<2x16x19xf32>
}
// CHECK-LABEL: func.func @stack
// CHECK:         %[[ROWS:.*]] = graph.unsqueeze %x, %{{.*}} : {{.*}} -> !layout.tensor<2x8x1x37xf32, NCHW>
// CHECK-NOT:     graph.unsqueeze
// CHECK:         %[[C1:.*]] = graph.conv2d %[[ROWS]], {{.*}} -> !layout.tensor<2x16x1x37xf32, NCHW>
// CHECK:         %[[R1:.*]] = graph.relu %[[C1]] : !layout.tensor<2x16x1x37xf32, NCHW>
// CHECK-NOT:     graph.squeeze
// CHECK:         %[[C2:.*]] = graph.conv2d %[[R1]], {{.*}} -> !layout.tensor<2x16x1x19xf32, NCHW>
// CHECK:         %[[R2:.*]] = graph.relu %[[C2]] : !layout.tensor<2x16x1x19xf32, NCHW>
// CHECK-NOT:     graph.squeeze
// CHECK:         %[[C3:.*]] = graph.conv2d %[[R2]], {{.*}} -> !layout.tensor<2x16x1x19xf32, NCHW>
// CHECK:         %[[SUM:.*]] = graph.add %[[C3]], %[[R2]] : !layout.tensor<2x16x1x19xf32, NCHW>
// CHECK:         %[[Y:.*]] = graph.squeeze %[[SUM]], %{{.*}} -> !layout.tensor<2x16x19xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----
// A ReLU whose result the function also returns: it still joins the convolution, and the
// squeeze the return needs stays beside the view the next convolution reads directly.
func.func @read_twice(%x: !layout.tensor<1x16x9xf32>) -> (!layout.tensor<1x16x9xf32>, !layout.tensor<1x16x9xf32>) {
  %w = graph.constant dense<0.5> : !layout.tensor<16x16x3xf32>
  %c1 = graph.conv %x, %w {pads = [1, 1]} : (!layout.tensor<1x16x9xf32>, !layout.tensor<16x16x3xf32>) -> !layout.tensor<1x16x9xf32>
  %r1 = graph.relu %c1 : !layout.tensor<1x16x9xf32>
  %c2 = graph.conv %r1, %w {pads = [1, 1]} : (!layout.tensor<1x16x9xf32>, !layout.tensor<16x16x3xf32>) -> !layout.tensor<1x16x9xf32>
  func.return %r1, %c2 : !layout.tensor<1x16x9xf32>, !layout.tensor<1x16x9xf32>
}
// CHECK-LABEL: func.func @read_twice
// CHECK:         %[[C1:.*]] = graph.conv2d
// CHECK:         %[[R1:.*]] = graph.relu %[[C1]] : !layout.tensor<1x16x1x9xf32, NCHW>
// CHECK-DAG:     %[[C2:.*]] = graph.conv2d %[[R1]],
// CHECK-DAG:     %[[OUT1:.*]] = graph.squeeze %[[R1]],
// CHECK:         func.return %[[OUT1]], %{{.*}}

// -----
// A 1-D convolution read by a softmax over channels: not elementwise, so the squeeze stays
// where it was (before the softmax).
func.func @not_elementwise(%x: !layout.tensor<1x16x9xf32>) -> !layout.tensor<1x16x9xf32> {
  %w = graph.constant dense<0.5> : !layout.tensor<16x16x3xf32>
  %c1 = graph.conv %x, %w {pads = [1, 1]} : (!layout.tensor<1x16x9xf32>, !layout.tensor<16x16x3xf32>) -> !layout.tensor<1x16x9xf32>
  %s = graph.softmax %c1 {axis = 1} : !layout.tensor<1x16x9xf32>
  func.return %s : !layout.tensor<1x16x9xf32>
}
// CHECK-LABEL: func.func @not_elementwise
// CHECK:         %[[C1:.*]] = graph.conv2d
// CHECK:         %[[SQ:.*]] = graph.squeeze %[[C1]],
// CHECK:         graph.softmax %[[SQ]]

// -----
// DAC's Snake between two 1-D convolutions, x + sin(a * x)^2 with a per-channel a
// [1, C, 1]: the squeezed result is read twice, by an elementwise region over it alone,
// which moves onto the conv2d result op by op (a taken to [1, C, 1, 1]); the squeeze and
// the next unsqueeze then cancel.
func.func @snake(%x: !layout.tensor<1x16x9xf32>) -> !layout.tensor<1x16x9xf32> {
  %w = graph.constant dense<0.5> : !layout.tensor<16x16x3xf32>
  %a = graph.constant dense<1.5> : !layout.tensor<1x16x1xf32>
  %two = graph.constant dense<2.0> : !layout.tensor<f32>
  %c1 = graph.conv %x, %w {pads = [1, 1]} : (!layout.tensor<1x16x9xf32>, !layout.tensor<16x16x3xf32>) -> !layout.tensor<1x16x9xf32>
  %ax = graph.mul %a, %c1 : (!layout.tensor<1x16x1xf32>, !layout.tensor<1x16x9xf32>) -> !layout.tensor<1x16x9xf32>
  %s = graph.sin %ax : !layout.tensor<1x16x9xf32>
  %p = graph.pow %s, %two : (!layout.tensor<1x16x9xf32>, !layout.tensor<f32>) -> !layout.tensor<1x16x9xf32>
  %sn = graph.add %c1, %p : !layout.tensor<1x16x9xf32>
  %c2 = graph.conv %sn, %w {pads = [1, 1]} : (!layout.tensor<1x16x9xf32>, !layout.tensor<16x16x3xf32>) -> !layout.tensor<1x16x9xf32>
  func.return %c2 : !layout.tensor<1x16x9xf32>
}
// CHECK-LABEL: func.func @snake
// CHECK:         %[[C1:.*]] = graph.conv2d
// CHECK-NOT:     graph.squeeze
// CHECK:         graph.mul {{.*}}%[[C1]] : (!layout.tensor<1x16x1x1xf32>, !layout.tensor<1x16x1x9xf32, NCHW>)
// CHECK-NOT:     graph.squeeze
// CHECK:         %[[SN:.*]] = graph.add %[[C1]], %{{.*}} -> !layout.tensor<1x16x1x9xf32, NCHW>
// CHECK-NOT:     graph.squeeze
// CHECK-NOT:     graph.unsqueeze
// CHECK:         %[[C2:.*]] = graph.conv2d %[[SN]],
// CHECK:         graph.squeeze %[[C2]]
