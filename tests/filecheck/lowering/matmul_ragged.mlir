// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test base-block="32,32,16"}' | filecheck %s

// (40 x 16) @ (16 x 40) fp32 in base blocks of 2 x 2 fractals: M and N are 3 fractals, so
// the last M block and the last N block hold one fractal each. Every move of such a block
// says so: the GM -> L1 windows move the valid rows of A / columns of B only (Ascend C's
// Nd2NzParams nValue / dValue), the L1 -> L0A / L0B loads those fractals, the mmad
// multiplies them (MmadParams m / n) and fixpipe writes the valid m x n (FixpipeParams
// mSize / nSize): m = min(32, 40 - 16 m), n = min(32, 40 - 16 n), m and n the blocks'
// first fractals (A is kept whole-K in L1 for a group of two N blocks, the second of
// which is the ragged one).
func.func @ragged(%in0: memref<40x16xf32, "GM">, %in1: memref<16x40xf32, "GM">, %v0_out: memref<40x40xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<40x16xf32, "GM"> -> !layout.tensor<40x16xf32>
  %in1_1 = tile.read %in1 : memref<16x40xf32, "GM"> -> !layout.tensor<16x40xf32>
  %v0 = graph.matmul %in0_1, %in1_1 {layout.kernel = "cube"} : (!layout.tensor<40x16xf32>, !layout.tensor<16x40xf32>) -> !layout.tensor<40x40xf32>
  tile.write %v0 to %v0_out : !layout.tensor<40x40xf32> to memref<40x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @ragged(
// CHECK-DAG:     %[[WHOLE:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[ROWS:.+]] = arith.constant 40 : index
// CHECK-DAG:     %[[MINUS16:.+]] = arith.constant -16 : index
// CHECK:         scf.for %[[M:.+]] = %c0 to %c3 step %c2 {
// CHECK-NEXT:      %[[MOFF:.+]] = arith.muli %[[M]], %[[MINUS16]] : index
// CHECK-NEXT:      %[[MREST:.+]] = arith.addi %[[MOFF]], %[[ROWS]] : index
// CHECK-NEXT:      %[[MV:.+]] = arith.minsi %[[WHOLE]], %[[MREST]] : index
// CHECK:           tile.nd2nz %in0[%{{.+}}, %c0] to %a_l1 rows %[[MV]] :
// CHECK:           scf.for %[[N:.+]] = %c0 to %c4 step %c2 {
// CHECK-NEXT:        %[[NOFF:.+]] = arith.muli %[[N]], %[[MINUS16]] : index
// CHECK-NEXT:        %[[NREST:.+]] = arith.addi %[[NOFF]], %[[ROWS]] : index
// CHECK-NEXT:        %[[NV:.+]] = arith.minsi %[[WHOLE]], %[[NREST]] : index
// CHECK:             tile.nd2nz %in1[%c0, %{{.+}}] to %b_l1 cols %[[NV]] :
// CHECK-NEXT:        tile.load2d %a_l1[%c0, %c0] to %a_l0a valid %[[MV]] {mode = "swap"}
// CHECK-NEXT:        tile.load2d %b_l1[%c0, %c0] to %b_l0b valid %[[NV]] {mode = "transpose"}
// CHECK-NEXT:        tile.mmad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} m %[[MV]] n %[[NV]] : memref<2x1x16x16xf32, "L0A">, memref<1x2x16x16xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
// CHECK:             tile.fixpipe %c_l0c to %v0_out[%{{.+}}, %{{.+}}] m %[[MV]] n %[[NV]] {layout = "nd"}

// (64 x 16) @ (16 x 40): M's 4 fractals are two whole blocks, so its moves have no m.
func.func @ragged_n(%in0: memref<64x16xf32, "GM">, %in1: memref<16x40xf32, "GM">, %v0_out: memref<64x40xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<64x16xf32, "GM"> -> !layout.tensor<64x16xf32>
  %in1_1 = tile.read %in1 : memref<16x40xf32, "GM"> -> !layout.tensor<16x40xf32>
  %v0 = graph.matmul %in0_1, %in1_1 {layout.kernel = "cube"} : (!layout.tensor<64x16xf32>, !layout.tensor<16x40xf32>) -> !layout.tensor<64x40xf32>
  tile.write %v0 to %v0_out : !layout.tensor<64x40xf32> to memref<64x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @ragged_n(
// CHECK:             %[[NV2:.+]] = arith.minsi %c32, %{{.+}} : index
// CHECK:             tile.nd2nz %in1[%c0, %{{.+}}] to %b_l1 cols %[[NV2]] :
// CHECK:             tile.mmad %a_l0a, %b_l0b, %c_l0c, %true n %[[NV2]] :
// CHECK:             tile.fixpipe %c_l0c to %v0_out[%{{.+}}, %{{.+}}] n %[[NV2]] {layout = "nd"}
