// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Data-movement kernels (tiling/data_movement.py) on the `test` preset (UB 8 KiB, tiles
// at most half of it): every output box ("region") is a nest of GM -> UB -> GM copies;
// element steps other than 1 (strided / reversed slices, reflected borders, broadcasts)
// are picked out of the loaded window by tile.vstride on UB. Inputs as
// lower-graph-to-kernels writes them after O2, with ragged tails.

// ---- slice: steps 2 and -2, a ragged tail along axis 1 (36 rows in tiles of 24) --------
// Axis 2 runs backwards from 30 in steps of 2: each tile loads the 27 inputs from 4 up
// and picks every second from the end.
func.func @slice_1(%x0: memref<3x37x45xf32, "GM">, %v4_out: memref<3x36x14xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1, 30]> : !layout.tensor<2xi64>
  %v1 = graph.constant dense<[40, 2]> : !layout.tensor<2xi64>
  %v2 = graph.constant dense<[1, 2]> : !layout.tensor<2xi64>
  %v3 = graph.constant dense<[1, -2]> : !layout.tensor<2xi64>
  %x0_1 = tile.read %x0 : memref<3x37x45xf32, "GM"> -> !layout.tensor<3x37x45xf32>
  %v4 = graph.slice %x0_1, %v0, %v1, %v2, %v3 {layout.kernel = "origin"} : (!layout.tensor<3x37x45xf32>, !layout.tensor<2xi64>, !layout.tensor<2xi64>, !layout.tensor<2xi64>, !layout.tensor<2xi64>) -> !layout.tensor<3x36x14xf32>
  tile.write %v4 to %v4_out : !layout.tensor<3x36x14xf32> to memref<3x36x14xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @slice_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 6 : i64
