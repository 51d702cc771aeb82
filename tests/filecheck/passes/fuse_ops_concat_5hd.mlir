// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops' --split-input-file | filecheck %s

// An NC1HWC0 concat of a conv output and an NCHW tensor (ASPP's resized pooling branch):
// the NCHW input's conversion into NC1HWC0 joins the concat's kernel, which loads that
// region through it, instead of running as a kernel of its own.
func.func @nchw_input(%a: !layout.tensor<1x32x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>, %side: !layout.tensor<1x16x8x8xf16, NCHW>) -> !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]> {
  %side_1 = layout.trans_data %side : !layout.tensor<1x16x8x8xf16, NCHW> -> !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>
  %j = graph.concat %a, %side_1 {axis = 1, layout.kernel = "any", layout.shared = "NC1HWC0"} : (!layout.tensor<1x32x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>, !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>) -> !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]>
  func.return %j : !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]>
}
// CHECK-LABEL: func.func @nchw_input
// CHECK: %j = graph.fused "fused_trans_data_concat_{{[0-9]+}}" <injective> (%side, %a)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: layout.trans_data
// CHECK-NEXT: graph.concat
// CHECK-NEXT: graph.yield

// -----

// The NCHW input is a slice read by the conversion only: the slice could follow the
// conversion into the concat's kernel, whose regions take no shape op, so the conversion
// stays out (as the concat did in NCHW, each runs as a kernel of its own).
func.func @sliced_input(%a: !layout.tensor<1x32x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>, %side: !layout.tensor<1x32x8x8xf16, NCHW>) -> !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]> {
  %starts = graph.constant dense<0> : !layout.tensor<1xi64>
  %ends = graph.constant dense<16> : !layout.tensor<1xi64>
  %axes = graph.constant dense<1> : !layout.tensor<1xi64>
  %s = graph.slice %side, %starts, %ends, %axes : (!layout.tensor<1x32x8x8xf16, NCHW>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x16x8x8xf16, NCHW>
  %s_1 = layout.trans_data %s : !layout.tensor<1x16x8x8xf16, NCHW> -> !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>
  %j = graph.concat %a, %s_1 {axis = 1, layout.kernel = "any", layout.shared = "NC1HWC0"} : (!layout.tensor<1x32x8x8xf16, NCHW -> NC1HWC0 [1, 2, 8, 8, 16]>, !layout.tensor<1x16x8x8xf16, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>) -> !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]>
  func.return %j : !layout.tensor<1x48x8x8xf16, NCHW -> NC1HWC0 [1, 3, 8, 8, 16]>
}
// CHECK-LABEL: func.func @sliced_input
// CHECK-NOT: graph.fused
// CHECK: %s_1 = layout.trans_data %s :
// CHECK-NEXT: %j = graph.concat %a, %s_1 {axis = 1
