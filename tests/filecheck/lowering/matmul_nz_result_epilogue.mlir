// RUN: tilegraph-opt %s -p 'tile-kernels{platform=ascend910b}' | filecheck %s

// A BERT pooler: the Gemm's result is FRACTAL_NZ, the tanh follows it in NZ and the group
// converts back to ND. The cube strategy takes the conversion first: fixpipe writes the
// accumulator to UB as ND (nz2nd on the way out), the tanh runs on that tile and the ND
// tile is stored; one mix kernel, no NZ tile of the result anywhere.
func.func @pooler(%in0: memref<20x40xf32, "GM">, %v0: memref<3x3x16x16xf32, "GM">, %v1: memref<37xf32, "GM">, %v3_out: memref<20x37xf32, "GM">) attributes {tile.kernel = "cube"} {
  %in0_1 = tile.read %in0 : memref<20x40xf32, "GM"> -> !layout.tensor<20x40xf32>
  %v0_1 = tile.read %v0 : memref<3x3x16x16xf32, "GM"> -> !layout.tensor<37x40xf32, ND -> FRACTAL_NZ [3, 3, 16, 16]>
  %v1_1 = tile.read %v1 : memref<37xf32, "GM"> -> !layout.tensor<37xf32>
  %in0_2 = layout.trans_data %in0_1 : !layout.tensor<20x40xf32> -> !layout.tensor<20x40xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
  %v2 = graph.gemm %in0_2, %v0_1, %v1_1 {transB = 1, layout.kernel = "cube"} : (!layout.tensor<20x40xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>, !layout.tensor<37x40xf32, ND -> FRACTAL_NZ [3, 3, 16, 16]>, !layout.tensor<37xf32>) -> !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
  %v3 = graph.tanh %v2 {layout.kernel = "any", layout.shared = "FRACTAL_NZ"} : !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
  %v3_1 = layout.trans_data %v3 : !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]> -> !layout.tensor<20x37xf32>
  tile.write %v3_1 to %v3_out : !layout.tensor<20x37xf32> to memref<20x37xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @pooler_mix_aic(
// CHECK-SAME:    tile.ops = "layout.trans_data,graph.gemm,graph.tanh,layout.trans_data", tile.mix = "aic"
// CHECK:         %c_l0c = tile.alloc : memref<3x2x16x16xf32, "L0C">
// CHECK:         tile.nd2nz %in0[%c0, %c0] to %a_l1
// CHECK:         tile.mmad
// CHECK:         tile.fixpipe %c_l0c to %workspace[{{.+}}] bias %bias_l1 : memref<48xf32, "L1"> {layout = "nd"} : memref<3x2x16x16xf32, "L0C"> to memref<2x32x48xf32, "GM">
// CHECK-LABEL: func.func @pooler_mix_aiv(
// CHECK:         tile.copy_flat %workspace[{{.+}}] to %[[ACC:.+]][%c0] {count = 768 : i64} : memref<2x32x48xf32, "GM"> to memref<16x48xf32, "UB">
// CHECK:         tile.vtanh %[[ACC]] to %[[OUT:.+]] : memref<16x48xf32, "UB"> to memref<16x48xf32, "UB">
// CHECK-NEXT:    tile.copy %[[OUT]][%c0, %c0] to %v3_out[{{.+}}, %c0] : memref<16x48xf32, "UB"> to memref<20x37xf32, "GM">
// CHECK-NOT:     tile.nz2nd
