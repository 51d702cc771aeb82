// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},split-cores' | filecheck %s

// A mix kernel on the test preset (2 cube + 4 vector cores: core groups of 1 AIC : 2 AIV,
// like 910B's 24 + 48). tile-kernels makes the launch a mix launch with aiv_blocks = 2 (one
// group, two AIVs); split-cores shares the 2 output-row tiles out over the 2 AIC blocks and
// the same loop of the AIV part, and sets aiv_blocks = 2 * blocks. The AIV part tells its two
// instances apart with tile.sub_block_idx (each copies and stores one of the tile's 2 rows);
// its tile.block_idx is the group index, as the AIC part's. Each group gets its own region
// of the workspace (2 slots of 128 floats): the workspace grows to 2 x 2 slots, and both
// parts offset every access by the group's region (block * 2 slots on the AIC's leading
// index, block * 256 floats on the AIV's flat offset).
func.func @main(%x: memref<1x2x9x9x16xf32, "GM">, %w: memref<18x1x16x16xf32, "GM">) -> memref<1x8x4x4xf32, "GM"> {
  %y = tile.alloc : memref<1x8x4x4xf32, "GM">
  tile.launch @conv_stride2_to_nchw(%x, %w, %y) : memref<1x2x9x9x16xf32, "GM">, memref<18x1x16x16xf32, "GM">, memref<1x8x4x4xf32, "GM">
  func.return %y : memref<1x8x4x4xf32, "GM">
}
func.func @conv_stride2_to_nchw(%v2: memref<1x2x9x9x16xf32, "GM">, %v3: memref<18x1x16x16xf32, "GM">, %v4_out: memref<1x8x4x4xf32, "GM">) attributes {tile.kernel = "cube"} {
  %v2_1 = tile.read %v2 : memref<1x2x9x9x16xf32, "GM"> -> !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v3_1 = tile.read %v3 : memref<18x1x16x16xf32, "GM"> -> !layout.tensor<8x24x3x3xf32, NCHW -> FRACTAL_Z [18, 1, 16, 16]>
  %v4 = graph.conv2d %v2_1, %v3_1 {strides = [2, 2], layout.kernel = "cube"} : (!layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>, !layout.tensor<8x24x3x3xf32, NCHW -> FRACTAL_Z [18, 1, 16, 16]>) -> !layout.tensor<1x8x4x4xf32, NCHW -> NC1HWC0 [1, 1, 4, 4, 16]>
  %v4_1 = layout.trans_data %v4 : !layout.tensor<1x8x4x4xf32, NCHW -> NC1HWC0 [1, 1, 4, 4, 16]> -> !layout.tensor<1x8x4x4xf32, NCHW>
  tile.write %v4_1 to %v4_out : !layout.tensor<1x8x4x4xf32, NCHW> to memref<1x8x4x4xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @main(
// CHECK:         tile.launch @conv_stride2_to_nchw_mix_aic({{.+}}) {aiv = @conv_stride2_to_nchw_mix_aiv, aiv_blocks = 4 : i64, blocks = 2 : i64}
// CHECK-LABEL: func.func @conv_stride2_to_nchw_mix_aic(
// CHECK-SAME:    %workspace: memref<4x1x2x4x16xf32, "GM">
// CHECK-NOT:     tile.sub_block_idx
// CHECK:         %[[B:.+]] = tile.block_idx
// CHECK:         %[[REGION:.+]] = arith.muli %[[B]], %[[SLOTS:.+]] : index
// CHECK:         scf.for %{{.+}} = %{{.+}} to %c4 step %{{.+}} {
// CHECK:           %[[AT:.+]] = arith.addi %[[REGION]], %ws_slot
// CHECK-NEXT:      tile.fixpipe %{{.+}} to %workspace[%[[AT]], {{.+}}]
// CHECK-LABEL: func.func @conv_stride2_to_nchw_mix_aiv(
// CHECK-SAME:    %workspace: memref<4x1x2x4x16xf32, "GM">
// CHECK:         %[[GROUP:.+]] = tile.block_idx
// CHECK-NEXT:    %[[GROUPS:.+]] = tile.block_num
// CHECK-NEXT:    %[[SIZE:.+]] = arith.constant 256 : index
// CHECK-NEXT:    %ws_region = arith.muli %[[GROUP]], %[[SIZE]] : index
// CHECK:         scf.for %[[OH:.+]] = %{{.+}} to %c4 step %{{.+}} {
// CHECK:           tile.sync_block_wait[%{{.+}}] {flag = 0 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
// CHECK-NEXT:      %[[SUB:.+]] = tile.sub_block_idx
// CHECK:           %[[AT2:.+]] = arith.addi %ws_region, %{{.+}} : index
// CHECK-NEXT:      tile.copy_flat %workspace[%[[AT2]]] to %{{.+}}[%c0] {count = 64 : i64}
// CHECK-NEXT:      tile.sync_block_set[%{{.+}}] {flag = 2 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:      %[[ROW:.+]] = arith.addi %[[OH]], %[[SUB]]
// CHECK-NEXT:      tile.store_5hd %{{.+}} to %v4_out[%c0, %c0, %[[ROW]], %c0]
