// RUN: tilegraph-opt %s -p 'set-target{platform=test precision=int8},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s

// Fixpipe requantisation of an int8 matmul on the `test` preset: `graph.quant_matmul` of
// int8 [2, 5, 40] (K = 40: a full and a ragged K0 = 32 fractal) by 36 int8 rows of K
// (N = 36: two full 16-column fractals and a ragged one), per-column scales, then its
// QuantizeLinear (zero point -3) feeding a second int8 matmul. `fold-requant` makes the
// first a `graph.requant_matmul`: fixpipe multiplies the int32 sum by the per-column
// multipliers (x_scale · w_scale / y_scale, f32 in L1), rounds, adds the zero point and
// writes int8 ND, which the second matmul loads into its 16 x 32 int8 fractals.
func.func @requant_matmul(%x: !layout.tensor<2x5x40xf32>) -> !layout.tensor<2x5x20xf32> {
  %s = graph.constant dense<0.05> : !layout.tensor<f32>
  %z = graph.constant dense<0> : !layout.tensor<i8>
  %xq = graph.quantize_linear %x, %s, %z : (!layout.tensor<2x5x40xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x5x40xi8>
  %w = graph.constant dense<3> : !layout.tensor<36x40xi8>
  %b = graph.constant dense<-7> : !layout.tensor<36xi32>
  %d = graph.constant dense<[0.0005, 0.0006, 0.0007, 0.0008, 0.0009, 0.0010, 0.0011, 0.0012, 0.0013, 0.0014, 0.0015, 0.0016, 0.0017, 0.0018, 0.0019, 0.0020, 0.0021, 0.0022, 0.0023, 0.0024, 0.0025, 0.0026, 0.0027, 0.0028, 0.0029, 0.0030, 0.0031, 0.0032, 0.0033, 0.0034, 0.0035, 0.0036, 0.0037, 0.0038, 0.0039, 0.0040]> : !layout.tensor<36xf32>
  %c = graph.quant_matmul %xq, %w, %b, %d : (!layout.tensor<2x5x40xi8>, !layout.tensor<36x40xi8>, !layout.tensor<36xi32>, !layout.tensor<36xf32>) -> !layout.tensor<2x5x36xf32>
  %ys = graph.constant dense<0.1> : !layout.tensor<f32>
  %yz = graph.constant dense<-3> : !layout.tensor<i8>
  %q = graph.quantize_linear %c, %ys, %yz : (!layout.tensor<2x5x36xf32>, !layout.tensor<f32>, !layout.tensor<i8>) -> !layout.tensor<2x5x36xi8>
  %w2 = graph.constant dense<-2> : !layout.tensor<20x36xi8>
  %b2 = graph.constant dense<5> : !layout.tensor<20xi32>
  %d2 = graph.constant dense<0.0004> : !layout.tensor<20xf32>
  %c2 = graph.quant_matmul %q, %w2, %b2, %d2 : (!layout.tensor<2x5x36xi8>, !layout.tensor<20x36xi8>, !layout.tensor<20xi32>, !layout.tensor<20xf32>) -> !layout.tensor<2x5x20xf32>
  func.return %c2 : !layout.tensor<2x5x20xf32>
}
// CHECK:       tile.launch @fused_trans_data_requant_matmul_0(%xq, %w, %b, %{{.+}}, %q) : {{.*}} memref<2x5x36xi8, "GM">
// CHECK-LABEL: func.func @fused_trans_data_requant_matmul_0(
// CHECK-SAME:    tile.kernel = "cube"
// CHECK:         tile.nd2nz %xq[{{.*}}] to %a_l1 : memref<2x5x40xi8, "GM"> to memref<{{.*}}x16x32xi8, "L1">
// CHECK:         tile.mmad {{.*}} : memref<{{.*}}x16x32xi8, "L0A">, memref<{{.*}}x16x32xi8, "L0B">, memref<3x1x16x16xi32, "L0C">
// CHECK:         tile.copy %{{.+}}[%c0] to %deq_l1[%c0] : memref<36xf32, "GM"> to memref<48xf32, "L1">
// CHECK:         tile.fixpipe %c_l0c to %q_out[%b0, %c0, %c0] bias %bias_l1 : memref<48xi32, "L1"> deq %deq_l1 : memref<48xf32, "L1"> {layout = "nd", zero_point = -3 : i64} : memref<3x1x16x16xi32, "L0C"> to memref<2x5x36xi8, "GM">
// CHECK-LABEL: func.func @fused_trans_data_quant_matmul_trans_data_1(
// CHECK:         tile.nd2nz %q[{{.*}}] to %a_l1 : memref<2x5x36xi8, "GM"> to memref<{{.*}}x16x32xi8, "L1">
