// The seed example: Conv2D -> ReLU -> Conv2D -> ReLU on an NCHW input, through the whole
// format engine with each strategy.
// RUN: tilegraph-opt %s -p 'format{strategy=naive}' | filecheck %s --check-prefix=NAIVE
// RUN: tilegraph-opt %s -p 'format{strategy=naive}' | filecheck %s --check-prefix=NAIVECOUNT
// RUN: tilegraph-opt %s -p 'format{strategy=ge}' | filecheck %s --check-prefix=GE
// RUN: tilegraph-opt %s -p 'O1,format{strategy=ge}' | filecheck %s --check-prefix=GE
// RUN: tilegraph-opt %s -p O2 | filecheck %s --check-prefix=O2
// RUN: tilegraph-opt %s -p 'format{strategy=optimal}' | filecheck %s --check-prefix=OPT

func.func @seed(%x: !layout.tensor<1x16x8x8xf32, NCHW>) -> !layout.tensor<1x16x8x8xf32, NCHW> {
  %w1 = graph.constant dense<0.5> : !layout.tensor<16x16x3x3xf32>
  %w2 = graph.constant dense<0.25> : !layout.tensor<16x16x3x3xf32>
  %b = graph.constant dense<0.1> : !layout.tensor<16xf32>
  %c1 = graph.conv2d %x, %w1, %b {pads = [1, 1, 1, 1]} : (!layout.tensor<1x16x8x8xf32, NCHW>, !layout.tensor<16x16x3x3xf32>, !layout.tensor<16xf32>) -> !layout.tensor<1x16x8x8xf32, NCHW>
  %r1 = graph.relu %c1 : !layout.tensor<1x16x8x8xf32, NCHW>
  %c2 = graph.conv2d %r1, %w2 {pads = [1, 1, 1, 1]} : (!layout.tensor<1x16x8x8xf32, NCHW>, !layout.tensor<16x16x3x3xf32>) -> !layout.tensor<1x16x8x8xf32, NCHW>
  %r2 = graph.relu %c2 : !layout.tensor<1x16x8x8xf32, NCHW>
  func.return %r2 : !layout.tensor<1x16x8x8xf32, NCHW>
}

// naive: a TransData before and after each Conv2D (4 on activations); the weights and the
// bias are constants converted at compile time (no run-time TransData on them).
// NAIVE: layout.transdata = {activations = 4 : i64, activation_bytes = 32768 : i64, constants = 0 : i64, constant_bytes = 0 : i64}
// NAIVE-DAG: %w1 = graph.constant dense<0.5> : !layout.tensor<16x16x3x3xf32, NCHW -> FRACTAL_Z [9, 1, 16, 16]>
// NAIVE-DAG: %b = graph.constant dense<{{.*}}> : !layout.tensor<16xf32, NCHW -> NC1HWC0{reshape_type = "C"} [1, 1, 1, 1, 16]>
// NAIVE:      %c1 = graph.conv2d %{{.*}}, %w1, %b {{.*}}layout.kernel = "cube"
// NAIVE-NEXT: layout.trans_data %c1 : !layout.tensor<1x16x8x8xf32, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]> -> !layout.tensor<1x16x8x8xf32, NCHW>
// NAIVE-NEXT: %r1 = graph.relu %{{.*}} : !layout.tensor<1x16x8x8xf32, NCHW>
// NAIVE-NEXT: layout.trans_data %r1 : !layout.tensor<1x16x8x8xf32, NCHW> -> !layout.tensor<1x16x8x8xf32, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>
// NAIVECOUNT-COUNT-4: layout.trans_data
// NAIVECOUNT-NOT: layout.trans_data

// ge: NC1HWC0 spreads through the ReLUs; exactly 2 conversions, at the input and the output.
// GE: layout.transdata = {activations = 2 : i64, activation_bytes = 16384 : i64, constants = 0 : i64, constant_bytes = 0 : i64}
// GE:      %[[X:.*]] = layout.trans_data %x : !layout.tensor<1x16x8x8xf32, NCHW> -> !layout.tensor<1x16x8x8xf32, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>
// GE:      %c1 = graph.conv2d %[[X]], %w1, %b
// GE-NEXT: %r1 = graph.relu %c1 {layout.kernel = "any", layout.shared = "NC1HWC0"} : !layout.tensor<1x16x8x8xf32, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]>
// GE-NEXT: %c2 = graph.conv2d %r1, %w2
// GE-NEXT: %r2 = graph.relu %c2 {layout.kernel = "any", layout.shared = "NC1HWC0"}
// GE-NEXT: %[[OUT:.*]] = layout.trans_data %r2 : !layout.tensor<1x16x8x8xf32, NCHW -> NC1HWC0 [1, 1, 8, 8, 16]> -> !layout.tensor<1x16x8x8xf32, NCHW>
// GE-NEXT: func.return %[[OUT]] : !layout.tensor<1x16x8x8xf32, NCHW>

// O2 then fuses each conv with its ReLU; both conversions join the groups (the one before
// the first conv as its prologue, the one after the last ReLU as an epilogue).
// O2:      %r1 = graph.fused "fused_trans_data_conv2d_relu_0" <out_elemwise_fusable> (%x, %w1, %b)
// O2:        layout.trans_data
// O2-NEXT:   graph.conv2d
// O2-NEXT:   graph.relu
// O2-NEXT:   graph.yield
// O2:      %r2 = graph.fused "fused_conv2d_relu_trans_data_1" <out_elemwise_fusable> (%r1, %w2)
// O2-NEXT:   ^bb0
// O2-NEXT:   graph.conv2d
// O2-NEXT:   graph.relu
// O2-NEXT:   layout.trans_data
// O2-NEXT:   graph.yield
// O2:      func.return %r2

// optimal: the minimum is 2 conversions, 16384 bytes, and the solver's bound proves it.
// OPT: layout.optimal_cost = 16384 : i64, layout.optimal_bound = 16384 : i64, layout.optimal_status = "optimal"
// OPT: layout.transdata = {activations = 2 : i64, activation_bytes = 16384 : i64, constants = 0 : i64, constant_bytes = 0 : i64}
// OPT-COUNT-2: layout.trans_data
// OPT-NOT: layout.trans_data
