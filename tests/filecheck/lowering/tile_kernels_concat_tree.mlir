// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Concat trees (tiling/concat_tree.py, concat_boxes.py) on the `test` preset: a kernel of
// several concats and the slices / views between them is one nest per box of a leaf,
// each stored into a `tile.strided_view` of the output (no intermediate in GM).
// Inputs as lower-graph-to-kernels writes them after O2.

// ---- YOLOv8's head, small: per scale a 5HD box map (7 channels) ++ a class map -------
// ---- (5 channels: 5HD, or NCHW), flattened to [N, C, H*W]; the scales on axis 2 --------
func.func @fused_trans_data_concat_reshape_concat_etc_0(%in0: memref<2x1x3x2x16xf32, "GM">, %in1: memref<2x1x3x2x16xf32, "GM">, %in2: memref<2x1x2x2x16xf32, "GM">, %in3: memref<2x5x2x2xf32, "GM">, %v5_out: memref<2x12x10xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2, 12, -1]> : !layout.tensor<3xi64>
  %in0_1 = tile.read %in0 : memref<2x1x3x2x16xf32, "GM"> -> !layout.tensor<2x7x3x2xf32, NCHW -> NC1HWC0 [2, 1, 3, 2, 16]>
  %in1_1 = tile.read %in1 : memref<2x1x3x2x16xf32, "GM"> -> !layout.tensor<2x5x3x2xf32, NCHW -> NC1HWC0 [2, 1, 3, 2, 16]>
  %in2_1 = tile.read %in2 : memref<2x1x2x2x16xf32, "GM"> -> !layout.tensor<2x7x2x2xf32, NCHW -> NC1HWC0 [2, 1, 2, 2, 16]>
  %in3_1 = tile.read %in3 : memref<2x5x2x2xf32, "GM"> -> !layout.tensor<2x5x2x2xf32, NCHW>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<2x7x3x2xf32, NCHW -> NC1HWC0 [2, 1, 3, 2, 16]> -> !layout.tensor<2x7x3x2xf32, NCHW>
  %in1_2 = layout.trans_data %in1_1 : !layout.tensor<2x5x3x2xf32, NCHW -> NC1HWC0 [2, 1, 3, 2, 16]> -> !layout.tensor<2x5x3x2xf32, NCHW>
  %in2_2 = layout.trans_data %in2_1 : !layout.tensor<2x7x2x2xf32, NCHW -> NC1HWC0 [2, 1, 2, 2, 16]> -> !layout.tensor<2x7x2x2xf32, NCHW>
  %v1 = graph.concat %in0_2, %in1_2 {axis = 1, layout.kernel = "any"} : (!layout.tensor<2x7x3x2xf32, NCHW>, !layout.tensor<2x5x3x2xf32, NCHW>) -> !layout.tensor<2x12x3x2xf32, NCHW>
  %v2 = graph.reshape %v1, %v0 {layout.kernel = "origin"} : (!layout.tensor<2x12x3x2xf32, NCHW>, !layout.tensor<3xi64>) -> !layout.tensor<2x12x6xf32>
  %v3 = graph.concat %in2_2, %in3_1 {axis = 1, layout.kernel = "any"} : (!layout.tensor<2x7x2x2xf32, NCHW>, !layout.tensor<2x5x2x2xf32, NCHW>) -> !layout.tensor<2x12x2x2xf32, NCHW>
  %v4 = graph.reshape %v3, %v0 {layout.kernel = "origin"} : (!layout.tensor<2x12x2x2xf32, NCHW>, !layout.tensor<3xi64>) -> !layout.tensor<2x12x4xf32>
  %v5 = graph.concat %v2, %v4 {axis = 2, layout.kernel = "any"} : (!layout.tensor<2x12x6xf32>, !layout.tensor<2x12x4xf32>) -> !layout.tensor<2x12x10xf32>
  tile.write %v5 to %v5_out : !layout.tensor<2x12x10xf32> to memref<2x12x10xf32, "GM">
  func.return
}
// One nest per input, none through GM between: each 5HD map is loaded whole and stored as
// NCHW (store_5hd) into the view of the output its place is (the first scale's box map at
// column 0 of rows 0..6, its class map at rows 7..11 = offset 70, the second scale's maps
// at column 6 = offsets 6 and 76); the NCHW class map is a plain copy.
// CHECK-LABEL: func.func @fused_trans_data_concat_reshape_concat_etc_0(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "layout.trans_data,layout.trans_data,layout.trans_data,graph.concat,graph.reshape,graph.concat,graph.reshape,graph.concat"
// CHECK-NOT:     graph.
// CHECK-DAG:     %[[P0:.+]] = tile.strided_view %v5_out : memref<2x12x10xf32, "GM"> to memref<2x7x3x2xf32, strided<[120, 10, 2, 1]>, "GM">
// CHECK-DAG:     %[[P1:.+]] = tile.strided_view %v5_out : memref<2x12x10xf32, "GM"> to memref<2x5x3x2xf32, strided<[120, 10, 2, 1], offset: 70>, "GM">
// CHECK-DAG:     %[[P2:.+]] = tile.strided_view %v5_out : memref<2x12x10xf32, "GM"> to memref<2x7x2x2xf32, strided<[120, 10, 2, 1], offset: 6>, "GM">
// CHECK-DAG:     %[[P3:.+]] = tile.strided_view %v5_out : memref<2x12x10xf32, "GM"> to memref<2x5x2x2xf32, strided<[120, 10, 2, 1], offset: 76>, "GM">
// CHECK:         tile.store_5hd %{{.+}} to %[[P0]][
// CHECK:         tile.store_5hd %{{.+}} to %[[P1]][
// CHECK:         tile.store_5hd %{{.+}} to %[[P2]][
// CHECK:         tile.copy %{{.+}} to %[[P3]][

