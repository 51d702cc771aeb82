// RUN: tilegraph-opt %s | filecheck %s
// RUN: tilegraph-opt %s --print-op-generic | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p O2 --check-each-pass --check-rtol=0 --check-atol=0 -o %t 2>&1 | filecheck %s --check-prefix=CHECKED
// RUN: filecheck %s --check-prefix=O2 < %t

// The op prints and parses like a graph op, and tilegraph's passes treat it as one: O2 puts
// it in NC1HWC0 between the convolution and the ReLU and fuses the three; the reference
// interpreter runs it before and after every pass (padding lanes hold NaN) with the same
// outputs, bit for bit.
func.func @conv_quant_relu(%x: !layout.tensor<1x3x8x8xf16, NCHW>) -> !layout.tensor<1x8x8x8xf16, NCHW> {
  %w = graph.constant dense<0.01> : !layout.tensor<8x3x3x3xf16>
  %c = graph.conv2d %x, %w {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (!layout.tensor<1x3x8x8xf16, NCHW>, !layout.tensor<8x3x3x3xf16>) -> !layout.tensor<1x8x8x8xf16, NCHW>
  %q = example.fake_quant %c {scale = 0.01, bits = 8} : !layout.tensor<1x8x8x8xf16, NCHW>
  %r = graph.relu %q : !layout.tensor<1x8x8x8xf16, NCHW>
  func.return %r : !layout.tensor<1x8x8x8xf16, NCHW>
}
// CHECK:      %q = example.fake_quant %c {scale = 0.01, bits = 8} : !layout.tensor<1x8x8x8xf16, NCHW>
// CHECK-NEXT: %r = graph.relu %q

// O2:         graph.fused "fused_trans_data_conv2d_fake_quant_relu_trans_data_0"
// O2:         %q = example.fake_quant %c {{{.*}}} : !layout.tensor<1x8x8x8xf16, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>

// CHECKED: check-each-pass: {{[0-9]+}} passes checked, outputs unchanged
