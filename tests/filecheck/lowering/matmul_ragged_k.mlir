// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test base-block="32,32,32"}' | filecheck %s

// A ragged K step: (32 x 40) @ (40 x 32) in base K steps of 2 fractals. K's 40 elements
// are 3 fractals, so the last step holds one, 8 of its 16 elements valid: its GM -> L1
// windows move k = min(32, 40 - 16 k) of K (A's columns, B's rows), the L1 -> L0 loads
// the fractals holding them and the mmad multiplies those (MmadParams k).
func.func @ragged_k(%in0: memref<32x40xf32, "GM">, %in1: memref<40x32xf32, "GM">, %v0_out: memref<32x32xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<32x40xf32, "GM"> -> !layout.tensor<32x40xf32>
  %in1_1 = tile.read %in1 : memref<40x32xf32, "GM"> -> !layout.tensor<40x32xf32>
  %v0 = graph.matmul %in0_1, %in1_1 {layout.kernel = "cube"} : (!layout.tensor<32x40xf32>, !layout.tensor<40x32xf32>) -> !layout.tensor<32x32xf32>
  tile.write %v0 to %v0_out : !layout.tensor<32x32xf32> to memref<32x32xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @ragged_k(
// CHECK:         scf.for %[[K:.+]] = %c0 to %c3 step %c2 {
// CHECK-NEXT:      %first = arith.cmpi eq, %[[K]], %c0 : index
// CHECK-NEXT:      %[[KOFF:.+]] = arith.muli %[[K]], %cm16 : index
// CHECK-NEXT:      %[[KREST:.+]] = arith.addi %[[KOFF]], %c40 : index
// CHECK-NEXT:      %[[KV:.+]] = arith.minsi %c32, %[[KREST]] : index
// CHECK:           tile.nd2nz %in0[%c0, %{{.+}}] to %a_l1 cols %[[KV]] :
// CHECK-NEXT:      tile.load2d %a_l1[%c0, %c0] to %a_l0a k %[[KV]] {mode = "swap"}
// CHECK:           tile.nd2nz %in1[%{{.+}}, %c0] to %b_l1 rows %[[KV]] :
// CHECK-NEXT:      tile.load2d %b_l1[%c0, %c0] to %b_l0b k %[[KV]] {mode = "transpose"}
// CHECK-NEXT:      tile.mmad %a_l0a, %b_l0b, %c_l0c, %first k %[[KV]] :
// CHECK:         tile.fixpipe %c_l0c to %v0_out[%c0, %c0] {layout = "nd"}
