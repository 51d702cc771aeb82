// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=scan-sliding-frames},dce' --split-input-file | filecheck %s

// scan-sliding-frames: onnxscript's sliding buffer (3 samples carried, hops of 2: frames of
// 5) is the signal [x0, hops] as units of gcd(3, 2) = 1 sample, five Slices of step 2 (the
// k-th ending 4 - k units before the end, the last at the end) and their Concat.
func.func @frames(%x0: !layout.tensor<2x3xf32>, %x: !layout.tensor<2x5x2xf32>) -> !layout.tensor<2x5x?xf32> {
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %hop = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %big = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %last, %frames = graph.scan initial[%x0] scan_inputs[%x] captures[%hop, %big, %one] {scan_input_axes = array<i64: 1>, scan_output_axes = array<i64: 1>} : (!layout.tensor<2x3xf32>, !layout.tensor<2x5x2xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> (!layout.tensor<?x?xf32>, !layout.tensor<2x5x?xf32>) {
  ^bb0(%prev: !layout.tensor<?x?xf32>, %curr: !layout.tensor<2x2xf32>, %hop_1: !layout.tensor<1xi64>, %big_1: !layout.tensor<1xi64>, %one_1: !layout.tensor<1xi64>):
    %frame = graph.concat %prev, %curr {axis = -1} : (!layout.tensor<?x?xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<2x?xf32>
    %next = graph.slice %frame, %hop_1, %big_1, %one_1, %one_1 : (!layout.tensor<2x?xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x?xf32>
    graph.yield %next, %frame : !layout.tensor<?x?xf32>, !layout.tensor<2x?xf32>
  }
  func.return %frames : !layout.tensor<2x5x?xf32>
}
// CHECK-LABEL: func.func @frames
// CHECK-NOT:     graph.scan
// CHECK:         graph.reshape %x, %{{.*}} : (!layout.tensor<2x5x2xf32>, !layout.tensor<2xi64>) -> !layout.tensor<2x10xf32>
// CHECK:         graph.concat %x0, %{{.*}} {axis = 1} : (!layout.tensor<2x3xf32>, !layout.tensor<2x10xf32>) -> !layout.tensor<2x13xf32>
// CHECK:         %[[UNITS:.*]] = graph.reshape %{{.*}} -> !layout.tensor<2x13x1xf32>
// CHECK-COUNT-5: graph.slice %[[UNITS]], {{.*}} -> !layout.tensor<2x5x1xf32>
// CHECK:         %frames = graph.concat {{.*}} {axis = 2} : {{.*}} -> !layout.tensor<2x5x?xf32>
// CHECK-NEXT:    func.return %frames

// -----
// The final state is read: the loop stays.
func.func @state_read(%x0: !layout.tensor<2x3xf32>, %x: !layout.tensor<2x5x2xf32>) -> !layout.tensor<?x?xf32> {
  %one = graph.constant dense<[1]> : !layout.tensor<1xi64>
  %hop = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %big = graph.constant dense<[9223372036854775807]> : !layout.tensor<1xi64>
  %last, %frames = graph.scan initial[%x0] scan_inputs[%x] captures[%hop, %big, %one] {scan_input_axes = array<i64: 1>, scan_output_axes = array<i64: 1>} : (!layout.tensor<2x3xf32>, !layout.tensor<2x5x2xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> (!layout.tensor<?x?xf32>, !layout.tensor<2x5x?xf32>) {
  ^bb0(%prev: !layout.tensor<?x?xf32>, %curr: !layout.tensor<2x2xf32>, %hop_1: !layout.tensor<1xi64>, %big_1: !layout.tensor<1xi64>, %one_1: !layout.tensor<1xi64>):
    %frame = graph.concat %prev, %curr {axis = -1} : (!layout.tensor<?x?xf32>, !layout.tensor<2x2xf32>) -> !layout.tensor<2x?xf32>
    %next = graph.slice %frame, %hop_1, %big_1, %one_1, %one_1 : (!layout.tensor<2x?xf32>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>, !layout.tensor<1xi64>) -> !layout.tensor<?x?xf32>
    graph.yield %next, %frame : !layout.tensor<?x?xf32>, !layout.tensor<2x?xf32>
  }
  func.return %last : !layout.tensor<?x?xf32>
}
// CHECK-LABEL: func.func @state_read
// CHECK:         graph.scan
