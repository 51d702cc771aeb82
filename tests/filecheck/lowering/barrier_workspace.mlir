// RUN: tilegraph-opt %s -p 'tile-kernels,plan-memory' | filecheck %s

// A soft all-core barrier's GM workspace (lowering/analysis/barrier_workspace.py): the
// forward RNN of hidden 32 on 310P is shared over two AI cores (one hidden fractal each),
// which meet at a soft barrier after each step's stores. tile-kernels gives the kernel a
// last argument %sync_workspace of 2 blocks x 32 bytes (16 x i32, Ascend C's SyncAll:
// at least cores x 32 bytes) used by every barrier, and allocates it before the launch;
// plan-memory places it in the host's GM workspace like the buffers the launch writes
// (its 64 bytes after the 768 + 256 of Y and Y_h) and reports it as barrier_workspace;
// the launch has the runtime zero-fill it first (zero_fill: its position), and the
// kernel's UB workspace of as many bytes (Ascend C's ubWorkspace) is a UB buffer of it.
module attributes {tilegraph.target = {platform = "ascend310p", precision = "origin"}} {
  func.func @main(%in0: memref<3x2x12xf32, "GM">, %in1: memref<1x2x32xf32, "GM">, %w: memref<1x32x12xf32, "GM">, %r: memref<1x32x32xf32, "GM">, %b: memref<1x64xf32, "GM">) -> (memref<3x1x2x32xf32, "GM">, memref<1x2x32xf32, "GM">) attributes {tile.signature = (!layout.tensor<3x2x12xf32>, !layout.tensor<1x2x32xf32>, !layout.tensor<1x32x12xf32>, !layout.tensor<1x32x32xf32>, !layout.tensor<1x64xf32>) -> (!layout.tensor<3x1x2x32xf32>, !layout.tensor<1x2x32xf32>)} {
    %y = tile.alloc : memref<3x1x2x32xf32, "GM">
    %y_h = tile.alloc : memref<1x2x32xf32, "GM">
    tile.launch @rnn_1(%in0, %w, %r, %b, %in1, %y, %y_h) : memref<3x2x12xf32, "GM">, memref<1x32x12xf32, "GM">, memref<1x32x32xf32, "GM">, memref<1x64xf32, "GM">, memref<1x2x32xf32, "GM">, memref<3x1x2x32xf32, "GM">, memref<1x2x32xf32, "GM">
    func.return %y, %y_h : memref<3x1x2x32xf32, "GM">, memref<1x2x32xf32, "GM">
  }
  func.func @rnn_1(%in0: memref<3x2x12xf32, "GM">, %v0: memref<1x32x12xf32, "GM">, %v1: memref<1x32x32xf32, "GM">, %v2: memref<1x64xf32, "GM">, %in1: memref<1x2x32xf32, "GM">, %v3_out: memref<3x1x2x32xf32, "GM">, %v3_out_1: memref<1x2x32xf32, "GM">) attributes {tile.kernel = "cube"} {
    %in0_1 = tile.read %in0 : memref<3x2x12xf32, "GM"> -> !layout.tensor<3x2x12xf32>
    %v0_1 = tile.read %v0 : memref<1x32x12xf32, "GM"> -> !layout.tensor<1x32x12xf32>
    %v1_1 = tile.read %v1 : memref<1x32x32xf32, "GM"> -> !layout.tensor<1x32x32xf32>
    %v2_1 = tile.read %v2 : memref<1x64xf32, "GM"> -> !layout.tensor<1x64xf32>
    %in1_1 = tile.read %in1 : memref<1x2x32xf32, "GM"> -> !layout.tensor<1x2x32xf32>
    %v3, %v3_1 = graph.rnn %in0_1, %v0_1, %v1_1, %v2_1, none, %in1_1 {hidden_size = 32, direction = "forward", layout.kernel = "origin"} : (!layout.tensor<3x2x12xf32>, !layout.tensor<1x32x12xf32>, !layout.tensor<1x32x32xf32>, !layout.tensor<1x64xf32>, !layout.tensor<1x2x32xf32>) -> (!layout.tensor<3x1x2x32xf32>, !layout.tensor<1x2x32xf32>)
    tile.write %v3 to %v3_out : !layout.tensor<3x1x2x32xf32> to memref<3x1x2x32xf32, "GM">
    tile.write %v3_1 to %v3_out_1 : !layout.tensor<1x2x32xf32> to memref<1x2x32xf32, "GM">
    func.return
  }
}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tile.memory = {peak = 1088 : i64, {{.*}}, barrier_workspace = 64 : i64}
// CHECK:         %workspace = tile.alloc : memref<1088xi8, "GM">
// CHECK:         %sync_workspace = tile.view %workspace[1024] : memref<1088xi8, "GM"> to memref<16xi32, "GM">
// CHECK-NEXT:    tile.launch @rnn_1(%in0, %w, %r, %b, %in1, %y, %y_h, %sync_workspace) {zero_fill = [7 : i64], blocks = 2 : i64}

// CHECK-LABEL: func.func @rnn_1(
// CHECK-SAME:    %sync_workspace: memref<16xi32, "GM">)
// CHECK-SAME:    tile.blocks = 2 : i64
// CHECK:         %sync_ub_workspace = tile.alloc {{.*}}: memref<16xi32, "UB">
// CHECK:         tile.sync_all %sync_workspace, %sync_ub_workspace : memref<16xi32, "GM">, memref<16xi32, "UB"> {mode = "soft", cores = "all"}
// CHECK:         scf.for
// CHECK:           tile.sync_all %sync_workspace, %sync_ub_workspace : memref<16xi32, "GM">, memref<16xi32, "UB"> {mode = "soft", cores = "all"}