// -----

// ---- Swin's window reverse, small: 2 windows of 2 x 2 back into a 2 x 4 map, rolled --
// ---- by 1 along W -------------------------------------------------------------------
func.func @fused_transpose_reshape_slice_concat_0(%in0: memref<2x2x2x3xf32, "GM">, %v13_out: memref<1x2x4x3xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v4_k1 = graph.constant dense<[1, 2, 4, 3]> : !layout.tensor<4xi64>
  %v5 = graph.constant dense<[3]> : !layout.tensor<1xi64>
  %v6 = graph.constant dense<[4]> : !layout.tensor<1xi64>
  %v7 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %v9 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %in0_1 = tile.read %in0 : memref<2x2x2x3xf32, "GM"> -> !layout.tensor<2x2x2x3xf32>
  %v4_k0 = graph.transpose %in0_1 {perm = [1, 0, 2, 3], layout.kernel = "origin"} : !layout.tensor<2x2x2x3xf32>
  %v4 = graph.reshape %v4_k0, %v4_k1 {layout.kernel = "origin"} : (!layout.tensor<2x2x2x3xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x2x4x3xf32>
  %v8 = graph.slice %v4, %v5, %v6, %v7 {layout.kernel = "any"} : (!layout.tensor<1x2x4x3xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x2x1x3xf32>
  %v12 = graph.slice %v4, %v9, %v5, %v7 {layout.kernel = "any"} : (!layout.tensor<1x2x4x3xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<1x2x3x3xf32>
  %v13 = graph.concat %v8, %v12 {axis = 2, layout.kernel = "any"} : (!layout.tensor<1x2x1x3xf32>, !layout.tensor<1x2x3x3xf32>) -> !layout.tensor<1x2x4x3xf32>
  tile.write %v13 to %v13_out : !layout.tensor<1x2x4x3xf32> to memref<1x2x4x3xf32, "GM">
  func.return
}
// Three boxes, copies between strided views: output column 0 reads the map's column 3
// (window 1, its column 1: offset 15, rows of the windows 6 apart); columns 1..2 read
// window 0 whole (its two columns as a dim of their own); column 3 reads window 1's
// column 0 (offset 12).
// CHECK-LABEL: func.func @fused_transpose_reshape_slice_concat_0(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 3 : i64, tile.ops = "graph.transpose,graph.reshape,graph.slice,graph.slice,graph.concat"
// CHECK-NOT:     graph.
// CHECK-DAG:     %[[P0:.+]] = tile.strided_view %v13_out : memref<1x2x4x3xf32, "GM"> to memref<1x2x1x3xf32, strided<[24, 12, 3, 1]>, "GM">
// CHECK-DAG:     %[[R0:.+]] = tile.strided_view %in0 : memref<2x2x2x3xf32, "GM"> to memref<1x2x1x3xf32, strided<[1, 6, 1, 1], offset: 15>, "GM">
// CHECK-DAG:     %[[P1:.+]] = tile.strided_view %v13_out : memref<1x2x4x3xf32, "GM"> to memref<1x2x1x2x3xf32, strided<[24, 12, 6, 3, 1], offset: 3>, "GM">
// CHECK-DAG:     %[[R1:.+]] = tile.strided_view %in0 : memref<2x2x2x3xf32, "GM"> to memref<1x2x1x2x3xf32, strided<[1, 6, 1, 3, 1]>, "GM">
// CHECK-DAG:     %[[P2:.+]] = tile.strided_view %v13_out : memref<1x2x4x3xf32, "GM"> to memref<1x2x1x3xf32, strided<[24, 12, 3, 1], offset: 9>, "GM">
// CHECK-DAG:     %[[R2:.+]] = tile.strided_view %in0 : memref<2x2x2x3xf32, "GM"> to memref<1x2x1x3xf32, strided<[1, 6, 1, 1], offset: 12>, "GM">
// CHECK:         tile.copy %[[R0]][
// CHECK-NEXT:    tile.copy %{{.+}} to %[[P0]][
// CHECK:         tile.copy %[[R1]][
// CHECK-NEXT:    tile.copy %{{.+}} to %[[P1]][
// CHECK:         tile.copy %[[R2]][
// CHECK-NEXT:    tile.copy %{{.+}} to %[[P2]][

// -----

// ---- two concats, then their last two axes swapped ------------------------------------
// The first two inputs' rows run along the output's second axis: each is loaded in its own
// order, transposed on UB (vtranspose) and stored; the third input's one row is a column of
// the output (place and read of one element per row).
func.func @fused_concat_concat_transpose_0(%in0: memref<2x3x4xf32, "GM">, %in1: memref<2x3x2xf32, "GM">, %in2: memref<2x1x6xf32, "GM">, %v2_out: memref<2x6x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<2x3x4xf32, "GM"> -> !layout.tensor<2x3x4xf32>
  %in1_1 = tile.read %in1 : memref<2x3x2xf32, "GM"> -> !layout.tensor<2x3x2xf32>
  %in2_1 = tile.read %in2 : memref<2x1x6xf32, "GM"> -> !layout.tensor<2x1x6xf32>
  %v0 = graph.concat %in0_1, %in1_1 {axis = 2, layout.kernel = "origin"} : (!layout.tensor<2x3x4xf32>, !layout.tensor<2x3x2xf32>) -> !layout.tensor<2x3x6xf32>
  %v1 = graph.concat %v0, %in2_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<2x3x6xf32>, !layout.tensor<2x1x6xf32>) -> !layout.tensor<2x4x6xf32>
  %v2 = graph.transpose %v1 {perm = [0, 2, 1], layout.kernel = "origin"} : (!layout.tensor<2x4x6xf32>) -> !layout.tensor<2x6x4xf32>
  tile.write %v2 to %v2_out : !layout.tensor<2x6x4xf32> to memref<2x6x4xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @fused_concat_concat_transpose_0(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 3 : i64, tile.ops = "graph.concat,graph.concat,graph.transpose"
// CHECK-NOT:     graph.
// CHECK-DAG:     %[[P0:.+]] = tile.strided_view %v2_out : memref<2x6x4xf32, "GM"> to memref<2x4x3xf32, strided<[24, 4, 1]>, "GM">
// CHECK-DAG:     %[[P1:.+]] = tile.strided_view %v2_out : memref<2x6x4xf32, "GM"> to memref<2x2x3xf32, strided<[24, 4, 1], offset: 16>, "GM">
// CHECK-DAG:     %[[P2:.+]] = tile.strided_view %v2_out : memref<2x6x4xf32, "GM"> to memref<2x6x1xf32, strided<[24, 4, 1], offset: 3>, "GM">
// CHECK:         tile.copy %{{.+}} to %[[I0:[^\[]+]][%c0, %c0, %c0] : memref<2x3x4xf32, strided<[12, 4, 1]>, "GM"> to memref<2x3x4xf32, "UB">
// CHECK-NEXT:    tile.vtranspose %[[I0]] to %[[O0:[^ ]+]] {perm = array<i64: 0, 2, 1>}
// CHECK-NEXT:    tile.copy %[[O0]][%c0, %c0, %c0] to %[[P0]][
// CHECK:         tile.vtranspose
// CHECK-NEXT:    tile.copy %{{.+}} to %[[P1]][
// CHECK:         tile.copy %{{.+}} to %[[P2]][

// -----

// ---- refused: a concat input read every second element of its rows, transposed -------
// No dim of its read is contiguous (a step-2 slice of the last axis, that axis then the
// output's second): the kernel stays with its reason (lower-graph-to-kernels splits such a
// group into the kernels its ops take).
func.func @fused_slice_concat_concat_transpose_0(%in0: memref<2x3x8xf32, "GM">, %in1: memref<2x3x2xf32, "GM">, %in2: memref<2x1x6xf32, "GM">, %v3_out: memref<2x6x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %c1 = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %c2 = graph.constant dense<[8]> : !layout.tensor<1xi64>
  %c3 = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %in0_1 = tile.read %in0 : memref<2x3x8xf32, "GM"> -> !layout.tensor<2x3x8xf32>
  %in1_1 = tile.read %in1 : memref<2x3x2xf32, "GM"> -> !layout.tensor<2x3x2xf32>
  %in2_1 = tile.read %in2 : memref<2x1x6xf32, "GM"> -> !layout.tensor<2x1x6xf32>
  %s = graph.slice %in0_1, %c1, %c2, %c3, %c3 {layout.kernel = "origin"} : (!layout.tensor<2x3x8xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<2x3x4xf32>
  %v0 = graph.concat %s, %in1_1 {axis = 2, layout.kernel = "origin"} : (!layout.tensor<2x3x4xf32>, !layout.tensor<2x3x2xf32>) -> !layout.tensor<2x3x6xf32>
  %v2 = graph.concat %v0, %in2_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<2x3x6xf32>, !layout.tensor<2x1x6xf32>) -> !layout.tensor<2x4x6xf32>
  %v3 = graph.transpose %v2 {perm = [0, 2, 1], layout.kernel = "origin"} : (!layout.tensor<2x4x6xf32>) -> !layout.tensor<2x6x4xf32>
  tile.write %v3 to %v3_out : !layout.tensor<2x6x4xf32> to memref<2x6x4xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @fused_slice_concat_concat_transpose_0(
// CHECK-SAME:    tile.kernel = "host", tile.host_reason = "a concat input read through a view whose rows are not contiguous"
