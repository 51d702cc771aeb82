// RUN: tilegraph-opt %s -p 'set-target{platform=test},lower-graph-to-kernels,tile-kernels,plan-memory' | filecheck %s
// RUN: tilegraph-opt %s -p 'lower-graph-to-kernels,plan-memory' | filecheck %s --check-prefix=MACRO

// plan-memory after tile-kernels: the kernels' macro bodies are gone, and whether a kernel
// is elementwise is read from its tile.ops. Four lone ops on 40x64 f32 (10240 B each),
// tiled for the `test` preset (5 or 6 tiles per kernel): exp and relu are elementwise, so
// relu writes over exp's result, which dies there; the transpose reads rows and writes
// columns (not elementwise), so its result gets a place of its own; sigmoid writes over
// the transpose's result. Peak 2 x 10240 B = the lower bound; no reuse 4 x 10240 B.
// Before tile-kernels (MACRO) the macro bodies say the same, and the plan is the same.
func.func @main(%x: !layout.tensor<40x64xf32>) -> !layout.tensor<64x40xf32> {
  %a = graph.exp %x : !layout.tensor<40x64xf32>
  %b = graph.relu %a : !layout.tensor<40x64xf32>
  %c = graph.transpose %b {perm = [1, 0]} : (!layout.tensor<40x64xf32>) -> !layout.tensor<64x40xf32>
  %d = graph.sigmoid %c : !layout.tensor<64x40xf32>
  func.return %d : !layout.tensor<64x40xf32>
}

// CHECK-LABEL: func.func @main(%x: memref<40x64xf32, "GM">)
// CHECK-SAME:    tile.memory = {peak = 20480 : i64, lower_bound = 20480 : i64, no_reuse = 40960 : i64, constants = 0 : i64, in_place = 2 : i64, buffers = 4 : i64, arguments = 10240 : i64}
// CHECK-NEXT:    %workspace = tile.alloc : memref<20480xi8, "GM">
// CHECK-NEXT:    %a = tile.view %workspace[0] : memref<20480xi8, "GM"> to memref<40x64xf32, "GM">
// CHECK-NEXT:    tile.launch @[[EXP:exp[_0-9]*]](%x, %a)
// CHECK-NEXT:    %b = tile.view %workspace[0] : memref<20480xi8, "GM"> to memref<40x64xf32, "GM">
// CHECK-NEXT:    tile.launch @[[RELU:relu[_0-9]*]](%a, %b)
// CHECK-NEXT:    %c = tile.view %workspace[10240] : memref<20480xi8, "GM"> to memref<64x40xf32, "GM">
// CHECK-NEXT:    tile.launch @[[TRANSPOSE:transpose[_0-9]*]](%b, %c)
// CHECK-NEXT:    %d = tile.view %workspace[10240] : memref<20480xi8, "GM"> to memref<64x40xf32, "GM">
// CHECK-NEXT:    tile.launch @[[SIGMOID:sigmoid[_0-9]*]](%c, %d)
// CHECK-NEXT:    func.return %d : memref<64x40xf32, "GM">
// CHECK:       func.func @[[EXP]](
// CHECK-SAME:    tile.ops = "graph.exp"
// CHECK:       func.func @[[RELU]](
// CHECK-SAME:    tile.ops = "graph.relu"
// CHECK:       func.func @[[TRANSPOSE]](
// CHECK-SAME:    tile.ops = "graph.transpose"
// CHECK:       func.func @[[SIGMOID]](
// CHECK-SAME:    tile.ops = "graph.sigmoid"

// MACRO:      tile.memory = {peak = 20480 : i64, lower_bound = 20480 : i64, no_reuse = 40960 : i64, constants = 0 : i64, in_place = 2 : i64
// MACRO-NEXT: %workspace = tile.alloc : memref<20480xi8, "GM">
// MACRO-NEXT: %a = tile.view %workspace[0]
// MACRO:      %b = tile.view %workspace[0]
// MACRO:      %c = tile.view %workspace[10240]
// MACRO:      %d = tile.view %workspace[10240]
// MACRO:      graph.exp
