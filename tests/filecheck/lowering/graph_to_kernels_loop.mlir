// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels' | tilegraph-opt | filecheck %s

// A graph.loop with a compile-time trip count (M = 4, the condition passed through) as a
// device loop (lowering/conversion/loop_launches.py): the body is optimised and lowered as
// a function of its own; its buffers are allocated before the loop, its launches are the
// loop's region. The body reads the iteration number (a counter buffer the loop writes),
// carries h (a state, its next value written by the body's last kernel) and yields every h
// as a scan output (slot i of a [4, 2, 16] buffer). The trip count's constant, read by
// no kernel, leaves no tile.constant behind.
func.func @main(%x: !layout.tensor<4x2x16xf32>, %h0: !layout.tensor<2x16xf32>) -> (!layout.tensor<2x16xf32>, !layout.tensor<4x2x16xf32>) {
  %n = graph.constant dense<4> : !layout.tensor<i64>
  %h, %all = graph.loop max_trip_count[%n] initial[%h0] captures[%x] : (!layout.tensor<i64>, !layout.tensor<2x16xf32>, !layout.tensor<4x2x16xf32>) -> (!layout.tensor<2x16xf32>, !layout.tensor<4x2x16xf32>) {
  ^bb0(%i: !layout.tensor<i64>, %go: !layout.tensor<i1>, %h_in: !layout.tensor<2x16xf32>, %x_in: !layout.tensor<4x2x16xf32>):
    %x_t = graph.gather %x_in, %i {axis = 0} : (!layout.tensor<4x2x16xf32>, !layout.tensor<i64>) -> !layout.tensor<2x16xf32>
    %s = graph.add %x_t, %h_in : !layout.tensor<2x16xf32>
    %h_out = graph.tanh %s : !layout.tensor<2x16xf32>
    graph.yield %go, %h_out, %h_out : !layout.tensor<i1>, !layout.tensor<2x16xf32>, !layout.tensor<2x16xf32>
  }
  func.return %h, %all : !layout.tensor<2x16xf32>, !layout.tensor<4x2x16xf32>
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %x: memref<4x2x16xf32, "GM">, %h0: memref<2x16xf32, "GM">
// CHECK-NOT:     tile.constant
// CHECK:         %[[I:.+]] = tile.alloc : memref<i64, "GM">
// CHECK-NEXT:    %[[H:.+]] = tile.alloc : memref<2x16xf32, "GM">
// CHECK:         %[[ALL:[^ ]+]] = tile.alloc : memref<4x2x16xf32, "GM">
// CHECK-NEXT:    "tile.loop_launches"(%[[I]], %h0, %[[H]], %[[NEXT:[^,]+]], %[[NEXT]], %[[ALL]], %x, {{.*}}) <{trip = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, {{[0-9]+}}>}> ({
// CHECK-NEXT:    ^{{.+}}(%[[I_IN:[^:]+]]: memref<i64, "GM">, {{.*}}):
// CHECK:           tile.launch @{{.*gather.*}}(%{{[^,]+}}, %[[I_IN]], %{{[^)]+}})
// CHECK:           tile.launch @{{.*tanh.*}}(
// CHECK-NOT:       tile.alloc
// CHECK:         }) : (
// CHECK-NEXT:    func.return %[[H]], %[[ALL]] : memref<2x16xf32, "GM">, memref<4x2x16xf32, "GM">
// CHECK-DAG:   func.func @{{.*gather.*}}({{.*}}) attributes {tile.kernel = "vector"
// CHECK-DAG:   func.func @{{.*tanh.*}}({{.*}}) attributes {tile.kernel = "vector"
