// RUN: tilegraph-opt %s -p 'fuse-ops{platform=ascend910b}' | filecheck %s
// RUN: tilegraph-opt %s -p 'fuse-ops{platform=ascend910b}' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// A masked LSTM cell's tail (tf2onnx's Keras cell): c' is read by tanh for h and by the
// masked c, h by its masked copy. Grown from single roots these are three groups (c', the
// masked c, the masked h); merged, one kernel writes both outputs and c' stays inside.
// The mask's complement (a [4, 1] value the kernel broadcasts) stays a kernel input.
// CHECK-LABEL: func.func @masked_cell
// CHECK:       %keep = graph.sub %one, %m
// CHECK:       %c_out, %h_out = graph.fused "fused_sigmoid_mul_sigmoid_tanh_etc_0" <broadcast> (%f, %c, %i, %g, %o, %m, %keep) : {{.*}} -> (!layout.tensor<4x40xf32>, !layout.tensor<4x40xf32>)
// CHECK:         %c_new = graph.add
// CHECK:         graph.tanh %c_new
// CHECK:         graph.yield %c_out_1, %h_out_1 : !layout.tensor<4x40xf32>, !layout.tensor<4x40xf32>
// CHECK-NOT:   graph.fused
// CHECK:       func.return %h_out, %c_out
// STATS:       output-groups-merged  1
func.func @masked_cell(%i: !layout.tensor<4x40xf32>, %f: !layout.tensor<4x40xf32>, %g: !layout.tensor<4x40xf32>, %o: !layout.tensor<4x40xf32>, %c: !layout.tensor<4x40xf32>, %m: !layout.tensor<4x1xf32>) -> (!layout.tensor<4x40xf32>, !layout.tensor<4x40xf32>) {
  %sf = graph.sigmoid %f : !layout.tensor<4x40xf32>
  %fc = graph.mul %sf, %c : !layout.tensor<4x40xf32>
  %si = graph.sigmoid %i : !layout.tensor<4x40xf32>
  %tg = graph.tanh %g : !layout.tensor<4x40xf32>
  %ig = graph.mul %si, %tg : !layout.tensor<4x40xf32>
  %c_new = graph.add %fc, %ig : !layout.tensor<4x40xf32>
  %so = graph.sigmoid %o : !layout.tensor<4x40xf32>
  %tc = graph.tanh %c_new : !layout.tensor<4x40xf32>
  %h = graph.mul %so, %tc : !layout.tensor<4x40xf32>
  %one = graph.constant dense<[1.0]> : !layout.tensor<1xf32>
  %keep = graph.sub %one, %m : (!layout.tensor<1xf32>, !layout.tensor<4x1xf32>) -> !layout.tensor<4x1xf32>
  %mc = graph.mul %m, %c_new : (!layout.tensor<4x1xf32>, !layout.tensor<4x40xf32>) -> !layout.tensor<4x40xf32>
  %kc = graph.mul %keep, %c : (!layout.tensor<4x1xf32>, !layout.tensor<4x40xf32>) -> !layout.tensor<4x40xf32>
  %c_out = graph.add %mc, %kc : !layout.tensor<4x40xf32>
  %h_out = graph.mul %m, %h : (!layout.tensor<4x1xf32>, !layout.tensor<4x40xf32>) -> !layout.tensor<4x40xf32>
  func.return %h_out, %c_out : !layout.tensor<4x40xf32>, !layout.tensor<4x40xf32>
}
