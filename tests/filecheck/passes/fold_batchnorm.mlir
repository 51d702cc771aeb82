// RUN: tilegraph-opt %s -p 'fold-batchnorm,dce' --split-input-file | filecheck %s

// conv-batchnorm: the BN moves into the conv's weights and bias.
func.func @conv_bn(%x: !layout.tensor<1x2x4x4xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32, NCHW> {
  %w = graph.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : !layout.tensor<2x2x1x1xf32, NCHW>
  %g = graph.constant dense<[2.0, 0.5]> : !layout.tensor<2xf32>
  %b = graph.constant dense<[1.0, -1.0]> : !layout.tensor<2xf32>
  %m = graph.constant dense<[0.0, 2.0]> : !layout.tensor<2xf32>
  %v = graph.constant dense<[1.0, 4.0]> : !layout.tensor<2xf32>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<2x2x1x1xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  %y = graph.batch_norm %c, %g, %b, %m, %v {epsilon = 0.0} : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  func.return %y : !layout.tensor<1x2x4x4xf32, NCHW>
}
// a = [2, 0.25]: W rows scaled by a, b' = (0 - mean) * a + B = [1, -1.5].
// CHECK-LABEL: func.func @conv_bn
// CHECK-DAG:   %[[W:.*]] = graph.constant dense<{{\[}}{{\[}}{{\[}}[2.0]], {{\[}}[4.0]]], {{\[}}{{\[}}[0.75]], {{\[}}[1.0]]]]> : !layout.tensor<2x2x1x1xf32, NCHW>
// CHECK-DAG:   %[[B:.*]] = graph.constant dense<[1.0, -1.5]> : !layout.tensor<2xf32>
// CHECK:       %[[Y:.*]] = graph.conv2d %x, %[[W]], %[[B]]
// CHECK-NOT:   graph.batch_norm
// CHECK:       func.return %[[Y]]

// -----
// A conv result with a second user keeps its conv; the BN becomes a multiply-add instead.
func.func @conv_bn_shared(%x: !layout.tensor<1x2x4x4xf32, NCHW>) -> (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NCHW>) {
  %w = graph.constant dense<1.0> : !layout.tensor<2x2x1x1xf32, NCHW>
  %p = graph.constant dense<[1.0, 2.0]> : !layout.tensor<2xf32>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<2x2x1x1xf32, NCHW>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  %y = graph.batch_norm %c, %p, %p, %p, %p : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>) -> !layout.tensor<1x2x4x4xf32, NCHW>
  func.return %y, %c : !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NCHW>
}
// CHECK-LABEL: func.func @conv_bn_shared
// CHECK:       %c = graph.conv2d %x, %w :
// CHECK:       graph.mul %c, %{{.*}} : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<2x1x1xf32>) -> !layout.tensor<1x2x4x4xf32, NCHW>
// CHECK:       %y = graph.add
// CHECK-NOT:   graph.batch_norm

// -----
// conv-binary: a per-output-channel Mul and Add fold; a per-pixel Add does not.
func.func @conv_binary(%x: !layout.tensor<1x2x2x2xf32, NCHW>) -> (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<1x2x2x2xf32, NCHW>) {
  %w = graph.constant dense<1.0> : !layout.tensor<2x2x1x1xf32, NCHW>
  %s = graph.constant dense<[[[2.0]], [[3.0]]]> : !layout.tensor<2x1x1xf32>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<2x2x1x1xf32, NCHW>) -> !layout.tensor<1x2x2x2xf32, NCHW>
  %y = graph.mul %c, %s : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<2x1x1xf32>) -> !layout.tensor<1x2x2x2xf32, NCHW>
  %w2 = graph.constant dense<2.0> : !layout.tensor<2x2x1x1xf32, NCHW>
  %pix = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : !layout.tensor<2x2xf32>
  %c2 = graph.conv2d %x, %w2 : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<2x2x1x1xf32, NCHW>) -> !layout.tensor<1x2x2x2xf32, NCHW>
  %z = graph.add %c2, %pix : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<2x2xf32>) -> !layout.tensor<1x2x2x2xf32, NCHW>
  func.return %y, %z : !layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<1x2x2x2xf32, NCHW>
}
// CHECK-LABEL: func.func @conv_binary
// CHECK:       %[[Y:.*]] = graph.conv2d %x, %w_folded :
// CHECK:       %c2 = graph.conv2d %x, %w2 :
// CHECK-NEXT:  %z = graph.add %c2, %pix
// CHECK:       func.return %[[Y]], %z

