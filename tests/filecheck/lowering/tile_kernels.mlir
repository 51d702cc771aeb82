// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// tile-kernels on the `test` preset (L1 16 KiB, L0A/L0B 4 KiB, L0C 8 KiB, UB 8 KiB; tiles
// keep each buffer at half of it), one chunk per strategy. The inputs are macro kernels
// as lower-graph-to-kernels writes them after O2 (from small graphs with ragged shapes:
// channels off multiples of 16, rows off the tile height). The checks pin the scoped
// buffers, the loop nest (bounds and steps) and the order of the DMA / cube / vector ops,
// not every index computation. The second RUN line parses the tiled IR back.

// ---- convolution: cube, ReLU in the fixpipe, NC1HWC0 result ------------------------------
// 20 -> 24 channels, 3x3, pad 1 on 9x9: K = 2 C1 x 9 taps = 18 fractals in steps of 1,
// tiles of 3 output rows (M = 27 pixels = 2 fractals) x 1 output-channel fractal.
// The second kernel (stride 2, NCHW result) leaves the accumulator through UB and stores
// it with store_5hd.
func.func @conv_relu(%in0: memref<1x20x9x9xf32, "GM">, %v0: memref<18x2x16x16xf32, "GM">, %v2_out: memref<1x2x9x9x16xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<1x20x9x9xf32, "GM"> -> !layout.tensor<1x20x9x9xf32, NCHW>
  %v0_1 = tile.read %v0 : memref<18x2x16x16xf32, "GM"> -> !layout.tensor<24x20x3x3xf32, NCHW -> FRACTAL_Z [18, 2, 16, 16]>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<1x20x9x9xf32, NCHW> -> !layout.tensor<1x20x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v1 = graph.conv2d %in0_2, %v0_1 {pads = [1, 1, 1, 1], layout.kernel = "cube"} : (!layout.tensor<1x20x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>, !layout.tensor<24x20x3x3xf32, NCHW -> FRACTAL_Z [18, 2, 16, 16]>) -> !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v2 = graph.relu %v1 {layout.kernel = "any", layout.shared = "NC1HWC0"} : !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  tile.write %v2 to %v2_out : !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]> to memref<1x2x9x9x16xf32, "GM">
  func.return
}
func.func @conv_stride2_to_nchw(%v2: memref<1x2x9x9x16xf32, "GM">, %v3: memref<18x1x16x16xf32, "GM">, %v4_out: memref<1x8x4x4xf32, "GM">) attributes {tile.kernel = "cube"} {
  %v2_1 = tile.read %v2 : memref<1x2x9x9x16xf32, "GM"> -> !layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>
  %v3_1 = tile.read %v3 : memref<18x1x16x16xf32, "GM"> -> !layout.tensor<8x24x3x3xf32, NCHW -> FRACTAL_Z [18, 1, 16, 16]>
  %v4 = graph.conv2d %v2_1, %v3_1 {strides = [2, 2], layout.kernel = "cube"} : (!layout.tensor<1x24x9x9xf32, NCHW -> NC1HWC0 [1, 2, 9, 9, 16]>, !layout.tensor<8x24x3x3xf32, NCHW -> FRACTAL_Z [18, 1, 16, 16]>) -> !layout.tensor<1x8x4x4xf32, NCHW -> NC1HWC0 [1, 1, 4, 4, 16]>
  %v4_1 = layout.trans_data %v4 : !layout.tensor<1x8x4x4xf32, NCHW -> NC1HWC0 [1, 1, 4, 4, 16]> -> !layout.tensor<1x8x4x4xf32, NCHW>
  tile.write %v4_1 to %v4_out : !layout.tensor<1x8x4x4xf32, NCHW> to memref<1x8x4x4xf32, "GM">
  func.return
}
// CHECK:       builtin.module attributes {tilegraph.target = {platform = "test", precision = "origin"}}
// CHECK-LABEL: func.func @conv_relu(
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 6 : i64, tile.ops = "layout.trans_data,graph.conv2d,graph.relu"
// CHECK-DAG:     %[[FMAP:.+]] = tile.alloc : memref<1x2x5x9x16xf32, "L1">
// CHECK-DAG:     %[[WL1:.+]] = tile.alloc : memref<1x1x16x16xf32, "L1">
// CHECK-DAG:     %[[A:.+]] = tile.alloc : memref<2x1x16x16xf32, "L0A">
// CHECK-DAG:     %[[B:.+]] = tile.alloc : memref<1x1x16x16xf32, "L0B">
// CHECK-DAG:     %[[C:.+]] = tile.alloc : memref<1x2x16x16xf32, "L0C">
// CHECK-NOT:     "UB"
// CHECK:         scf.for %[[OH:.+]] = %c0 to %c9 step %c3 {
// CHECK:           tile.load_5hd %in0[{{.+}}] to %[[FMAP]] : memref<1x20x9x9xf32, "GM"> to memref<1x2x5x9x16xf32, "L1">
// CHECK:           scf.for %[[CO:.+]] = %c0 to %c2 step %c1 {
// CHECK:             tile.load3d %[[FMAP]][{{.+}}] to %[[A]] {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 9 : i64, channels = 20 : i64}
// CHECK-NEXT:        tile.copy %v0[{{.+}}, %[[CO]], %c0, %c0] to %[[WL1]]
// CHECK-NEXT:        tile.load2d %[[WL1]][%c0, %c0] to %[[B]] {mode = "copy"}
// CHECK-NEXT:        tile.mmad %[[A]], %[[B]], %[[C]], %{{.+}} :
// CHECK:             tile.fixpipe %[[C]] to %v2_out[%c0, %[[CO]], %[[OH]], %c0, %c0] {layout = "nc1hwc0", relu = true, rows = 3 : i64} : memref<1x2x16x16xf32, "L0C"> to memref<1x2x9x9x16xf32, "GM">
// CHECK-NEXT:      }
// CHECK:         }
// CHECK-NEXT:    func.return

