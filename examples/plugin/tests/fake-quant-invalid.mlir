// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @negative_scale(%x: !layout.tensor<4xf32>) {
  %y = example.fake_quant %x {scale = -0.5, bits = 8} : !layout.tensor<4xf32>
  func.return
}
// CHECK: fake-quant-invalid.mlir:4: error: 'example.fake_quant' (%y) in @negative_scale: scale must be positive and finite, got -0.5

// -----
func.func @no_scale(%x: !layout.tensor<4xf32>) {
  %y = example.fake_quant %x : !layout.tensor<4xf32>
  func.return
}
// CHECK: 'example.fake_quant' (%y) in @no_scale: scale must be positive and finite, got None

// -----
func.func @one_bit(%x: !layout.tensor<4xf32>) {
  %y = example.fake_quant %x {scale = 0.5, bits = 1} : !layout.tensor<4xf32>
  func.return
}
// CHECK: 'example.fake_quant' (%y) in @one_bit: bits must be in 2..16, got 1

// -----
func.func @integers(%x: !layout.tensor<4xi32>) {
  %y = example.fake_quant %x {scale = 0.5} : !layout.tensor<4xi32>
  func.return
}
// CHECK: 'example.fake_quant' (%y) in @integers: fake_quant takes float16/32/64, not i32

// -----
// The op never changes layout: the result must have the operand's formats too.
func.func @changes_layout(%x: !layout.tensor<1x16x2x2xf16, NCHW>) {
  %y = example.fake_quant %x {scale = 0.5} : (!layout.tensor<1x16x2x2xf16, NCHW>) -> !layout.tensor<1x16x2x2xf16, NCHW -> NC1HWC0>
  func.return
}
// CHECK: 'example.fake_quant' (%y) in @changes_layout: result type !layout.tensor<1x16x2x2xf16, NCHW -> NC1HWC0 [1, 1, 2, 2, 16]> differs from the operand type !layout.tensor<1x16x2x2xf16, NCHW>
