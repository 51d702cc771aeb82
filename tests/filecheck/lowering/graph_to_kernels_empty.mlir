// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels' | filecheck %s

// Zero-size tensors (lowering/conversion/graph_to_kernels_empty.py). %e has no rows: the
// relu of it has nothing to compute, so it is an empty GM allocation and no launch. The
// sum over %e's empty axis is not empty (zeros): its kernel stays on the host, named for
// the empty tensor, before any tile plan divides by the zero dim. The add that reads only
// non-empty tensors still runs on the vector unit. A NonZero that finds nothing in %b
// makes an empty result from a non-empty input: its size comes from the data, so it still
// runs (on the host), where a later call's data that give another size are seen.
func.func @main(%e: !layout.tensor<0x16xf32>, %b: !layout.tensor<16xf32>) -> (!layout.tensor<0x16xf32>, !layout.tensor<16xf32>, !layout.tensor<1x0xi64>) {
  %r = graph.relu %e : !layout.tensor<0x16xf32>
  %axes = graph.constant dense<0> : !layout.tensor<1xi64>
  %s = graph.reduce_sum %e, %axes {keepdims = 0} : (!layout.tensor<0x16xf32>, !layout.tensor<1xi64>) -> !layout.tensor<16xf32>
  %y = graph.add %s, %b : !layout.tensor<16xf32>
  %nz = graph.non_zero %b : (!layout.tensor<16xf32>) -> !layout.tensor<1x0xi64>
  func.return %r, %y, %nz : !layout.tensor<0x16xf32>, !layout.tensor<16xf32>, !layout.tensor<1x0xi64>
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %e: memref<0x16xf32, "GM">, %b: memref<16xf32, "GM">
// CHECK-NEXT:    %r = tile.alloc : memref<0x16xf32, "GM">
// CHECK-NEXT:    %s = tile.alloc : memref<16xf32, "GM">
// CHECK-NEXT:    tile.launch @[[SUM:reduce_sum[^(]*]](%e, %s)
// CHECK:         tile.launch @[[ADD:add[^(]*]](%s, %b, %y)
// CHECK-NEXT:    %nz = tile.alloc : memref<1x0xi64, "GM">
// CHECK-NEXT:    tile.launch @[[NZ:non_zero[^(]*]](%b, %nz)
// CHECK-NEXT:    func.return %r, %y, %nz
// CHECK-NOT:   func.func @relu
// CHECK-DAG:   func.func @[[SUM]]({{.*}}) attributes {tile.kernel = "host", tile.host_reason = "a zero-size tensor (%e is 0x16): the tile plans need one element per dim"
// CHECK-DAG:   func.func @[[NZ]]({{.*}}) attributes {tile.kernel = "host", tile.host_reason = "a zero-size tensor (%nz is 1x0)
// CHECK-DAG:   func.func @[[ADD]]({{.*}}) attributes {tile.kernel = "vector"