// On the test preset (decoupled, like 910B) the NCHW store needs the vector unit: a mix
// kernel. The AIC part ends in a fixpipe into a 2-slot GM workspace between cross-core
// flags; the AIV part reads the slot into UB and stores NCHW.
// CHECK-LABEL: func.func @conv_stride2_to_nchw_mix_aic(
// CHECK-SAME:    %workspace: memref<2x1x2x4x16xf32, "GM">
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 2 : i64, {{.*}}tile.mix = "aic"
// CHECK-NOT:     "UB"
// CHECK-DAG:     %[[C2:.+]] = tile.alloc : memref<1x1x16x16xf32, "L0C">
// CHECK:         scf.for %[[OH2:.+]] = %c0 to %c4 step %c2 {
// CHECK:           tile.copy %v2[{{.+}}] to %{{.+}} : memref<1x2x9x9x16xf32, "GM"> to memref<1x2x5x9x16xf32, "L1">
// CHECK:           tile.load3d {{.+}} {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, {{.+}}, pad_left = 0 : i64, out_width = 4 : i64, channels = 24 : i64}
// CHECK:           tile.mmad
// CHECK:           %[[SLOT:.+]] = arith.remui
// CHECK-NEXT:      tile.sync_block_wait[%[[SLOT]]] {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:      tile.fixpipe %[[C2]] to %workspace[%[[SLOT]], %c0, %c0, %c0, %c0] {layout = "nc1hwc0", rows = 2 : i64}
// CHECK-NEXT:      tile.sync_block_set[%[[SLOT]]] {flag = 0 : i64, mode = "aic_to_aiv", pipe = "FIX"}
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.sync_block_wait {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:    tile.sync_block_wait {flag = 3 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT:    func.return
// The AIV part: the test preset's groups are 1 AIC : 2 AIV, so each AIV copies its share of
// the slot (the tile's 2 rows: one each, at sub-block * 64 elements) and stores its row.
// CHECK-LABEL: func.func @conv_stride2_to_nchw_mix_aiv(
// CHECK-SAME:    tile.kernel = "vector", {{.*}}tile.mix = "aiv"
// CHECK-NOT:     "L{{[01]}}
// CHECK:         %[[SHARE:.+]] = tile.alloc : memref<1x1x1x4x16xf32, "UB">
// CHECK:         tile.sync_block_set {flag = 2 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:    tile.sync_block_set {flag = 3 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:    scf.for %[[OH3:.+]] = %c0 to %c4 step %c2 {
// CHECK:           %[[SLOT:.+]] = arith.muli %ws_slot, %{{.+}}
// CHECK-NEXT:      tile.sync_block_wait[%[[S:.+]]] {flag = 0 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
// CHECK-NEXT:      %[[SUB:.+]] = tile.sub_block_idx
// CHECK-NEXT:      %[[ROWS:.+]] = arith.muli %[[SUB]], %c64
// CHECK-NEXT:      %[[AT:.+]] = arith.addi %[[SLOT]], %[[ROWS]]
// CHECK-NEXT:      tile.copy_flat %workspace[%[[AT]]] to %[[SHARE]][%c0] {count = 64 : i64}
// CHECK-NEXT:      tile.sync_block_set[%[[S]]] {flag = 2 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// CHECK-NEXT:      %[[ROW:.+]] = arith.addi %[[OH3]], %[[SUB]]
// CHECK-NEXT:      tile.store_5hd %[[SHARE]] to %v4_out[%c0, %c0, %[[ROW]], %c0] : memref<1x1x1x4x16xf32, "UB"> to memref<1x8x4x4xf32, "GM">
// CHECK-NEXT:    }

// -----

// ---- matmul: (19 x 40) @ (40 x 75), ND operands through nd2nz -----------------------------
// Base block m1 = 2, n1 = 2, k1 = 1 fractals: N = 5 fractals in 3 tiles (the last one
// ragged), K = 3 steps; fixpipe writes the ND result.
func.func @matmul(%in0: memref<19x40xf32, "GM">, %in1: memref<40x75xf32, "GM">, %v0_out: memref<19x75xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<19x40xf32, "GM"> -> !layout.tensor<19x40xf32>
  %in1_1 = tile.read %in1 : memref<40x75xf32, "GM"> -> !layout.tensor<40x75xf32>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<19x40xf32> -> !layout.tensor<19x40xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
  %in1_2 = layout.trans_data %in1_1 : !layout.tensor<40x75xf32> -> !layout.tensor<40x75xf32, ND -> FRACTAL_NZ [5, 3, 16, 16]>
  %v0 = graph.matmul %in0_2, %in1_2 {layout.kernel = "cube"} : (!layout.tensor<19x40xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>, !layout.tensor<40x75xf32, ND -> FRACTAL_NZ [5, 3, 16, 16]>) -> !layout.tensor<19x75xf32, ND -> FRACTAL_NZ [5, 2, 16, 16]>
  %v0_1 = layout.trans_data %v0 : !layout.tensor<19x75xf32, ND -> FRACTAL_NZ [5, 2, 16, 16]> -> !layout.tensor<19x75xf32>
  tile.write %v0_1 to %v0_out : !layout.tensor<19x75xf32> to memref<19x75xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 3 : i64
// CHECK-DAG:     %[[AL1:.+]] = tile.alloc : memref<1x2x16x16xf32, "L1">
// CHECK-DAG:     %[[BL1:.+]] = tile.alloc : memref<2x1x16x16xf32, "L1">
// CHECK-DAG:     %[[A:.+]] = tile.alloc : memref<2x1x16x16xf32, "L0A">
// CHECK-DAG:     %[[B:.+]] = tile.alloc : memref<1x2x16x16xf32, "L0B">
// CHECK-DAG:     %[[C:.+]] = tile.alloc : memref<2x2x16x16xf32, "L0C">
// CHECK:         scf.for %[[N:.+]] = %c0 to %c5 step %c2 {
// CHECK:           tile.nd2nz %in0[{{.+}}] to %[[AL1]] : memref<19x40xf32, "GM"> to memref<1x2x16x16xf32, "L1">
// CHECK-NEXT:      tile.load2d %[[AL1]][%c0, %c0] to %[[A]] {mode = "swap"}
// CHECK:           tile.nd2nz %in1[{{.+}}] to %[[BL1]] cols %[[NV:.+]] : memref<40x75xf32, "GM"> to memref<2x1x16x16xf32, "L1">
// CHECK-NEXT:      tile.load2d %[[BL1]][%c0, %c0] to %[[B]] valid %[[NV]] {mode = "transpose"}
// CHECK-NEXT:      tile.mmad %[[A]], %[[B]], %[[C]], %{{.+}} n %[[NV]]
// CHECK:           tile.fixpipe %[[C]] to %v0_out[%c0, %{{.+}}] n %[[NV]] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<19x75xf32, "GM">
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// ---- elementwise: (x * s + b) -> relu -> sigmoid, per-channel s and b on NCHW ------------
// One channel (17 x 9) per tile: 20 tiles. The per-channel constants load a 1-element tile
// and broadcast. A host kernel next to it is left as it is.
func.func @per_channel_chain(%in0: memref<1x20x17x9xf32, "GM">, %v0: memref<20x1x1xf32, "GM">, %v2: memref<20x1x1xf32, "GM">, %v5_out: memref<1x20x17x9xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<1x20x17x9xf32, "GM"> -> !layout.tensor<1x20x17x9xf32, NCHW>
  %v0_1 = tile.read %v0 : memref<20x1x1xf32, "GM"> -> !layout.tensor<20x1x1xf32, NCHW>
  %v2_1 = tile.read %v2 : memref<20x1x1xf32, "GM"> -> !layout.tensor<20x1x1xf32, NCHW>
  %v1 = graph.mul %in0_1, %v0_1 {layout.kernel = "any"} : (!layout.tensor<1x20x17x9xf32, NCHW>, !layout.tensor<20x1x1xf32, NCHW>) -> !layout.tensor<1x20x17x9xf32, NCHW>
  %v3 = graph.add %v1, %v2_1 {layout.kernel = "any"} : (!layout.tensor<1x20x17x9xf32, NCHW>, !layout.tensor<20x1x1xf32, NCHW>) -> !layout.tensor<1x20x17x9xf32, NCHW>
  %v4 = graph.relu %v3 {layout.kernel = "any"} : !layout.tensor<1x20x17x9xf32, NCHW>
  %v5 = graph.sigmoid %v4 {layout.kernel = "any"} : !layout.tensor<1x20x17x9xf32, NCHW>
  tile.write %v5 to %v5_out : !layout.tensor<1x20x17x9xf32, NCHW> to memref<1x20x17x9xf32, "GM">
  func.return
}
func.func @hardmax(%y: memref<3x5xf32, "GM">, %t_out: memref<3x5xf32, "GM">) attributes {tile.kernel = "host", tile.host_reason = "no vector lowering for graph.hardmax"} {
  %y_1 = tile.read %y : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
  %t = graph.hardmax %y_1 {axis = 1} : !layout.tensor<3x5xf32>
  tile.write %t to %t_out : !layout.tensor<3x5xf32> to memref<3x5xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @per_channel_chain(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 20 : i64, tile.ops = "graph.mul,graph.add,graph.relu,graph.sigmoid"
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<1x1x17x9xf32, "UB">
// CHECK-DAG:     %[[S:.+]] = tile.alloc : memref<1x1x1xf32, "UB">
// CHECK-DAG:     %[[SH:.+]] = tile.alloc : memref<1x1x1xf32, "UB">
// CHECK-NOT:     "L1"
// CHECK:         scf.for %[[I:.+]] = %c0 to %c20 step %c1 {
// CHECK-DAG:       tile.copy %in0[%c0, %[[I]], %c0, %c0] to %[[X]][%c0, %c0, %c0, %c0]
// CHECK-DAG:       tile.copy %v0[%[[I]], %c0, %c0] to %[[S]][%c0, %c0, %c0]
// CHECK-DAG:       tile.copy %v2[%[[I]], %c0, %c0] to %[[SH]][%c0, %c0, %c0]
// CHECK:           tile.vmul %[[X]], %[[S]] to %[[M:.+]] : memref<1x1x17x9xf32, "UB">, memref<1x1x1xf32, "UB"> to memref<1x1x17x9xf32, "UB">
// CHECK-NEXT:      tile.vadd %[[M]], %[[SH]] to %[[AD:[^ ]+]]
// CHECK-NEXT:      tile.vrelu %[[AD]] to %[[R:[^ ]+]]
// CHECK-NEXT:      tile.vsigmoid %[[R]] to %[[SG:[^ ]+]]
// CHECK-NEXT:      tile.copy %[[SG]][%c0, %c0, %c0, %c0] to %v5_out[%c0, %[[I]], %c0, %c0] : memref<1x1x17x9xf32, "UB"> to memref<1x20x17x9xf32, "GM">
// CHECK-NEXT:    }

// CHECK-LABEL: func.func @hardmax(
// CHECK-SAME:    attributes {tile.kernel = "host", tile.host_reason = "no vector lowering for graph.hardmax"} {
// CHECK-NEXT:    tile.read
// CHECK-NEXT:    graph.hardmax
// CHECK-NEXT:    tile.write
// CHECK-NEXT:    func.return

// -----

// ---- max pool 3x3, stride 2, pad 1 on NCHW 20 x 11 x 11 ----------------------------------
// Tiles of 4 channels x all 6 output rows: the window (13 x 13 with the pad) is loaded at
// column 1, rows from -1, the load filling outside the image with -inf.
func.func @max_pool(%in0: memref<1x20x11x11xf32, "GM">, %v0_out: memref<1x20x6x6xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<1x20x11x11xf32, "GM"> -> !layout.tensor<1x20x11x11xf32, NCHW>
  %v0 = graph.max_pool %in0_1 {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], layout.kernel = "plain"} : (!layout.tensor<1x20x11x11xf32, NCHW>) -> !layout.tensor<1x20x6x6xf32, NCHW>
  tile.write %v0 to %v0_out : !layout.tensor<1x20x6x6xf32, NCHW> to memref<1x20x6x6xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @max_pool(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 5 : i64
// CHECK-DAG:     %[[WIN:.+]] = tile.alloc : memref<1x4x13x13xf32, "UB">
// CHECK-DAG:     %[[P:.+]] = tile.alloc : memref<1x4x6x6xf32, "UB">
// CHECK:         scf.for %[[C:.+]] = %c0 to %c20 step %c4 {
// CHECK-NEXT:      tile.copy %in0[%c0, %[[C]], %cm1, %c0] to %[[WIN]][%c0, %c0, %c0, %c1] {pad = 0xfff0000000000000 : f64}
// CHECK-NEXT:      tile.vpool %[[WIN]][%c0] to %[[P]] {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 11 : i64, width = 11 : i64}
// CHECK-NEXT:      tile.copy %[[P]][%c0, %c0, %c0, %c0] to %v0_out[%c0, %[[C]], %c0, %c0] : memref<1x4x6x6xf32, "UB"> to memref<1x20x6x6xf32, "GM">
// CHECK-NEXT:    }

// -----

// ---- softmax over the last axis of 7 x 50 -------------------------------------------------
// Whole rows per tile (the reduced axis is never split). 6 rows would fit, but the tiles are
// shared over the test preset's 4 vector cores: 2 rows each would hold fewer than 128
// elements, so 3 rows a tile (3 + 3 + a ragged 1).
func.func @softmax(%in0: memref<7x50xf32, "GM">, %v0_out: memref<7x50xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<7x50xf32, "GM"> -> !layout.tensor<7x50xf32>
  %v0 = graph.softmax %in0_1 {axis = -1, layout.kernel = "origin"} : !layout.tensor<7x50xf32>
  tile.write %v0 to %v0_out : !layout.tensor<7x50xf32> to memref<7x50xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 3 : i64
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<3x50xf32, "UB">
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<3x50xf32, "UB">
// CHECK-DAG:     %[[SHIFT:.+]] = tile.alloc : memref<3x50xf32, "UB">
// CHECK-DAG:     %[[RED:.+]] = tile.alloc : memref<3x1xf32, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c7 step %c3 {
// CHECK-NEXT:      tile.copy %in0[%[[I]], %c0] to %[[X]][%c0, %c0]
// CHECK-NEXT:      tile.vreduce %[[X]] to %[[RED]] {kind = "max", axes = array<i64: 1>}
// CHECK-NEXT:      tile.vsub %[[X]], %[[RED]] to %[[SHIFT]]
// CHECK-NEXT:      tile.vexp %[[SHIFT]] to %[[OUT]]
// CHECK-NEXT:      tile.vreduce %[[OUT]] to %[[RED]] {kind = "sum", axes = array<i64: 1>}
// CHECK-NEXT:      tile.vdiv %[[OUT]], %[[RED]] to %[[OUT]]
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0] to %v0_out[%[[I]], %c0] : memref<3x50xf32, "UB"> to memref<7x50xf32, "GM">
// CHECK-NEXT:    }

// -----

// ---- concat along channels of two NC1HWC0 inputs (24 + 12 channels), ReLU / sigmoid ------
// One loop nest per input region; each computes its producer on the tile and stores it
// into the NCHW output at its channel offset (the second region at channel 24). The first
// region's second C0 block holds 8 channels: its store stops at channel 24.
func.func @concat(%v1: memref<1x2x9x7x16xf32, "GM">, %v3: memref<1x1x9x7x16xf32, "GM">, %v6_out: memref<1x36x9x7xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v1_1 = tile.read %v1 : memref<1x2x9x7x16xf32, "GM"> -> !layout.tensor<1x24x9x7xf32, NCHW -> NC1HWC0 [1, 2, 9, 7, 16]>
  %v3_1 = tile.read %v3 : memref<1x1x9x7x16xf32, "GM"> -> !layout.tensor<1x12x9x7xf32, NCHW -> NC1HWC0 [1, 1, 9, 7, 16]>
  %v4 = graph.relu %v1_1 {layout.kernel = "any", layout.shared = "NC1HWC0"} : !layout.tensor<1x24x9x7xf32, NCHW -> NC1HWC0 [1, 2, 9, 7, 16]>
  %v4_1 = layout.trans_data %v4 : !layout.tensor<1x24x9x7xf32, NCHW -> NC1HWC0 [1, 2, 9, 7, 16]> -> !layout.tensor<1x24x9x7xf32, NCHW>
  %v5 = graph.sigmoid %v3_1 {layout.kernel = "any", layout.shared = "NC1HWC0"} : !layout.tensor<1x12x9x7xf32, NCHW -> NC1HWC0 [1, 1, 9, 7, 16]>
  %v5_1 = layout.trans_data %v5 : !layout.tensor<1x12x9x7xf32, NCHW -> NC1HWC0 [1, 1, 9, 7, 16]> -> !layout.tensor<1x12x9x7xf32, NCHW>
  %v6 = graph.concat %v4_1, %v5_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<1x24x9x7xf32, NCHW>, !layout.tensor<1x12x9x7xf32, NCHW>) -> !layout.tensor<1x36x9x7xf32, NCHW>
  tile.write %v6 to %v6_out : !layout.tensor<1x36x9x7xf32, NCHW> to memref<1x36x9x7xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @concat(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 9 : i64
// CHECK:         scf.for %[[C1:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[H:.+]] = %c0 to %c9 step %c4 {
// CHECK-NEXT:        tile.copy %v1[%c0, %[[C1]], %[[H]], %c0, %c0] to %[[T1:[^\[]+]][{{.+}}] : memref<1x2x9x7x16xf32, "GM"> to memref<1x1x4x7x16xf32, "UB">
// CHECK-NEXT:        tile.vrelu %[[T1]] to %[[R1:[^ ]+]]
// CHECK:             tile.store_5hd %[[R1]] to %v6_out[%c0, %{{.+}}, %[[H]], %c0] {channel_end = 24 : i64} : memref<1x1x4x7x16xf32, "UB"> to memref<1x36x9x7xf32, "GM">
// CHECK:         scf.for %[[H2:.+]] = %c0 to %c9 step %c4 {
// CHECK-NEXT:      tile.copy %v3[%c0, %c0, %[[H2]], %c0, %c0] to %[[T2:[^\[]+]][{{.+}}] : memref<1x1x9x7x16xf32, "GM"> to memref<1x1x4x7x16xf32, "UB">
// CHECK-NEXT:      tile.vsigmoid %[[T2]] to %[[R2:[^ ]+]]
// CHECK-NEXT:      tile.store_5hd %[[R2]] to %v6_out[%c0, %c24, %[[H2]], %c0] :
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// -----

// ---- reshape after a conv (NC1HWC0 -> NCHW -> [2, 18, 9]) and flatten ---------------------
// The 5HD map is transposed to channel-major order on UB and written as one run per image;
// a row-major flatten is chunks of copy_flat through UB (1512 elements: 1024 + a tail).
func.func @reshape_from_5hd(%v1: memref<2x2x3x3x16xf32, "GM">, %v2: memref<3xi64, "GM">, %v3_out: memref<2x18x9xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v1_1 = tile.read %v1 : memref<2x2x3x3x16xf32, "GM"> -> !layout.tensor<2x18x3x3xf32, NCHW -> NC1HWC0 [2, 2, 3, 3, 16]>
  %v2_1 = tile.read %v2 : memref<3xi64, "GM"> -> !layout.tensor<3xi64>
  %v1_2 = layout.trans_data %v1_1 : !layout.tensor<2x18x3x3xf32, NCHW -> NC1HWC0 [2, 2, 3, 3, 16]> -> !layout.tensor<2x18x3x3xf32, NCHW>
  %v3 = graph.reshape %v1_2, %v2_1 {layout.kernel = "origin"} : (!layout.tensor<2x18x3x3xf32, NCHW>, !layout.tensor<3xi64>) -> !layout.tensor<2x18x9xf32>
  tile.write %v3 to %v3_out : !layout.tensor<2x18x9xf32> to memref<2x18x9xf32, "GM">
  func.return
}
func.func @flatten(%v2: memref<1x24x7x9xf32, "GM">, %v3_out: memref<1x1512xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v2_1 = tile.read %v2 : memref<1x24x7x9xf32, "GM"> -> !layout.tensor<1x24x7x9xf32, NCHW>
  %v3 = graph.flatten %v2_1 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<1x24x7x9xf32, NCHW>) -> !layout.tensor<1x1512xf32>
  tile.write %v3 to %v3_out : !layout.tensor<1x1512xf32> to memref<1x1512xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @reshape_from_5hd(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64
// CHECK-DAG:     %[[FM:.+]] = tile.alloc : memref<1x2x3x3x16xf32, "UB">
// CHECK-DAG:     %[[PL:.+]] = tile.alloc : memref<1x2x16x3x3xf32, "UB">
// CHECK:         scf.for %[[N:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.copy %v1[%[[N]], %c0, %c0, %c0, %c0] to %[[FM]][%c0, %c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.vtranspose %[[FM]] to %[[PL]] {perm = array<i64: 0, 1, 4, 2, 3>}
// CHECK:           tile.copy_flat %[[PL]][%c0] to %v3_out[%{{.+}}] {count = 288 : i64}
// CHECK-NEXT:    }

// CHECK-LABEL: func.func @flatten(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64
// CHECK:         %[[CH:.+]] = tile.alloc : memref<1024xf32, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c1512 step %c1024 {
// CHECK-NEXT:      tile.copy_flat %v2[%[[I]]] to %[[CH]][%c0] {count = 1024 : i64}
// CHECK-NEXT:      tile.copy_flat %[[CH]][%c0] to %v3_out[%[[I]]] {count = 1024 : i64}
// CHECK-NEXT:    }
