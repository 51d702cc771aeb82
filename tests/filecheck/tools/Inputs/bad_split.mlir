// Parses, but graph.split has neither 'split' nor 'num_outputs': an op of two results.
func.func @f(%x: !layout.tensor<2x6xf32>) -> !layout.tensor<2x3xf32> {
  // the verifier must point here
  %a, %b = graph.split %x {axis = 1 : i64} : (!layout.tensor<2x6xf32>) -> (!layout.tensor<2x3xf32>, !layout.tensor<2x3xf32>)
  func.return %a : !layout.tensor<2x3xf32>
}
