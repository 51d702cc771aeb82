// RUN: tilegraph-opt %s -p 'tile-kernels{platform="test:ub=4KiB"}' | filecheck %s

// ScatterND (tiling/scatter_nd.py) on the `test` preset with a 4 KiB UB (so that the
// tiles are small): the data copied to the output through UB (a ragged last copy, cut at
// the end), then per index tuple its components read on the scalar unit, wrapped against
// their axes and combined row-major into the row of the output the update slice goes to.
//
// scatter_nd_1: reduction mul (the DMA has no atomic multiply), tuples of depth 2 into
// [5, 6, 9]: slices of 9 floats (36 bytes, not a multiple of a DMA block: moved exactly),
// each loaded from the output, multiplied on the vector unit and stored back, in order on
// one core.
func.func @scatter_nd_1(%v0: memref<5x6x9xf32, "GM">, %in0: memref<19x2xi64, "GM">, %in1: memref<19x9xf32, "GM">, %v1_out: memref<5x6x9xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<5x6x9xf32, "GM"> -> !layout.tensor<5x6x9xf32>
  %in0_1 = tile.read %in0 : memref<19x2xi64, "GM"> -> !layout.tensor<19x2xi64>
  %in1_1 = tile.read %in1 : memref<19x9xf32, "GM"> -> !layout.tensor<19x9xf32>
  %v1 = graph.scatter_nd %v0_1, %in0_1, %in1_1 {reduction = "mul", layout.kernel = "origin"} : (!layout.tensor<5x6x9xf32>, !layout.tensor<19x2xi64>, !layout.tensor<19x9xf32>) -> !layout.tensor<5x6x9xf32>
  tile.write %v1 to %v1_out : !layout.tensor<5x6x9xf32> to memref<5x6x9xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @scatter_nd_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 1 : i64, tile.ops = "graph.scatter_nd"
// CHECK-DAG:     %[[COPY:.+]] = tile.alloc : memref<128xf32, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<19x2xi64, "UB">
// CHECK-DAG:     %[[UPD:.+]] = tile.alloc : memref<9xf32, "UB">
// CHECK-DAG:     %[[CUR:.+]] = tile.alloc : memref<9xf32, "UB">
// CHECK:         scf.for %[[C:.+]] = %c0 to %c270 step %c128 {
// CHECK-NEXT:      tile.copy_flat %v0[%[[C]]] to %[[COPY]][%c0] {count = 128 : i64}
// CHECK-NEXT:      tile.copy_flat %[[COPY]][%c0] to %v1_out[%[[C]]] {count = 128 : i64}
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.copy_flat %in0[%c0] to %[[IDX]][%c0] {count = 38 : i64}
// CHECK-NEXT:    scf.for %[[J:.+]] = %c0 to %c19 step %c1 {
// CHECK-NEXT:      %[[I:.+]] = tile.get_value %[[IDX]][%[[J]], %c0] {bound = 5 : i64}
// CHECK-NEXT:      %[[K:.+]] = tile.get_value %[[IDX]][%[[J]], %c1] {bound = 6 : i64}
// CHECK-NEXT:      %[[SCALED:.+]] = arith.muli %[[I]], %c6 : index
// CHECK-NEXT:      %row = arith.addi %[[SCALED]], %[[K]] : index
// CHECK-NEXT:      %[[DST:.+]] = arith.muli %row, %c9 : index
// CHECK-NEXT:      %[[SRC:.+]] = arith.muli %[[J]], %c9 : index
// CHECK-NEXT:      tile.copy_flat %in1[%[[SRC]]] to %[[UPD]][%c0] {count = 9 : i64}
// CHECK-NEXT:      tile.copy_flat %v1_out[%[[DST]]] to %[[CUR]][%c0] {count = 9 : i64}
// CHECK-NEXT:      tile.vmul %[[CUR]], %[[UPD]] to %[[CUR]]
// CHECK-NEXT:      tile.copy_flat %[[CUR]][%c0] to %v1_out[%[[DST]]] {count = 9 : i64}
// CHECK-NEXT:    }

// scatter_nd_2: reduction none, 70 rows of 300 floats into [6, 300]: index tiles of 64
// (a ragged last tile of 6: its row loop's bound computed), each slice moved in two
// chunks of 150 (the largest divisor of 300 that fits its share of UB).
func.func @scatter_nd_2(%v0: memref<6x300xf32, "GM">, %in0: memref<70x1xi64, "GM">, %in1: memref<70x300xf32, "GM">, %v1_out: memref<6x300xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<6x300xf32, "GM"> -> !layout.tensor<6x300xf32>
  %in0_1 = tile.read %in0 : memref<70x1xi64, "GM"> -> !layout.tensor<70x1xi64>
  %in1_1 = tile.read %in1 : memref<70x300xf32, "GM"> -> !layout.tensor<70x300xf32>
  %v1 = graph.scatter_nd %v0_1, %in0_1, %in1_1 {reduction = "none", layout.kernel = "origin"} : (!layout.tensor<6x300xf32>, !layout.tensor<70x1xi64>, !layout.tensor<70x300xf32>) -> !layout.tensor<6x300xf32>
  tile.write %v1 to %v1_out : !layout.tensor<6x300xf32> to memref<6x300xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @scatter_nd_2(
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<64x1xi64, "UB">
// CHECK-DAG:     %[[UPD:.+]] = tile.alloc : memref<150xf32, "UB">
// CHECK:         scf.for %[[T:.+]] = %c0 to %c70 step %c64 {
// CHECK-NEXT:      tile.copy_flat %in0[%[[T]]] to %[[IDX]][%c0] {count = 64 : i64}
// CHECK:           %[[UPPER:.+]] = arith.minsi %c64, %{{.+}} : index
// CHECK-NEXT:      scf.for %[[J:.+]] = %c0 to %[[UPPER]] step %c1 {
// CHECK-NEXT:        %row = tile.get_value %[[IDX]][%[[J]], %c0] {bound = 6 : i64}
// CHECK-NEXT:        %[[DST:.+]] = arith.muli %row, %c300 : index
// CHECK-NEXT:        %[[N:.+]] = arith.addi %[[T]], %[[J]] : index
// CHECK-NEXT:        %[[SRC:.+]] = arith.muli %[[N]], %c300 : index
// CHECK-NEXT:        scf.for %[[S:.+]] = %c0 to %c300 step %c150 {
// CHECK-NEXT:          %[[FROM:.+]] = arith.addi %[[SRC]], %[[S]] : index
// CHECK-NEXT:          tile.copy_flat %in1[%[[FROM]]] to %[[UPD]][%c0] {count = 150 : i64}
// CHECK-NEXT:          %[[TO:.+]] = arith.addi %[[DST]], %[[S]] : index
// CHECK-NEXT:          tile.copy_flat %[[UPD]][%c0] to %v1_out[%[[TO]]] {count = 150 : i64}
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// scatter_nd_3: scatter_nd_1 with reduction add: the update slice stored by an atomic DMA
// (Ascend C SetAtomicAdd), which adds it to the output in GM: no load, no vector op.
func.func @scatter_nd_3(%v0: memref<5x6x9xf32, "GM">, %in0: memref<19x2xi64, "GM">, %in1: memref<19x9xf32, "GM">, %v1_out: memref<5x6x9xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<5x6x9xf32, "GM"> -> !layout.tensor<5x6x9xf32>
  %in0_1 = tile.read %in0 : memref<19x2xi64, "GM"> -> !layout.tensor<19x2xi64>
  %in1_1 = tile.read %in1 : memref<19x9xf32, "GM"> -> !layout.tensor<19x9xf32>
  %v1 = graph.scatter_nd %v0_1, %in0_1, %in1_1 {reduction = "add", layout.kernel = "origin"} : (!layout.tensor<5x6x9xf32>, !layout.tensor<19x2xi64>, !layout.tensor<19x9xf32>) -> !layout.tensor<5x6x9xf32>
  tile.write %v1 to %v1_out : !layout.tensor<5x6x9xf32> to memref<5x6x9xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @scatter_nd_3(
// CHECK:         %[[UPD:.+]] = tile.alloc : memref<9xf32, "UB">
// CHECK-NOT:     cur_ub
// CHECK:         %[[DST:.+]] = arith.muli %row, %c9 : index
// CHECK-NEXT:    %[[SRC:.+]] = arith.muli %{{.+}}, %c9 : index
// CHECK-NEXT:    tile.copy_flat %in1[%[[SRC]]] to %[[UPD]][%c0] {count = 9 : i64}
// CHECK-NEXT:    tile.copy_flat %[[UPD]][%c0] to %v1_out[%[[DST]]] {count = 9 : i64, atomic = "add"}
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return

// scatter_nd_4: JetMoE's router rows (an index_add_ of 64-byte rows): whole slices of a
// 32-byte multiple, so a tile's 16 update rows come in one load (contiguous in GM) and each
// is stored atomically from its place in the tile; a ragged last tile of 4.
func.func @scatter_nd_4(%v0: memref<12x16xf32, "GM">, %in0: memref<20x1xi64, "GM">, %in1: memref<20x16xf32, "GM">, %v1_out: memref<12x16xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<12x16xf32, "GM"> -> !layout.tensor<12x16xf32>
  %in0_1 = tile.read %in0 : memref<20x1xi64, "GM"> -> !layout.tensor<20x1xi64>
  %in1_1 = tile.read %in1 : memref<20x16xf32, "GM"> -> !layout.tensor<20x16xf32>
  %v1 = graph.scatter_nd %v0_1, %in0_1, %in1_1 {reduction = "add", layout.kernel = "origin"} : (!layout.tensor<12x16xf32>, !layout.tensor<20x1xi64>, !layout.tensor<20x16xf32>) -> !layout.tensor<12x16xf32>
  tile.write %v1 to %v1_out : !layout.tensor<12x16xf32> to memref<12x16xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @scatter_nd_4(
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<16x1xi64, "UB">
// CHECK-DAG:     %[[UPD:.+]] = tile.alloc : memref<16x16xf32, "UB">
// CHECK:         scf.for %[[T:.+]] = %c0 to %c20 step %c16 {
// CHECK-NEXT:      tile.copy_flat %in0[%[[T]]] to %[[IDX]][%c0] {count = 16 : i64}
// CHECK-NEXT:      %[[FROM:.+]] = arith.muli %[[T]], %c16 : index
// CHECK-NEXT:      tile.copy_flat %in1[%[[FROM]]] to %[[UPD]][%c0] {count = 256 : i64}
// CHECK:           scf.for %[[J:.+]] = %c0 to %{{.+}} step %c1 {
// CHECK-NEXT:        %row = tile.get_value %[[IDX]][%[[J]], %c0] {bound = 12 : i64}
// CHECK-NEXT:        %[[DST:.+]] = arith.muli %row, %c16 : index
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[J]], %c16 : index
// CHECK-NEXT:        tile.copy_flat %[[UPD]][%[[AT]]] to %v1_out[%[[DST]]] {count = 16 : i64, atomic = "add"}
// CHECK-NEXT:      }
// CHECK-NEXT:    }

// scatter_nd_5: X-MOD's index_put — tuples addressing every axis of [40, 30], so slices of
// one float (under a DMA block): through UB-resident blocks (tiling/scatter_ub.py). The
// 1200 rows in blocks of 256 (a parallel loop: split-cores deals them to the cores; the
// ragged last block's store cut at the end), each loaded once; the 75 tuples in tiles of
// 37 and a ragged last one (its own buffers), each applied to the block by the scalar loop
// (tile.scatter_rows: every tuple read, those in the block written, in order); the block
// stored once. No DMA per tuple, no tile.get_value.
func.func @scatter_nd_5(%v0: memref<40x30xf32, "GM">, %in0: memref<75x2xi64, "GM">, %in1: memref<75xf32, "GM">, %v1_out: memref<40x30xf32, "GM">) attributes {tile.kernel = "vector"} {
  %v0_1 = tile.read %v0 : memref<40x30xf32, "GM"> -> !layout.tensor<40x30xf32>
  %in0_1 = tile.read %in0 : memref<75x2xi64, "GM"> -> !layout.tensor<75x2xi64>
  %in1_1 = tile.read %in1 : memref<75xf32, "GM"> -> !layout.tensor<75xf32>
  %v1 = graph.scatter_nd %v0_1, %in0_1, %in1_1 {reduction = "none", layout.kernel = "origin"} : (!layout.tensor<40x30xf32>, !layout.tensor<75x2xi64>, !layout.tensor<75xf32>) -> !layout.tensor<40x30xf32>
  tile.write %v1 to %v1_out : !layout.tensor<40x30xf32> to memref<40x30xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @scatter_nd_5(
// CHECK-SAME:    tile.tiles = 5 : i64
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<256x1xf32, "UB">
// CHECK-DAG:     %[[IDX:.+]] = tile.alloc : memref<37x2xi64, "UB">
// CHECK-DAG:     %[[UPD:.+]] = tile.alloc : memref<37x1xf32, "UB">
// CHECK-DAG:     %[[IDX1:.+]] = tile.alloc : memref<1x2xi64, "UB">
// CHECK-DAG:     %[[UPD1:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK:         scf.for %[[R:.+]] = %c0 to %c1200 step %c256 {
// CHECK-NEXT:      tile.copy_flat %v0[%[[R]]] to %[[OUT]][%c0] {count = 256 : i64}
// CHECK-NEXT:      scf.for %[[T:.+]] = %c0 to %c74 step %c37 {
// CHECK-NEXT:        %[[AT:.+]] = arith.muli %[[T]], %c2 : index
// CHECK-NEXT:        tile.copy_flat %in0[%[[AT]]] to %[[IDX]][%c0] {count = 74 : i64}
// CHECK-NEXT:        tile.copy_flat %in1[%[[T]]] to %[[UPD]][%c0] {count = 37 : i64}
// CHECK-NEXT:        tile.scatter_rows %[[UPD]], %[[IDX]] to %[[OUT]][%[[R]]] {depth = array<i64: 40, 30>}
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[TAIL:.+]] = arith.muli %c74, %c2 : index
// CHECK-NEXT:      tile.copy_flat %in0[%[[TAIL]]] to %[[IDX1]][%c0] {count = 2 : i64}
// CHECK-NEXT:      tile.copy_flat %in1[%c74] to %[[UPD1]][%c0] {count = 1 : i64}
// CHECK-NEXT:      tile.scatter_rows %[[UPD1]], %[[IDX1]] to %[[OUT]][%[[R]]] {depth = array<i64: 40, 30>}
// CHECK-NEXT:      tile.copy_flat %[[OUT]][%c0] to %v1_out[%[[R]]] {count = 256 : i64}
// CHECK-NEXT:    } {tile.parallel}
// CHECK-NOT:     tile.get_value
// CHECK:         func.return