// CHECK-DAG:     %[[WIN:.+]] = tile.alloc : memref<1x24x27xf32, "UB">
// CHECK-DAG:     %[[PICK:.+]] = tile.alloc : memref<1x24x14xf32, "UB">
// CHECK:         scf.for %[[I0:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      scf.for %[[I1:.+]] = %c0 to %c36 step %c24 {
// CHECK-NEXT:        %[[ROW:.+]] = arith.addi %[[I1]], %c1 : index
// CHECK-NEXT:        tile.copy %x0[%[[I0]], %[[ROW]], %c4] to %[[WIN]][%c0, %c0, %c0] : memref<3x37x45xf32, "GM"> to memref<1x24x27xf32, "UB">
// CHECK-NEXT:        tile.vstride %[[WIN]] to %[[PICK]] {steps = array<i64: 1, 1, -2>}
// CHECK-NEXT:        tile.copy %[[PICK]][%c0, %c0, %c0] to %v4_out[%[[I0]], %[[I1]], %c0] : memref<1x24x14xf32, "UB"> to memref<3x36x14xf32, "GM">
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- split: one kernel, three outputs (5 + 20 + 12 rows of 37) ---------------------------
// One nest per output, each loading its rows of the input and storing them to its own GM
// argument. Each output is shared over the 4 vector cores of the preset: the 5-row one by
// images (225 elements, under two 128-element shares), the others by images and halves.
// (A nest of one tile keeps a loop of one trip, as inject-sync fences nests: @pad_reflect.)
func.func @split_1(%x0: memref<2x37x45xf32, "GM">, %v1_out: memref<2x5x45xf32, "GM">, %v1_out_1: memref<2x20x45xf32, "GM">, %v1_out_2: memref<2x12x45xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[5, 20, 12]> : !layout.tensor<3xi64>
  %x0_1 = tile.read %x0 : memref<2x37x45xf32, "GM"> -> !layout.tensor<2x37x45xf32>
  %v1, %v1_1, %v1_2 = graph.split %x0_1, %v0 {axis = 1, layout.kernel = "origin"} : (!layout.tensor<2x37x45xf32>, !layout.tensor<3xi64>) -> (!layout.tensor<2x5x45xf32>, !layout.tensor<2x20x45xf32>, !layout.tensor<2x12x45xf32>)
  tile.write %v1 to %v1_out : !layout.tensor<2x5x45xf32> to memref<2x5x45xf32, "GM">
  tile.write %v1_1 to %v1_out_1 : !layout.tensor<2x20x45xf32> to memref<2x20x45xf32, "GM">
  tile.write %v1_2 to %v1_out_2 : !layout.tensor<2x12x45xf32> to memref<2x12x45xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @split_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 10 : i64, tile.ops = "graph.split"
// CHECK:         scf.for %[[A:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.copy %x0[%[[A]], %c0, %c0] to %[[W0:[^\[]+]][%c0, %c0, %c0] : memref<2x37x45xf32, "GM"> to memref<1x5x45xf32, "UB">
// CHECK-NEXT:      tile.copy %[[W0]][%c0, %c0, %c0] to %v1_out[%[[A]], %c0, %c0] :
// CHECK:         scf.for %[[B:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[B1:.+]] = %c0 to %c20 step %c10 {
// CHECK-NEXT:        %[[R1:.+]] = arith.addi %[[B1]], %c5 : index
// CHECK-NEXT:        tile.copy %x0[%[[B]], %[[R1]], %c0] to %[[W1:[^\[]+]][%c0, %c0, %c0] : memref<2x37x45xf32, "GM"> to memref<1x10x45xf32, "UB">
// CHECK-NEXT:        tile.copy %[[W1]][%c0, %c0, %c0] to %v1_out_1[%[[B]], %[[B1]], %c0] :
// CHECK:         scf.for %[[C:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[C1:.+]] = %c0 to %c12 step %c6 {
// CHECK-NEXT:        %[[R2:.+]] = arith.addi %[[C1]], %c25 : index
// CHECK-NEXT:        tile.copy %x0[%[[C]], %[[R2]], %c0] to %[[W2:[^\[]+]][%c0, %c0, %c0] : memref<2x37x45xf32, "GM"> to memref<1x6x45xf32, "UB">
// CHECK-NEXT:        tile.copy %[[W2]][%c0, %c0, %c0] to %v1_out_2[%[[C]], %[[C1]], %c0] :

// -----

// ---- constant pad (and a crop: -1 at the end of axis 0) ----------------------------------
// The window starts one row and two columns before the input; the DMA cuts it there and
// fills the rest of the UB tile with the pad value.
func.func @pad_constant(%x0: memref<17x45xf32, "GM">, %v1_out: memref<17x50xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1, 2, -1, 3]> : !layout.tensor<4xi64>
  %x0_1 = tile.read %x0 : memref<17x45xf32, "GM"> -> !layout.tensor<17x45xf32>
  %v1 = graph.pad %x0_1, %v0 {mode = "constant", layout.kernel = "origin"} : (!layout.tensor<17x45xf32>, !layout.tensor<4xi64>) -> !layout.tensor<17x50xf32>
  tile.write %v1 to %v1_out : !layout.tensor<17x50xf32> to memref<17x50xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @pad_constant(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64
// CHECK:         scf.for %[[I:.+]] = %c0 to %c17 step %c5 {
// CHECK-NEXT:      %[[R:.+]] = arith.addi %[[I]], %cm1 : index
// CHECK-NEXT:      tile.copy %x0[%[[R]], %cm2] to %[[W:[^\[]+]][%c0, %c0] {pad = 0.000000e+00 : f64} : memref<17x45xf32, "GM"> to memref<5x50xf32, "UB">
// CHECK-NEXT:      tile.copy %[[W]][%c0, %c0] to %v1_out[%[[I]], %c0] :

// -----

// ---- reflect pad on axis 1 (2 before, 1 after): three regions ---------------------------
// The borders (40 and 20 elements) stay one tile each, in a loop of one trip; the interior
// (140) splits into the 128-element least share of a core (19 rows) and a ragged row.
func.func @pad_reflect(%x0: memref<20x7xf32, "GM">, %v1_out: memref<20x10xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[0, 2, 0, 1]> : !layout.tensor<4xi64>
  %x0_1 = tile.read %x0 : memref<20x7xf32, "GM"> -> !layout.tensor<20x7xf32>
  %v1 = graph.pad %x0_1, %v0 {mode = "reflect", layout.kernel = "origin"} : (!layout.tensor<20x7xf32>, !layout.tensor<4xi64>) -> !layout.tensor<20x10xf32>
  tile.write %v1 to %v1_out : !layout.tensor<20x10xf32> to memref<20x10xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @pad_reflect(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64
// CHECK:         scf.for %{{.+}} = %c0 to %c1 step %c1 {
// CHECK-NEXT:      tile.copy %x0[%c0, %c1] to %[[W0:[^\[]+]][%c0, %c0] : memref<20x7xf32, "GM"> to memref<20x2xf32, "UB">
// CHECK-NEXT:      tile.vstride %[[W0]] to %[[P0:[^ ]+]] {steps = array<i64: 1, -1>}
// CHECK-NEXT:      tile.copy %[[P0]][%c0, %c0] to %v1_out[%c0, %c0] :
// CHECK:         scf.for %[[I:.+]] = %c0 to %c20 step %c19 {
// CHECK-NEXT:      tile.copy %x0[%[[I]], %c0] to %[[W1:[^\[]+]][%c0, %c0] : memref<20x7xf32, "GM"> to memref<19x7xf32, "UB">
// CHECK-NEXT:      tile.copy %[[W1]][%c0, %c0] to %v1_out[%[[I]], %c2] :
// CHECK:         scf.for %{{.+}} = %c0 to %c1 step %c1 {
// CHECK-NEXT:      tile.copy %x0[%c0, %c5] to %[[W2:[^\[]+]][%c0, %c0] : memref<20x7xf32, "GM"> to memref<20x1xf32, "UB">
// CHECK-NEXT:      tile.vstride %[[W2]] to %[[P2:[^ ]+]] {steps = array<i64: 1, -1>}
// CHECK-NEXT:      tile.copy %[[P2]][%c0, %c0] to %v1_out[%c0, %c9] :

// -----

// ---- edge pad on axis 0 (1 before, 2 after) ----------------------------------------------
// The borders broadcast the edge rows (step 0). The interior's 10 rows would take tiles of
// 3; a ragged last tile would store over the border after it, so tiles of 2 divide them.
// The borders are shared over the 4 vector cores by columns: the top row in 128-element
// pieces (a ragged one at the output's end), the bottom two rows in halves.
func.func @pad_edge(%x0: memref<10x300xf32, "GM">, %v1_out: memref<13x300xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[1, 0, 2, 0]> : !layout.tensor<4xi64>
  %x0_1 = tile.read %x0 : memref<10x300xf32, "GM"> -> !layout.tensor<10x300xf32>
  %v1 = graph.pad %x0_1, %v0 {mode = "edge", layout.kernel = "origin"} : (!layout.tensor<10x300xf32>, !layout.tensor<4xi64>) -> !layout.tensor<13x300xf32>
  tile.write %v1 to %v1_out : !layout.tensor<13x300xf32> to memref<13x300xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @pad_edge(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 12 : i64
// CHECK:         scf.for %[[C0:.+]] = %c0 to %c300 step %c128 {
// CHECK-NEXT:      tile.copy %x0[%c0, %[[C0]]] to %[[W0:[^\[]+]][%c0, %c0] : memref<10x300xf32, "GM"> to memref<1x128xf32, "UB">
// CHECK-NEXT:      tile.vstride %[[W0]] to %[[P0:[^ ]+]] {steps = array<i64: 0, 1>} : memref<1x128xf32, "UB"> to memref<1x128xf32, "UB">
// CHECK-NEXT:      tile.copy %[[P0]][%c0, %c0] to %v1_out[%c0, %[[C0]]] :
// CHECK:         scf.for %[[R:.+]] = %c0 to %c10 step %c2 {
// CHECK-NEXT:      tile.copy %x0[%[[R]], %c0] to %[[W1:[^\[]+]][%c0, %c0] : memref<10x300xf32, "GM"> to memref<2x300xf32, "UB">
// CHECK-NEXT:      %[[OUT:.+]] = arith.addi %[[R]], %c1 : index
// CHECK-NEXT:      tile.copy %[[W1]][%c0, %c0] to %v1_out[%[[OUT]], %c0] :
// CHECK-NEXT:    } {tile.parallel}
// CHECK:         scf.for %[[B:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      scf.for %[[C2:.+]] = %c0 to %c300 step %c150 {
// CHECK-NEXT:        tile.copy %x0[%c9, %[[C2]]] to %[[W2:[^\[]+]][%c0, %c0] : memref<10x300xf32, "GM"> to memref<1x150xf32, "UB">
// CHECK-NEXT:        tile.vstride %[[W2]] to %[[P2:[^ ]+]] {steps = array<i64: 0, 1>} : memref<1x150xf32, "UB"> to memref<1x150xf32, "UB">

// -----

// ---- expand [3, 1, 45] -> [3, 37, 45]: a broadcast row, tiles of 21 (ragged) --------------
func.func @expand_1(%x0: memref<3x1x45xf32, "GM">, %v1_out: memref<3x37x45xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[3, 37, 45]> : !layout.tensor<3xi64>
  %x0_1 = tile.read %x0 : memref<3x1x45xf32, "GM"> -> !layout.tensor<3x1x45xf32>
  %v1 = graph.expand %x0_1, %v0 {layout.kernel = "origin"} : (!layout.tensor<3x1x45xf32>, !layout.tensor<3xi64>) -> !layout.tensor<3x37x45xf32>
  tile.write %v1 to %v1_out : !layout.tensor<3x37x45xf32> to memref<3x37x45xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @expand_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 6 : i64
// CHECK:         scf.for %[[I0:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      scf.for %[[I1:.+]] = %c0 to %c37 step %c21 {
// CHECK-NEXT:        tile.copy %x0[%[[I0]], %c0, %c0] to %[[W:[^\[]+]][%c0, %c0, %c0] : memref<3x1x45xf32, "GM"> to memref<1x1x45xf32, "UB">
// CHECK-NEXT:        tile.vstride %[[W]] to %[[P:[^ ]+]] {steps = array<i64: 1, 0, 1>} : memref<1x1x45xf32, "UB"> to memref<1x21x45xf32, "UB">
// CHECK-NEXT:        tile.copy %[[P]][%c0, %c0, %c0] to %v1_out[%[[I0]], %[[I1]], %c0] :

// -----

// ---- tile [7, 45] x [2, 3]: the input is loaded once and stored to its six places --------
// Shared over the cores by rows: 3 rows a core would not divide the 7 (a ragged tile would
// store into the next copy), so tiles of one row.
func.func @tile_1(%x0: memref<7x45xf32, "GM">, %v1_out: memref<14x135xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<[2, 3]> : !layout.tensor<2xi64>
  %x0_1 = tile.read %x0 : memref<7x45xf32, "GM"> -> !layout.tensor<7x45xf32>
  %v1 = graph.tile %x0_1, %v0 {layout.kernel = "origin"} : (!layout.tensor<7x45xf32>, !layout.tensor<2xi64>) -> !layout.tensor<14x135xf32>
  tile.write %v1 to %v1_out : !layout.tensor<14x135xf32> to memref<14x135xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @tile_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 7 : i64
// CHECK:         scf.for %[[I:.+]] = %c0 to %c7 step %c1 {
// CHECK-NEXT:      tile.copy %x0[%[[I]], %c0] to %[[W:[^\[]+]][%c0, %c0] : memref<7x45xf32, "GM"> to memref<1x45xf32, "UB">
// CHECK-NEXT:      tile.copy %[[W]][%c0, %c0] to %v1_out[%[[I]], %c0] :
// CHECK-NEXT:      tile.copy %[[W]][%c0, %c0] to %v1_out[%[[I]], %c45] :
// CHECK-NEXT:      tile.copy %[[W]][%c0, %c0] to %v1_out[%[[I]], %c90] :
