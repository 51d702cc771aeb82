// RUN: tilegraph-opt %s -p 'set-target{precision=int8},fold-qdq,dce' | filecheck %s
// RUN: tilegraph-opt %s -p 'fold-qdq' | filecheck %s --check-prefix=FLOAT
// RUN: not tilegraph-opt %s -p 'set-target{precision=int8},fold-qdq' --split-input-file 2> %t.err
// RUN: filecheck %s --check-prefix=NOQDQ < %t.err

// Under int8, Conv(DQ(x_q), DQ(w_q, per channel), DQ(b_q)) becomes one int8 cube op whose
// per-channel scale is x's scale times w's (0.05 x [0.02, 0.04]); the dequantisations go.
// CHECK-LABEL: func.func @qdq_conv
// CHECK:       %[[XQ:.*]] = graph.quantize_linear %x
// CHECK:       %[[B:.*]] = graph.constant dense<[5, -7]> : !layout.tensor<2xi32>
// CHECK:       %[[S:.*]] = graph.constant dense<[0.001, 0.002]> : !layout.tensor<2xf32>
// CHECK:       graph.quant_conv2d %[[XQ]], %w, %[[B]], %[[S]]
// CHECK-NOT:   graph.dequantize_linear
// CHECK-NOT:   graph.conv2d
// Under any other precision the pass leaves the model as it is.
// FLOAT-LABEL: func.func @qdq_conv
// FLOAT-COUNT-3: graph.dequantize_linear
// FLOAT:       graph.conv2d
// FLOAT-NOT:   graph.quant_conv2d
func.func @qdq_conv(%x: !layout.tensor<1x3x5x5xf32>) -> !layout.tensor<1x2x5x5xf32, NCHW> {
  %w_scale = graph.constant dense<[0.02, 0.04]> : !layout.tensor<2xf32>
  %w_zero = graph.constant dense<0> : !layout.tensor<2xi8>
  %x_scale = graph.constant dense<0.05> : !layout.tensor<f32>
  %x_zero = graph.constant dense<0> : !layout.tensor<i8>
  %b = graph.constant dense<[5, -7]> : !layout.tensor<2xi32>
  %b_scale = graph.constant dense<[0.001, 0.002]> : !layout.tensor<2xf32>
  %b_zero = graph.constant dense<0> : !layout.tensor<2xi32>
  %w = graph.constant dense<3> : !layout.tensor<2x3x3x3xi8>
  %xq = graph.quantize_linear %x, %x_scale, %x_zero : (!layout.tensor<1x3x5x5xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x3x5x5xi8>
  %xd = graph.dequantize_linear %xq, %x_scale, %x_zero : (!layout.tensor<1x3x5x5xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<1x3x5x5xf32>
  %wd = graph.dequantize_linear %w, %w_scale, %w_zero {axis = 0} : (!layout.tensor<2x3x3x3xi8>, !layout.tensor<2xf32>, !layout.tensor<2xi8>) -> !layout.tensor<2x3x3x3xf32>
  %bd = graph.dequantize_linear %b, %b_scale, %b_zero {axis = 0} : (!layout.tensor<2xi32>, !layout.tensor<2xf32>, !layout.tensor<2xi32>) -> !layout.tensor<2xf32>
  %y = graph.conv2d %xd, %wd, %bd {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (!layout.tensor<1x3x5x5xf32>, !layout.tensor<2x3x3x3xf32>, !layout.tensor<2xf32>) -> !layout.tensor<1x2x5x5xf32, NCHW>
  func.return %y : !layout.tensor<1x2x5x5xf32, NCHW>
}

// A Gemm (transB = 1) of asymmetric data (zero point 3): one int8 matmul whose bias takes
// -3 x the weight's row sums ([10, 0]): [5 - 30, -7 - 0]; the data keeps its zero point.
// CHECK-LABEL: func.func @qdq_gemm_asymmetric
// CHECK:       %[[XQ:.*]] = graph.quantize_linear %x, %{{.*}}, %{{.*}}
// CHECK:       %[[B:.*]] = graph.constant dense<[-25, -7]> : !layout.tensor<2xi32>
// CHECK:       %[[S:.*]] = graph.constant dense<[0.001, 0.002]> : !layout.tensor<2xf32>
// CHECK:       graph.quant_matmul %[[XQ]], %w, %[[B]], %[[S]] : (!layout.tensor<3x4xi8>, !layout.tensor<2x4xi8>, !layout.tensor<2xi32>, !layout.tensor<2xf32>) -> !layout.tensor<3x2xf32>
// CHECK-NOT:   graph.gemm
// FLOAT-LABEL: func.func @qdq_gemm_asymmetric
// FLOAT:       graph.gemm
func.func @qdq_gemm_asymmetric(%x: !layout.tensor<3x4xf32>) -> !layout.tensor<3x2xf32> {
  %w_scale = graph.constant dense<[0.02, 0.04]> : !layout.tensor<2xf32>
  %w_zero = graph.constant dense<0> : !layout.tensor<2xi8>
  %x_scale = graph.constant dense<0.05> : !layout.tensor<f32>
  %x_zero = graph.constant dense<3> : !layout.tensor<i8>
  %b = graph.constant dense<[5, -7]> : !layout.tensor<2xi32>
  %b_scale = graph.constant dense<[0.001, 0.002]> : !layout.tensor<2xf32>
  %w = graph.constant dense<[[1, 2, 3, 4], [-1, 0, 1, 0]]> : !layout.tensor<2x4xi8>
  %xq = graph.quantize_linear %x, %x_scale, %x_zero : (!layout.tensor<3x4xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<3x4xi8>
  %xd = graph.dequantize_linear %xq, %x_scale, %x_zero : (!layout.tensor<3x4xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<3x4xf32>
  %wd = graph.dequantize_linear %w, %w_scale, %w_zero {axis = 0} : (!layout.tensor<2x4xi8>, !layout.tensor<2xf32>, !layout.tensor<2xi8>) -> !layout.tensor<2x4xf32>
  %bd = graph.dequantize_linear %b, %b_scale {axis = 0} : (!layout.tensor<2xi32>, !layout.tensor<2xf32>) -> !layout.tensor<2xf32>
  %y = graph.gemm %xd, %wd, %bd {transB = 1} : (!layout.tensor<3x4xf32>, !layout.tensor<2x4xf32>, !layout.tensor<2xf32>) -> !layout.tensor<3x2xf32>
  func.return %y : !layout.tensor<3x2xf32>
}

// -----

// A model without Q/DQ under int8: one message, naming the pass and the precisions to use.
// NOQDQ: error: pass 'fold-qdq': precision 'int8' needs a quantised model
// NOQDQ-SAME: choose precision origin, fp16 or bf16
func.func @plain(%x: !layout.tensor<1x3x5x5xf32>) -> !layout.tensor<1x3x5x5xf32> {
  %y = graph.relu %x : !layout.tensor<1x3x5x5xf32>
  func.return %y : !layout.tensor<1x3x5x5xf32>
}
