// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s

// Instance norm (tiling/reduction.py with tiling/norm_params.py) and group norm
// (tiling/group_norm.py) on the `test` preset (UB 8 KiB, tiles at most half of it): layer
// norm's program over the spatial axes (instance norm) or each group's channels and pixels
// (group norm), the scale and bias per channel or per group. Inputs as
// lower-graph-to-kernels writes them after O2.

// ---- wav2vec2's form ([N, C, L], plain): tiles of 3 channels with L whole, 37 channels
// (a ragged last tile of 1: its parameter copies and its store are cut). The per-channel
// scale and bias are flat copies of the tile's channels into [1, 3, 1] tiles, broadcast by
// vmul / vadd over L.
func.func @instance_norm_1(%x: memref<2x37x79xf32, "GM">, %s: memref<37xf32, "GM">, %bb: memref<37xf32, "GM">, %out: memref<2x37x79xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<2x37x79xf32, "GM"> -> !layout.tensor<2x37x79xf32>
  %s1 = tile.read %s : memref<37xf32, "GM"> -> !layout.tensor<37xf32>
  %b1 = tile.read %bb : memref<37xf32, "GM"> -> !layout.tensor<37xf32>
  %y = graph.instance_norm %x1, %s1, %b1 {epsilon = 1.0e-05, layout.kernel = "plain"} : (!layout.tensor<2x37x79xf32>, !layout.tensor<37xf32>, !layout.tensor<37xf32>) -> !layout.tensor<2x37x79xf32>
  tile.write %y to %out : !layout.tensor<2x37x79xf32> to memref<2x37x79xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @instance_norm_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 26 : i64, tile.ops = "graph.instance_norm"
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<1x3x79xf32, "UB">
// CHECK-DAG:     %[[STAT:.+]] = tile.alloc : memref<1x3x1xf32, "UB">
// CHECK-DAG:     %[[SCALE:.+]] = tile.alloc : memref<1x3x1xf32, "UB">
// CHECK:         scf.for %[[N:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[C:.+]] = %c0 to %c37 step %c3 {
// CHECK-NEXT:        tile.copy %x[%[[N]], %[[C]], %c0] to %[[X]][%c0, %c0, %c0]
// CHECK-NEXT:        tile.copy_flat %s[%[[C]]] to %[[SCALE]][%c0] {count = 3 : i64}
// CHECK-NEXT:        tile.copy_flat %bb[%[[C]]] to %[[BIAS:.+]][%c0] {count = 3 : i64}
// CHECK-NEXT:        tile.vreduce %[[X]] to %[[STAT]] {kind = "sum", axes = array<i64: 2>}
// CHECK-NEXT:        tile.vmuls %[[STAT]], 0.012658227848101266
// CHECK:             tile.vrsqrt %[[STAT]] to %[[STAT]]
// CHECK-NEXT:        tile.vmul %{{.+}}, %[[STAT]] to %[[OUT:.+]] :
// CHECK-NEXT:        tile.vmul %[[OUT]], %[[SCALE]] to %[[OUT]] : memref<1x3x79xf32, "UB">, memref<1x3x1xf32, "UB">
// CHECK-NEXT:        tile.vadd %[[OUT]], %[[BIAS]] to %[[OUT]]
// CHECK-NEXT:        tile.copy %[[OUT]][%c0, %c0, %c0] to %out[%[[N]], %[[C]], %c0]
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- a long axis (1500 x 4 B per channel does not fit): layer norm's three chunked passes
// (mean; squared deviations, the ragged last chunk's 452 zero lanes' share removed;
// output), per channel. One channel's scale and bias are loaded once, before pass 3.
func.func @instance_norm_2(%x: memref<1x3x1500xf32, "GM">, %s: memref<3xf32, "GM">, %bb: memref<3xf32, "GM">, %out: memref<1x3x1500xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<1x3x1500xf32, "GM"> -> !layout.tensor<1x3x1500xf32>
  %s1 = tile.read %s : memref<3xf32, "GM"> -> !layout.tensor<3xf32>
  %b1 = tile.read %bb : memref<3xf32, "GM"> -> !layout.tensor<3xf32>
  %y = graph.instance_norm %x1, %s1, %b1 {epsilon = 1.0e-05, layout.kernel = "plain"} : (!layout.tensor<1x3x1500xf32>, !layout.tensor<3xf32>, !layout.tensor<3xf32>) -> !layout.tensor<1x3x1500xf32>
  tile.write %y to %out : !layout.tensor<1x3x1500xf32> to memref<1x3x1500xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @instance_norm_2(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 3 : i64
// CHECK:         scf.for %[[C:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      tile.vdup %[[MEAN:.+]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      scf.for %{{.+}} = %c0 to %c1500 step %c488 {
// CHECK:           tile.vmuls %{{.+}}, 4.520000e+02
// CHECK:           tile.vrsqrt
// CHECK-NEXT:      tile.copy_flat %s[%[[C]]] to %[[SCALE:.+]][%c0] {count = 1 : i64}
// CHECK-NEXT:      tile.copy_flat %bb[%[[C]]] to %[[BIAS:.+]][%c0] {count = 1 : i64}
// CHECK-NEXT:      scf.for %[[R:.+]] = %c0 to %c1500 step %c488 {
// CHECK-NEXT:        tile.copy %x[%c0, %[[C]], %[[R]]] to %[[X:.+]][%c0, %c0, %c0]
// CHECK-NEXT:        tile.vsub %[[X]], %[[MEAN]] to %[[Y:.+]] :
// CHECK-NEXT:        tile.vmul %[[Y]], %{{.+}} to %[[Y]]
// CHECK-NEXT:        tile.vmul %[[Y]], %[[SCALE]] to %[[Y]]
// CHECK-NEXT:        tile.vadd %[[Y]], %[[BIAS]] to %[[Y]]
// CHECK-NEXT:        tile.copy %[[Y]][%c0, %c0, %c0] to %out[%c0, %[[C]], %[[R]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- group norm, 3 groups of 2 channels x 30 pixels: the groups of one image fit a tile
// (viewed as [N, G, Cg, S] = [5, 3, 2, 30], moved by flat copies of whole groups), so the
// per-channel scale and bias are loaded once, before the image loop.
func.func @group_norm_3(%x: memref<5x6x5x6xf32, "GM">, %s: memref<6xf32, "GM">, %bb: memref<6xf32, "GM">, %out: memref<5x6x5x6xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<5x6x5x6xf32, "GM"> -> !layout.tensor<5x6x5x6xf32>
  %s1 = tile.read %s : memref<6xf32, "GM"> -> !layout.tensor<6xf32>
  %b1 = tile.read %bb : memref<6xf32, "GM"> -> !layout.tensor<6xf32>
  %y = graph.group_norm %x1, %s1, %b1 {num_groups = 3 : i64, epsilon = 1.0e-05, layout.kernel = "origin"} : (!layout.tensor<5x6x5x6xf32>, !layout.tensor<6xf32>, !layout.tensor<6xf32>) -> !layout.tensor<5x6x5x6xf32>
  tile.write %y to %out : !layout.tensor<5x6x5x6xf32> to memref<5x6x5x6xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @group_norm_3(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 5 : i64, tile.ops = "graph.group_norm"
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<1x3x2x30xf32, "UB">
// CHECK-DAG:     %[[SCALE:.+]] = tile.alloc : memref<1x3x2x1xf32, "UB">
// CHECK:         tile.copy_flat %s[%c0] to %[[SCALE]][%c0] {count = 6 : i64}
// CHECK-NEXT:    tile.copy_flat %bb[%c0] to %{{.+}}[%c0] {count = 6 : i64}
// CHECK-NEXT:    scf.for %[[N:.+]] = %c0 to %c5 step %c1 {
// CHECK-NEXT:      %[[AT:.+]] = arith.muli %[[N]], %c180 : index
// CHECK-NEXT:      tile.copy_flat %x[%[[AT]]] to %[[X]][%c0] {count = 180 : i64}
// CHECK-NEXT:      tile.vreduce %[[X]] to %[[STAT:.+]] {kind = "sum", axes = array<i64: 2, 3>}
// CHECK:           tile.vmul %[[OUT:.+]], %[[SCALE]] to %[[OUT]]
// CHECK-NEXT:      tile.vadd %[[OUT]], %{{.+}} to %[[OUT]]
// CHECK-NEXT:      tile.copy_flat %[[OUT]][%c0] to %out[%[[AT]]] {count = 180 : i64}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- group norm, 4 groups of 3 channels x 70 pixels (840 B: one group per tile), its
// scale and bias per group (GroupNormalization-18's [num_groups]): one element each per tile.
func.func @group_norm_4(%x: memref<2x12x7x10xf32, "GM">, %s: memref<4xf32, "GM">, %bb: memref<4xf32, "GM">, %out: memref<2x12x7x10xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x1 = tile.read %x : memref<2x12x7x10xf32, "GM"> -> !layout.tensor<2x12x7x10xf32>
  %s1 = tile.read %s : memref<4xf32, "GM"> -> !layout.tensor<4xf32>
  %b1 = tile.read %bb : memref<4xf32, "GM"> -> !layout.tensor<4xf32>
  %y = graph.group_norm %x1, %s1, %b1 {num_groups = 4 : i64, epsilon = 1.0e-05, layout.kernel = "origin"} : (!layout.tensor<2x12x7x10xf32>, !layout.tensor<4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<2x12x7x10xf32>
  tile.write %y to %out : !layout.tensor<2x12x7x10xf32> to memref<2x12x7x10xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @group_norm_4(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 8 : i64
// CHECK:         scf.for %[[N:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[G:.+]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:        %[[IMAGE:.+]] = arith.muli %[[N]], %c840 : index
// CHECK-NEXT:        %[[GROUP:.+]] = arith.muli %[[G]], %c210 : index
// CHECK-NEXT:        %[[AT:.+]] = arith.addi %[[IMAGE]], %[[GROUP]] : index
// CHECK-NEXT:        tile.copy_flat %x[%[[AT]]] to %{{.+}}[%c0] {count = 210 : i64} : memref<2x12x7x10xf32, "GM"> to memref<1x1x3x70xf32, "UB">
// CHECK-NEXT:        tile.copy_flat %s[%[[G]]] to %{{.+}}[%c0] {count = 1 : i64}
// CHECK-NEXT:        tile.copy_flat %bb[%[[G]]] to %{{.+}}[%c0] {count = 1 : i64}
// CHECK:             tile.copy_flat %{{.+}}[%c0] to %out[%[[AT]]] {count = 210 : i64}
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}
