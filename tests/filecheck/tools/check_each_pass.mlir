// RUN: tilegraph-opt %s -p 'fold-batchnorm,dce,fuse-ops' --check-each-pass -o %t 2>&1 | filecheck %s
// RUN: not tilegraph-opt %s -p 'dce,fold-batchnorm,dce' --check-each-pass --check-rtol=0 --check-atol=0 -o %t 2>&1 | filecheck %s --check-prefix=STRICT

// The BN fold rounds differently from the BN it replaces: within the default tolerance it
// passes; with a zero tolerance the first pass that moved the outputs is named.
func.func @conv_bn(%x: !layout.tensor<1x3x4x4xf32, NCHW>) -> !layout.tensor<1x3x4x4xf32, NCHW> {
  %w = graph.constant dense<[[[[0.3]], [[0.7]], [[1.1]]], [[[1.3]], [[-0.7]], [[0.2]]], [[[0.9]], [[0.4]], [[-1.7]]]]> : !layout.tensor<3x3x1x1xf32, NCHW>
  %g = graph.constant dense<[1.7, 0.3, 2.9]> : !layout.tensor<3xf32>
  %b = graph.constant dense<[0.1, -0.3, 0.7]> : !layout.tensor<3xf32>
  %m = graph.constant dense<[0.33, -0.7, 1.9]> : !layout.tensor<3xf32>
  %v = graph.constant dense<[0.7, 1.3, 0.11]> : !layout.tensor<3xf32>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x3x4x4xf32, NCHW>, !layout.tensor<3x3x1x1xf32, NCHW>) -> !layout.tensor<1x3x4x4xf32, NCHW>
  %y = graph.batch_norm %c, %g, %b, %m, %v : (!layout.tensor<1x3x4x4xf32, NCHW>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) -> !layout.tensor<1x3x4x4xf32, NCHW>
  %r = graph.relu %y : !layout.tensor<1x3x4x4xf32, NCHW>
  func.return %r : !layout.tensor<1x3x4x4xf32, NCHW>
}

// CHECK: check-each-pass: 3 passes checked, outputs unchanged
// STRICT: error: check-each-pass: pass 'fold-batchnorm' changed output 'output0': largest difference {{.*}} (rtol 0, atol 0; 1 passes before it kept the outputs)
