// RUN: TILEGRAPH_ROUNDTRIP

// graph.layer_norm / graph.rms_norm normalise over the trailing axes from `axis`;
// graph.gelu has an erf and a tanh form.
func.func @norms(%x: !layout.tensor<2x3x8xf32>, %s: !layout.tensor<8xf32>, %b: !layout.tensor<8xf32>, %s2: !layout.tensor<3x8xf32>) {
  %0 = graph.layer_norm %x, %s, %b {epsilon = 1.0e-05} : (!layout.tensor<2x3x8xf32>, !layout.tensor<8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x3x8xf32>
  %1 = graph.layer_norm %x, %s2 {axis = 1} : (!layout.tensor<2x3x8xf32>, !layout.tensor<3x8xf32>) -> !layout.tensor<2x3x8xf32>
  %2 = graph.rms_norm %x, %s : (!layout.tensor<2x3x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x3x8xf32>
  %3 = graph.gelu %x : !layout.tensor<2x3x8xf32>
  %4 = graph.gelu %x {approximate = "tanh"} : !layout.tensor<2x3x8xf32>
  func.return
}
// CHECK-LABEL: func.func @norms
// CHECK-NEXT: %0 = graph.layer_norm %x, %s, %b {epsilon = 1.0e-05} : (!layout.tensor<2x3x8xf32>, !layout.tensor<8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x3x8xf32>
// CHECK-NEXT: %1 = graph.layer_norm %x, %s2 {axis = 1} : (!layout.tensor<2x3x8xf32>, !layout.tensor<3x8xf32>) -> !layout.tensor<2x3x8xf32>
// CHECK-NEXT: %2 = graph.rms_norm %x, %s : (!layout.tensor<2x3x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<2x3x8xf32>
// CHECK-NEXT: %3 = graph.gelu %x : !layout.tensor<2x3x8xf32>
// CHECK-NEXT: %4 = graph.gelu %x {approximate = "tanh"} : !layout.tensor<2x3x8xf32>
