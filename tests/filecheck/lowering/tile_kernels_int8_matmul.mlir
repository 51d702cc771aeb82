// RUN: tilegraph-opt %s -p 'set-target{platform=test precision=int8},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// The int8 matmul on the `test` preset: `graph.quant_matmul` of a batched [2, 37, 70] int8
// left operand and int8 weights held as rows of K ([45, 70]: N = 45, three 16-column
// fractals with a ragged tail of 13; K = 70, three K0 = 32 fractals with a ragged tail of
// 6; M = 37, three 16-row fractals). Both operands are int8 with 16 x 32 fractals in L1:
// the weights FRACTAL_NZ (K1, N1, 16, 32) = ZN as they are (load2d copy), the data read
// ND and converted on the way in (nd2nz), swapped into ZZ; mmad accumulates in an i32 L0C,
// and fixpipe adds the int32 bias, dequantises with the per-column scales (both copied
// GM -> L1 per N block, 16 values each) into f32 (`deq`), applies the ReLU and writes ND:
// the planner keeps the result FRACTAL_NZ through the ReLU and converts it back to ND in
// the same group, and that conversion is fixpipe's (nz2nd), so the group is one kernel.
func.func @qmatmul(%x: !layout.tensor<2x37x70xf32>) -> !layout.tensor<2x37x45xf32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<2x37x70xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x37x70xi8>
  %w = graph.constant dense<3> : !layout.tensor<45x70xi8>
  %b = graph.constant dense<-7> : !layout.tensor<45xi32>
  %d = graph.constant dense<0.0005> : !layout.tensor<45xf32>
  %c = graph.quant_matmul %xq, %w, %b, %d : (!layout.tensor<2x37x70xi8>, !layout.tensor<45x70xi8>, !layout.tensor<45xi32>, !layout.tensor<45xf32>) -> !layout.tensor<2x37x45xf32>
  %r = graph.relu %c : !layout.tensor<2x37x45xf32>
  func.return %r : !layout.tensor<2x37x45xf32>
}
// CHECK:       %w = tile.constant <i8, [3, 3, 16, 32], {{.*}}> : memref<3x3x16x32xi8, "GM">
// CHECK:       %b = tile.constant <i32, [45], -7> : memref<45xi32, "GM">
// CHECK:       %d = tile.constant <f32, [45], 0.0005> : memref<45xf32, "GM">
// CHECK:       tile.launch @fused_trans_data_quant_matmul_relu_trans_data_0(%xq, %w, %b, %d, %r) : memref<2x37x70xi8, "GM">, memref<3x3x16x32xi8, "GM">, memref<45xi32, "GM">, memref<45xf32, "GM">, memref<2x37x45xf32, "GM">
// CHECK-NOT:   tile.launch
// CHECK-LABEL: func.func @fused_trans_data_quant_matmul_relu_trans_data_0(
// CHECK-SAME:    tile.kernel = "cube", tile.tiles = 6
// CHECK:         %a_l1 = tile.alloc : memref<3x3x16x32xi8, "L1">
// CHECK-NEXT:    %b_l1 = tile.alloc : memref<3x1x16x32xi8, "L1">
// CHECK-NEXT:    %a_l0a = tile.alloc : memref<3x1x16x32xi8, "L0A">
// CHECK-NEXT:    %b_l0b = tile.alloc : memref<1x1x16x32xi8, "L0B">
// CHECK-NEXT:    %c_l0c = tile.alloc : memref<1x3x16x16xi32, "L0C">
// CHECK-NEXT:    %bias_l1 = tile.alloc : memref<16xi32, "L1">
// CHECK-NEXT:    %deq_l1 = tile.alloc : memref<16xf32, "L1">
// CHECK:         tile.nd2nz %xq[%{{.+}}, %c0, %c0] to %a_l1 : memref<2x37x70xi8, "GM"> to memref<3x3x16x32xi8, "L1">
// CHECK-NEXT:    scf.for %[[NB:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      tile.copy %w[%c0, %[[NB]], %c0, %c0] to %b_l1
// CHECK-NEXT:      scf.for %[[KS:.+]] = %c0 to %c3 step %c1 {
// CHECK:             tile.load2d %a_l1[%[[KS]], %c0] to %a_l0a {mode = "swap"}
// CHECK-NEXT:        tile.load2d %b_l1[%[[KS]], %c0] to %b_l0b {mode = "copy"}
// CHECK-NEXT:        tile.mmad %a_l0a, %b_l0b, %c_l0c, %first : memref<3x1x16x32xi8, "L0A">, memref<1x1x16x32xi8, "L0B">, memref<1x3x16x16xi32, "L0C">
// CHECK:           tile.copy %b[%[[N:.+]]] to %bias_l1[%c0] : memref<45xi32, "GM"> to memref<16xi32, "L1">
// CHECK-NEXT:      tile.copy %d[%[[N]]] to %deq_l1[%c0] : memref<45xf32, "GM"> to memref<16xf32, "L1">
// CHECK-NEXT:      tile.fixpipe %c_l0c to %r_out[%{{.+}}, %c0, %[[N]]] bias %bias_l1 : memref<16xi32, "L1"> deq %deq_l1 : memref<16xf32, "L1"> {layout = "nd", relu = true} : memref<1x3x16x16xi32, "L0C"> to memref<2x37x45xf32, "GM">
