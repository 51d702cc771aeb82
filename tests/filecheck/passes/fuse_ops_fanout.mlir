// RUN: tilegraph-opt %s -p 'fuse-ops{platform=ascend910b}' | filecheck %s
// RUN: tilegraph-opt %s -p 'fuse-ops{platform=ascend910b}' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// Mamba-2's dt: clamp(softplus(dt + b)) is read by x·dt[..., None], which broadcasts it
// (a kernel of its own: the unsqueeze is its input view), and then by the lone dt·A.
// Grown from single roots these are three kernels; dt·A joins dt's kernel as a second
// output, and the broadcasting reader, which came between them, moves after it.
// CHECK-LABEL: func.func @mamba2_dt
// CHECK:       %dt, %da = graph.fused "fused_add_softplus_clip_mul_0" <broadcast> (%raw, %b, %lo, %hi, %a) : {{.*}} -> (!layout.tensor<3x11x8xf32>, !layout.tensor<3x11x8xf32>)
// CHECK:         graph.yield %dt_1, %da_1
// CHECK:       %dx = graph.fused "fused_unsqueeze_mul_1" <injective> (%dt, %axis, %x)
// CHECK-NOT:   graph.fused
// CHECK:       func.return %dx, %da
// STATS:       output-groups-merged  3
// STATS:       output-readers-moved  2
func.func @mamba2_dt(%raw: !layout.tensor<3x11x8xf32>, %b: !layout.tensor<8xf32>, %a: !layout.tensor<8xf32>, %x: !layout.tensor<3x11x8x4xf32>) -> (!layout.tensor<3x11x8x4xf32>, !layout.tensor<3x11x8xf32>) {
  %lo = graph.constant dense<0.0> : !layout.tensor<f32>
  %hi = graph.constant dense<100.0> : !layout.tensor<f32>
  %axis = graph.constant dense<[-1]> : !layout.tensor<1xi64>
  %s = graph.add %raw, %b : (!layout.tensor<3x11x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<3x11x8xf32>
  %sp = graph.softplus %s : !layout.tensor<3x11x8xf32>
  %dt = graph.clip %sp, %lo, %hi : (!layout.tensor<3x11x8xf32>, !layout.tensor<f32>, !layout.tensor<f32>) -> !layout.tensor<3x11x8xf32>
  %u = graph.unsqueeze %dt, %axis : (!layout.tensor<3x11x8xf32>, !layout.tensor<1xi64>) -> !layout.tensor<3x11x8x1xf32>
  %dx = graph.mul %x, %u : (!layout.tensor<3x11x8x4xf32>, !layout.tensor<3x11x8x1xf32>) -> !layout.tensor<3x11x8x4xf32>
  %da = graph.mul %dt, %a : (!layout.tensor<3x11x8xf32>, !layout.tensor<8xf32>) -> !layout.tensor<3x11x8xf32>
  func.return %dx, %da : !layout.tensor<3x11x8x4xf32>, !layout.tensor<3x11x8xf32>
}


// The reader between them leads back: dt·r reads the sum of dt, so a kernel writing dt
// could not come after that sum; dt·r stays a kernel of its own.
// CHECK-LABEL: func.func @reader_leads_back
// CHECK:       %dt = graph.fused "fused_softplus_exp_2"
// CHECK:       %r = graph.reduce_sum %dt
// CHECK:       %dr = graph.mul %dt, %r
// CHECK:       func.return %dr
func.func @reader_leads_back(%raw: !layout.tensor<3x11x8xf32>) -> (!layout.tensor<3x11x8xf32>) {
  %sp = graph.softplus %raw : !layout.tensor<3x11x8xf32>
  %dt = graph.exp %sp : !layout.tensor<3x11x8xf32>
  %r = graph.reduce_sum %dt {keepdims = 1, noop_with_empty_axes = 0} : (!layout.tensor<3x11x8xf32>) -> !layout.tensor<1x1x1xf32>
  %dr = graph.mul %dt, %r : (!layout.tensor<3x11x8xf32>, !layout.tensor<1x1x1xf32>) -> !layout.tensor<3x11x8xf32>
  func.return %dr : !layout.tensor<3x11x8xf32>
}

// YOLOv8's box decode (dist2bbox): the corners anchor - lt and anchor + rb are each read by
// the centre (x1y1 + x2y2) / 2 and the size x2y2 - x1y1. Every op is a kernel of its own
// when grown from single roots (four kernels); a lone op merges like a group, as the
// producer and as a reader: one kernel writes the centre and the size.
// CHECK-LABEL: func.func @box_decode
// CHECK:       %cxy, %wh = graph.fused "fused_sub_add_div_sub_{{[0-9]+}}" <broadcast> (%anchor, %lt, %rb, %two)
// CHECK:         graph.yield %cxy_1, %wh_1
// CHECK-NOT:   graph.fused
// CHECK:       func.return %cxy, %wh
func.func @box_decode(%anchor: !layout.tensor<1x2x84xf32>, %lt: !layout.tensor<1x2x84xf32>, %rb: !layout.tensor<1x2x84xf32>) -> (!layout.tensor<1x2x84xf32>, !layout.tensor<1x2x84xf32>) {
  %two = graph.constant dense<[2.0]> : !layout.tensor<1xf32>
  %x1y1 = graph.sub %anchor, %lt : !layout.tensor<1x2x84xf32>
  %x2y2 = graph.add %anchor, %rb : !layout.tensor<1x2x84xf32>
  %sum = graph.add %x1y1, %x2y2 : !layout.tensor<1x2x84xf32>
  %cxy = graph.div %sum, %two : (!layout.tensor<1x2x84xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x2x84xf32>
  %wh = graph.sub %x2y2, %x1y1 : !layout.tensor<1x2x84xf32>
  func.return %cxy, %wh : !layout.tensor<1x2x84xf32>, !layout.tensor<1x2x84xf32>
}