// -----
// gemm-batchnorm: MatMul with a constant 2-D B then BN becomes one Gemm.
func.func @matmul_bn(%a: !layout.tensor<3x2xf32>) -> !layout.tensor<3x2xf32> {
  %b = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : !layout.tensor<2x2xf32>
  %p = graph.constant dense<[1.0, 3.0]> : !layout.tensor<2xf32>
  %mm = graph.matmul %a, %b : (!layout.tensor<3x2xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<3x2xf32>
  %y = graph.batch_norm %mm, %p, %p, %p, %p : (!layout.tensor<3x2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>, !layout.tensor<2xf32>) -> !layout.tensor<3x2xf32>
  func.return %y : !layout.tensor<3x2xf32>
}
// CHECK-LABEL: func.func @matmul_bn
// CHECK:       graph.gemm %a, %{{.*}}, %{{.*}} : (!layout.tensor<3x2xf32>, !layout.tensor<2x2xf32>, !layout.tensor<2xf32>) -> !layout.tensor<3x2xf32>
// CHECK-NOT:   graph.batch_norm
// CHECK-NOT:   graph.matmul

// -----
// conv-input-scale: a positive per-input-channel scale moves through the ReLU into W; a
// negative one cannot pass the ReLU.
func.func @input_scale(%x: !layout.tensor<1x2x2x2xf32, NCHW>) -> (!layout.tensor<1x1x2x2xf32, NCHW>, !layout.tensor<1x1x2x2xf32, NCHW>) {
  %w = graph.constant dense<[[[[1.0]], [[1.0]]]]> : !layout.tensor<1x2x1x1xf32, NCHW>
  %s = graph.constant dense<[[[2.0]], [[3.0]]]> : !layout.tensor<2x1x1xf32>
  %m = graph.mul %x, %s : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<2x1x1xf32>) -> !layout.tensor<1x2x2x2xf32, NCHW>
  %r = graph.relu %m : !layout.tensor<1x2x2x2xf32, NCHW>
  %y = graph.conv2d %r, %w : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<1x2x1x1xf32, NCHW>) -> !layout.tensor<1x1x2x2xf32, NCHW>
  %n = graph.constant dense<[[[2.0]], [[-3.0]]]> : !layout.tensor<2x1x1xf32>
  %m2 = graph.mul %x, %n : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<2x1x1xf32>) -> !layout.tensor<1x2x2x2xf32, NCHW>
  %r2 = graph.relu %m2 : !layout.tensor<1x2x2x2xf32, NCHW>
  %z = graph.conv2d %r2, %w : (!layout.tensor<1x2x2x2xf32, NCHW>, !layout.tensor<1x2x1x1xf32, NCHW>) -> !layout.tensor<1x1x2x2xf32, NCHW>
  func.return %y, %z : !layout.tensor<1x1x2x2xf32, NCHW>, !layout.tensor<1x1x2x2xf32, NCHW>
}
// CHECK-LABEL: func.func @input_scale
// CHECK:       %[[W:.*]] = graph.constant dense<{{\[}}{{\[}}{{\[}}[2.0]], {{\[}}[3.0]]]]>
// CHECK:       %[[R:.*]] = graph.relu %x
// CHECK:       graph.conv2d %[[R]], %[[W]]
// CHECK:       %m2 = graph.mul %x, %n
// CHECK:       %r2 = graph.relu %m2
// CHECK:       %z = graph.conv2d %r2, %w

// -----
// A batched MatMul (3-D A) has no per-channel axis 1 = N: the BN stays (as a multiply-add).
func.func @batched_matmul_bn(%a: !layout.tensor<2x3x2xf32>) -> !layout.tensor<2x3x2xf32> {
  %b = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : !layout.tensor<2x2xf32>
  %p = graph.constant dense<[1.0, 3.0, 2.0]> : !layout.tensor<3xf32>
  %mm = graph.matmul %a, %b : (!layout.tensor<2x3x2xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<2x3x2xf32>
  %y = graph.batch_norm %mm, %p, %p, %p, %p : (!layout.tensor<2x3x2xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) -> !layout.tensor<2x3x2xf32>
  func.return %y : !layout.tensor<2x3x2xf32>
}
// CHECK-LABEL: func.func @batched_matmul_bn
// CHECK:       %mm = graph.matmul %a, %b
// CHECK:       graph.mul %mm
// CHECK-NOT:   graph.gemm
