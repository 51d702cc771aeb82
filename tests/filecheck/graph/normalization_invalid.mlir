// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

func.func @scale_shape(%x: !layout.tensor<2x3x8xf32>, %s: !layout.tensor<4xf32>) {
  %y = graph.layer_norm %x, %s : (!layout.tensor<2x3x8xf32>, !layout.tensor<4xf32>) -> !layout.tensor<2x3x8xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:4: error: 'graph.layer_norm' (%y) in @scale_shape: Scale of shape [4] does not broadcast to the normalised dims [8]

// -----
func.func @gelu_form(%x: !layout.tensor<4xf32>) {
  %y = graph.gelu %x {approximate = "fast"} : !layout.tensor<4xf32>
  func.return
}
// CHECK: normalization_invalid.mlir:11: error: 'graph.gelu' (%y) in @gelu_form: gelu: approximate must be "none" or "tanh"
