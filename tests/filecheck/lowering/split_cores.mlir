// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},split-cores' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},split-cores,split-cores' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},split-cores{cores=1}' | filecheck %s --check-prefix=ONE
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},split-cores' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// split-cores on the `test` preset (2 cube cores, 4 vector cores). The conv kernel tiles its
// 9 output rows by 3 (3 trips of the parallel row loop) and, inside it, after loading the
// rows' window into L1, its 2 output-channel tiles (2 trips). Shared out, the row loop
// leaves the busiest core 2 of 3 row tiles, the channel loop (or both collapsed) 1 of 2:
// the channel loop, the fewer loops, wins; block b of n starts at channel tile b and
// strides by n, each core loads every row window, and the launch runs min(2, 2) = 2
// blocks. The second RUN line shows that a split kernel is left alone; with cores=1
// nothing is split.
func.func @main(%x: memref<1x2x9x9x16xf32, "GM">, %w: memref<18x2x16x16xf32, "GM">, %s: memref<3x5xf32, "GM">) -> (memref<1x2x9x9x16xf32, "GM">, memref<3x5xf32, "GM">) {
  %y = tile.alloc : memref<1x2x9x9x16xf32, "GM">
  tile.launch @conv_relu(%x, %w, %y) : memref<1x2x9x9x16xf32, "GM">, memref<18x2x16x16xf32, "GM">, memref<1x2x9x9x16xf32, "GM">
  %t = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @sigmoid(%s, %t) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
  func.return %y, %t : memref<1x2x9x9x16xf32, "GM">, memref<3x5xf32, "GM">
}
func.func @conv_relu(%in0: memref<1x2x9x9x16xf32, "GM">, %v0: memref<18x2x16x16xf32, "GM">, %v2_out: memref<1x2x9x9x16xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<1x2x9x9x16xf32, "GM"> -> !layout.tensor<1x20x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v0_1 = tile.read %v0 : memref<18x2x16x16xf32, "GM"> -> !layout.tensor<24x20x3x3xf32, NCHW -> FRACTAL_Z [18, 2, 16, 16]>
  %v1 = graph.conv2d %in0_1, %v0_1 {pads = [1, 1, 1, 1], layout.kernel = "cube"} : (!layout.tensor<1x20x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>, !layout.tensor<24x20x3x3xf32, NCHW -> FRACTAL_Z [18, 2, 16, 16]>) -> !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v2 = graph.relu %v1 {layout.kernel = "any", layout.shared = "NC1HWC0"} : !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  tile.write %v2 to %v2_out : !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]> to memref<1x2x9x9x16xf32, "GM">
  func.return
}
func.func @sigmoid(%in: memref<3x5xf32, "GM">, %out: memref<3x5xf32, "GM">) attributes {tile.kernel = "vector"} {
  %a = tile.read %in : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
  %b = graph.sigmoid %a : !layout.tensor<3x5xf32>
  tile.write %b to %out : !layout.tensor<3x5xf32> to memref<3x5xf32, "GM">
  func.return
}

// CHECK-LABEL: func.func @main(
// CHECK:         tile.launch @conv_relu(%x, %w, %y) {blocks = 2 : i64}
// CHECK:         tile.launch @sigmoid(%s, %t) :
// CHECK-LABEL: func.func @conv_relu(
// CHECK-NEXT:    %[[B:.+]] = tile.block_idx
// CHECK-NEXT:    %[[N:.+]] = tile.block_num
// CHECK-NOT:     tile.block_idx
// CHECK:         scf.for %oh = %c0 to %c9 step %c3 {
// CHECK:           tile.copy %in0
// CHECK-NEXT:      scf.for %co = %[[B]] to %c2 step %[[N]] {
// CHECK:           } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}
// The 3x5 sigmoid is one tile: no loop to share, one block.
// CHECK-LABEL: func.func @sigmoid(
// CHECK-NOT:     tile.block_idx
// CHECK:         func.return

// ONE-NOT: blocks =
// ONE-NOT: tile.block_idx

// STATS:      split-cores (ran 1x)
// STATS-NEXT:   split-kernels         1
// STATS-NEXT:   blocks                2
// STATS-NEXT:   single-block-kernels  1
