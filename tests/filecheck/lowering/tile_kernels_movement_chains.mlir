// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Movement chains (tiling/movement_maps.py) on the `test` preset: a kernel of slices, pads,
// expands, tiles, splits and concats is one nest per box of its output, each box reading
// its GM input through the per-axis maps of the chain composed (no intermediate in GM or
// UB). Inputs as lower-graph-to-kernels writes them after O2.

// ---- torch.roll(x, 5, dim=1) as exported: slice(32:37), slice(0:32), concat -----------
// Two boxes: rows 0..4 of the output read input rows 32..36, rows 5..36 read rows 0..31
// (in tiles of 22 rows that divide the box's 32: the box stops before the output's end).
func.func @fused_slice_concat_0(%in0: memref<3x37x45xf32, "GM">, %v8_out: memref<3x37x45xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[32]> : !layout.tensor<1xi64>
  %v1 = graph.constant dense<[37]> : !layout.tensor<1xi64>
  %v2 = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %v4 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %in0_1 = tile.read %in0 : memref<3x37x45xf32, "GM"> -> !layout.tensor<3x37x45xf32>
  %v3 = graph.slice %in0_1, %v0, %v1, %v2 {layout.kernel = "origin"} : (!layout.tensor<3x37x45xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x5x45xf32>
  %v7 = graph.slice %in0_1, %v4, %v0, %v2 {layout.kernel = "origin"} : (!layout.tensor<3x37x45xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x32x45xf32>
  %v8 = graph.concat %v3, %v7 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<3x5x45xf32>, !layout.tensor<3x32x45xf32>) -> !layout.tensor<3x37x45xf32>
  tile.write %v8 to %v8_out : !layout.tensor<3x37x45xf32> to memref<3x37x45xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @fused_slice_concat_0(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 9 : i64, tile.ops = "graph.slice,graph.slice,graph.concat"
// CHECK-NOT:     graph.
// CHECK:         scf.for %[[A:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      tile.copy %in0[%[[A]], %c32, %c0] to %[[W0:[^\[]+]][%c0, %c0, %c0] : memref<3x37x45xf32, "GM"> to memref<1x5x45xf32, "UB">
// CHECK-NEXT:      tile.copy %[[W0]][%c0, %c0, %c0] to %v8_out[%[[A]], %c0, %c0] : memref<1x5x45xf32, "UB"> to memref<3x37x45xf32, "GM">
// CHECK-NEXT:    } {tile.parallel}
// CHECK-NEXT:    scf.for %[[B:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      scf.for %[[R:.+]] = %c0 to %c32 step %c22 {
// CHECK-NEXT:        tile.copy %in0[%[[B]], %[[R]], %c0] to %[[W1:[^\[]+]][%c0, %c0, %c0] : memref<3x37x45xf32, "GM"> to memref<1x22x45xf32, "UB">
// CHECK-NEXT:        %[[O:.+]] = arith.addi %[[R]], %c5 : index
// CHECK-NEXT:        tile.copy %[[W1]][%c0, %c0, %c0] to %v8_out[%[[B]], %[[O]], %c0] : memref<1x22x45xf32, "UB"> to memref<3x37x45xf32, "GM">
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- LongT5's three blocks: pad the blocks axis by one (value 1.5), slices 0:5, 1:6, 2:7 -
// ---- of it side by side (concat on axis 2) ---------------------------------------------
// Three boxes: the previous blocks read from block -1 (the DMA fills the window's rows
// before the input with the pad value), the current ones as they are (every read inside
// the input: a plain copy), the next ones from block 1 (filled past the input's end).
func.func @fused_pad_slice_concat_0(%in0: memref<3x5x7x6xf32, "GM">, %v15_out: memref<3x5x21x6xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v1 = graph.constant dense<[0, 1, 0, 0, 0, 1, 0, 0]> : !layout.tensor<8xi64>
  %v0 = graph.constant dense<1.5> : !layout.tensor<f32>
  %v3 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %v4 = graph.constant dense<[5]> : !layout.tensor<1xi64>
  %v5 = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %v8 = graph.constant dense<[6]> : !layout.tensor<1xi64>
  %v11 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %v12 = graph.constant dense<[7]> : !layout.tensor<1xi64>
  %in0_1 = tile.read %in0 : memref<3x5x7x6xf32, "GM"> -> !layout.tensor<3x5x7x6xf32>
  %v2 = graph.pad %in0_1, %v1, %v0 {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<3x5x7x6xf32>, !layout.tensor<8xi64>, !layout.tensor<f32>) -> !layout.tensor<3x7x7x6xf32>
  %v6 = graph.slice %v2, %v3, %v4, %v5 {layout.kernel = "origin"} : (!layout.tensor<3x7x7x6xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x5x7x6xf32>
  %v10 = graph.slice %v2, %v5, %v8, %v5 {layout.kernel = "origin"} : (!layout.tensor<3x7x7x6xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x5x7x6xf32>
  %v14 = graph.slice %v2, %v11, %v12, %v5 {layout.kernel = "origin"} : (!layout.tensor<3x7x7x6xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<3x5x7x6xf32>
  %v15 = graph.concat %v6, %v10, %v14 {axis = 2, layout.kernel = "origin"} : (!layout.tensor<3x5x7x6xf32>, !layout.tensor<3x5x7x6xf32>, !layout.tensor<3x5x7x6xf32>) -> !layout.tensor<3x5x21x6xf32>
  tile.write %v15 to %v15_out : !layout.tensor<3x5x21x6xf32> to memref<3x5x21x6xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @fused_pad_slice_concat_0(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 9 : i64, tile.ops = "graph.pad,graph.slice,graph.slice,graph.slice,graph.concat"
// CHECK-NOT:     graph.
// CHECK:         tile.copy %in0[%{{.+}}, %cm1, %c0, %c0] to %{{.+}} {pad = 1.500000e+00 : f64} : memref<3x5x7x6xf32, "GM"> to memref<1x5x7x6xf32, "UB">
// CHECK-NEXT:    tile.copy %{{.+}} to %v15_out[%{{.+}}, %c0, %c0, %c0] :
// CHECK:         tile.copy %in0[%{{.+}}, %c0, %c0, %c0] to %{{[a-z_0-9]+}}[%c0, %c0, %c0, %c0] : memref<3x5x7x6xf32, "GM">
// CHECK-NEXT:    tile.copy %{{.+}} to %v15_out[%{{.+}}, %c0, %c7, %c0] :
// CHECK:         tile.copy %in0[%{{.+}}, %c1, %c0, %c0] to %{{.+}} {pad = 1.500000e+00 : f64} :
// CHECK-NEXT:    tile.copy %{{.+}} to %v15_out[%{{.+}}, %c0, %c14, %c0] :

// -----

// ---- refused: a pad of 1 row before a crop of 2 rows --------------------------------------
// The outer pad's border row would read input row 1 (real data, cropped by the inner pad)
// where the fill belongs: no box reads it, so the kernel stays with its reason
// (lower-graph-to-kernels splits such a group into a kernel per pad).
func.func @fused_pad_0(%in0: memref<3x17x10xf32, "GM">, %v3_out: memref<3x16x10xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[0, -2, 0, 0, 0, 0]> : !layout.tensor<6xi64>
  %v2 = graph.constant dense<[0, 1, 0, 0, 0, 0]> : !layout.tensor<6xi64>
  %in0_1 = tile.read %in0 : memref<3x17x10xf32, "GM"> -> !layout.tensor<3x17x10xf32>
  %v1 = graph.pad %in0_1, %v0 {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<3x17x10xf32>, !layout.tensor<6xi64>) -> !layout.tensor<3x15x10xf32>
  %v3 = graph.pad %v1, %v2 {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<3x15x10xf32>, !layout.tensor<6xi64>) -> !layout.tensor<3x16x10xf32>
  tile.write %v3 to %v3_out : !layout.tensor<3x16x10xf32> to memref<3x16x10xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @fused_pad_0(
// CHECK-SAME:    tile.kernel = "host", tile.host_reason = "a pad around a border the source's edge cannot fill"
