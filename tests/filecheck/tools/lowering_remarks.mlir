// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels' --lowering-remarks -o %t 2>&1 | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test}' --lowering-remarks -o %t 2>&1 | filecheck %s --check-prefix=ABSENT

// ConvNeXt's block tail as fuse-ops leaves it: the permute back, the residual add and the
// global mean in one group, which no strategy tiles whole (the group starts with a
// transpose that no reshape surrounds), so lower-graph-to-kernels splits it; a Hardmax,
// which no strategy tiles, stays on the host. Each gets a remark at its ONNX nodes.
func.func @main(%x: !layout.tensor<1x64x8x8xf32>, %s: !layout.tensor<1x8x8x64xf32>) -> !layout.tensor<1x64xf32> {
  %axes = graph.constant dense<[2, 3]> : !layout.tensor<2xi64>
  %g = graph.fused "fused_transpose_add_reduce_mean_0" <comm_reduce> (%s, %x, %axes) : (!layout.tensor<1x8x8x64xf32>, !layout.tensor<1x64x8x8xf32>, !layout.tensor<2xi64>) -> !layout.tensor<1x64xf32> {
  ^bb0(%s1: !layout.tensor<1x8x8x64xf32>, %x1: !layout.tensor<1x64x8x8xf32>, %axes1: !layout.tensor<2xi64>):
    %p = graph.transpose %s1 {perm = [0, 3, 1, 2]} : (!layout.tensor<1x8x8x64xf32>) -> !layout.tensor<1x64x8x8xf32> loc("perm0")
    %r = graph.add %x1, %p : !layout.tensor<1x64x8x8xf32> loc("residual0")
    %m = graph.reduce_mean %r, %axes1 {keepdims = 0} : (!layout.tensor<1x64x8x8xf32>, !layout.tensor<2xi64>) -> !layout.tensor<1x64xf32> loc("mean0")
    graph.yield %m : !layout.tensor<1x64xf32>
  } loc(fused["perm0", "residual0", "mean0"])
  %y = graph.hardmax %g {axis = -1} : !layout.tensor<1x64xf32> loc("hardmax0")
  func.return %y : !layout.tensor<1x64xf32>
}

// CHECK:      nodes 'perm0', 'residual0', 'mean0': remark: [lower-graph-to-kernels] group fused_transpose_add_reduce_mean_0 (3 ops: transpose, add, reduce_mean) refused by the reshape strategy: not a transpose between reshapes; split into 2 kernels (vector 2)
// CHECK-NEXT: node 'hardmax0': remark: [lower-graph-to-kernels] kernel hardmax_{{[0-9]+}} (hardmax) runs on the host: no vector lowering for graph.hardmax
// CHECK-NEXT: lowering: kernels cube 0, vector 2, host 1; fused groups 0 whole, 1 split; 1 host kernels
// CHECK-NOT:  remark

// ABSENT: lowering: lower-graph-to-kernels did not run (no remarks)
