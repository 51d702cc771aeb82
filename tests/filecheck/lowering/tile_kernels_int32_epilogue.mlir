// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b precision=int8},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// A matmul of two asymmetric int8 activations on 910B (za = -128: uint8's 0 re-centred,
// zb = 5; [2, 17, 40] by [2, 40, 36]). fold-qdq makes the cube's raw int32 sum (its bias
// K·za·zb = 40 · -128 · 5 = -25600, no scale) and the zero points' sums as one-column /
// one-row int8 products against [1, 40] rows of 5 and of -128 (small cube kernels, int32
// out). The product's kernel is a mix kernel: the AIC part's fixpipe writes the int32
// accumulator (bias, no deq) to the GM workspace; the AIV part subtracts the row sums
// ([17, 1] per batch, broadcast along N) and the column sums ([1, 36] per batch,
// broadcast along M) in int32, casts to f32 and multiplies by 0.05 · 0.08.
func.func @epilogue(%x: !layout.tensor<2x17x40xf32>, %y: !layout.tensor<2x40x36xf32>) -> !layout.tensor<2x17x36xf32> {
  %sa = graph.constant dense<0.05> : !layout.tensor<f32>
  %sb = graph.constant dense<0.08> : !layout.tensor<f32>
  %za = graph.constant dense<-128> : !layout.tensor<i8>
  %zb = graph.constant dense<5> : !layout.tensor<i8>
  %aq = graph.quantize_linear %x, %sa, %za : (!layout.tensor<2x17x40xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x17x40xi8>
  %ad = graph.dequantize_linear %aq, %sa, %za : (!layout.tensor<2x17x40xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x17x40xf32>
  %bq = graph.quantize_linear %y, %sb, %zb : (!layout.tensor<2x40x36xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x40x36xi8>
  %bd = graph.dequantize_linear %bq, %sb, %zb : (!layout.tensor<2x40x36xi8>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x40x36xf32>
  %m = graph.matmul %ad, %bd : (!layout.tensor<2x17x40xf32>, !layout.tensor<2x40x36xf32>) -> !layout.tensor<2x17x36xf32>
  func.return %m : !layout.tensor<2x17x36xf32>
}
// The zero points' sums: int8 products against the [1, 40] rows, int32 written as it is.
// CHECK:       tile.constant <i32, [36], -25600> : memref<36xi32, "GM">
// CHECK:       tile.launch @[[ROWS:[a-z0-9_]+]](%aq, {{.*}}) : {{.*}} memref<2x17x1xi32, "GM">
// CHECK:       tile.launch @[[COLS:[a-z0-9_]+]]({{.*}}) : {{.*}} memref<2x1x36xi32, "GM">
// CHECK:       tile.launch @[[MIX:[a-z0-9_]+]]_mix_aic({{.*}}) {aiv = @[[MIX]]_mix_aiv
// CHECK:       func.func @[[ROWS]](
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         tile.fixpipe %c_l0c to %out0_out{{.*}} bias %bias_l1 : memref<16xi32, "L1"> {layout = "nd"} : memref<{{.*}}xi32, "L0C"> to memref<2x17x1xi32, "GM">
// CHECK:       func.func @[[COLS]](
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         tile.fixpipe {{.*}} : memref<{{.*}}xi32, "L0C"> to memref<2x1x36xi32, "GM">
// The product: int32 out of fixpipe (the bias, no deq) into the workspace ...
// CHECK:       func.func @[[MIX]]_mix_aic(
// CHECK:         tile.mmad %a_l0a, %b_l0b, %c_l0c, %true : memref<{{.*}}xi8, "L0A">, memref<{{.*}}xi8, "L0B">, memref<{{.*}}xi32, "L0C">
// CHECK-NOT:     deq
// CHECK:         tile.fixpipe %c_l0c to %workspace[{{.*}}] bias %bias_l1 : memref<48xi32, "L1"> {layout = "nd"} : memref<{{.*}}xi32, "L0C"> to memref<{{.*}}xi32, "GM">
// ... and the AIV part's int32 epilogue: the row and the column sums broadcast, then the
// dequantisation.
// CHECK:       func.func @[[MIX]]_mix_aiv(
// CHECK:         tile.copy_flat %workspace[{{.*}}] to %[[ACC:[a-z0-9_]+]][{{.*}}] {{.*}} to memref<1x16x48xi32, "UB">
// CHECK:         tile.copy %{{.+}} to %[[R:[a-z0-9_]+]][{{.*}}] : memref<2x17x1xi32, "GM"> to memref<1x16x1xi32, "UB">
// CHECK:         tile.copy %{{.+}} to %[[C:[a-z0-9_]+]][{{.*}}] : memref<2x1x36xi32, "GM"> to memref<1x1x48xi32, "UB">
// CHECK:         tile.vsub %[[ACC]], %[[R]] to %[[T:[a-z0-9_]+]] : memref<1x16x48xi32, "UB">, memref<1x16x1xi32, "UB"> to memref<1x16x48xi32, "UB">
// CHECK:         tile.vsub %[[T]], %[[C]] to %[[U:[a-z0-9_]+]] : memref<1x16x48xi32, "UB">, memref<1x1x48xi32, "UB">
// CHECK:         tile.vcast %[[U]] to %[[F:[a-z0-9_]+]] {{.*}} : memref<1x16x48xi32, "UB"> to memref<1x16x48xf32, "UB">
// CHECK:         tile.vmul %[[F]], %{{.+}} to %m_ub : memref<1x16x48xf32, "UB">, memref<f32, "UB">
// CHECK:         tile.copy %m_ub[{{.*}}] to %m_out[{{.*}}] : memref<1x16x48xf32, "UB"> to memref<2x17x36xf32, "GM">
