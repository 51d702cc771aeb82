// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=rotary-before-repeat,scale-before-movement},dce' --split-input-file | filecheck %s

// Falcon's keys: k [B=1, S=3, kv=2, 1, D=4] repeated for n=2 query heads, merged, moved
// to [B, H, S, D], rotated and scaled. The rotary and the scale run on the two kv heads;
// the repeat (reshape, expand, reshape) comes after them.
func.func @falcon_keys(%k: !layout.tensor<1x3x2x1x4xf32>, %cos: !layout.tensor<1x1x3x4xf32>, %sin: !layout.tensor<1x1x3x4xf32>) -> !layout.tensor<1x4x3x4xf32> {
  %rep = graph.constant dense<[1, 3, 2, 2, 4]> : !layout.tensor<5xi64>
  %e = graph.expand %k, %rep : (!layout.tensor<1x3x2x1x4xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x3x2x2x4xf32>
  %hs = graph.constant dense<[1, 3, 4, 4]> : !layout.tensor<4xi64>
  %h = graph.reshape %e, %hs : (!layout.tensor<1x3x2x2x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x3x4x4xf32>
  %t = graph.transpose %h {perm = [0, 2, 1, 3]} : (!layout.tensor<1x3x4x4xf32>) -> !layout.tensor<1x4x3x4xf32>
  %r = graph.apply_rotary %t, %cos, %sin : (!layout.tensor<1x4x3x4xf32>, !layout.tensor<1x1x3x4xf32>, !layout.tensor<1x1x3x4xf32>) -> !layout.tensor<1x4x3x4xf32>
  %c = graph.constant dense<0.59460354> : !layout.tensor<1xf32>
  %y = graph.mul %r, %c : (!layout.tensor<1x4x3x4xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x4x3x4xf32>
  func.return %y : !layout.tensor<1x4x3x4xf32>
}
// CHECK-LABEL: func.func @falcon_keys
// CHECK:      %[[K:.*]] = graph.reshape %k, %{{.*}} : (!layout.tensor<1x3x2x1x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x3x2x4xf32>
// CHECK:      %[[T:.*]] = graph.transpose %[[K]] {perm = [0, 2, 1, 3]} : (!layout.tensor<1x3x2x4xf32>) -> !layout.tensor<1x2x3x4xf32>
// CHECK:      %[[R:.*]] = graph.apply_rotary %[[T]], %cos, %sin : (!layout.tensor<1x2x3x4xf32>, !layout.tensor<1x1x3x4xf32>, !layout.tensor<1x1x3x4xf32>) -> !layout.tensor<1x2x3x4xf32>
// CHECK:      %[[M:.*]] = graph.mul %[[R]], %c : (!layout.tensor<1x2x3x4xf32>, !layout.tensor<1xf32>) -> !layout.tensor<1x2x3x4xf32>
// CHECK:      %[[G:.*]] = graph.reshape %[[M]], %{{.*}} -> !layout.tensor<1x2x1x3x4xf32>
// CHECK:      %[[E:.*]] = graph.expand %[[G]], %{{.*}} -> !layout.tensor<1x2x2x3x4xf32>
// CHECK:      %y = graph.reshape %[[E]], %{{.*}} -> !layout.tensor<1x4x3x4xf32>
// CHECK-NEXT: func.return %y

// -----
// Tables with a head dim (one rotation per repeated head): the rotary stays on the
// repeated heads.
func.func @tables_per_head(%k: !layout.tensor<1x3x2x1x4xf32>, %cos: !layout.tensor<1x4x3x4xf32>, %sin: !layout.tensor<1x4x3x4xf32>) -> !layout.tensor<1x4x3x4xf32> {
  %rep = graph.constant dense<[1, 3, 2, 2, 4]> : !layout.tensor<5xi64>
  %e = graph.expand %k, %rep : (!layout.tensor<1x3x2x1x4xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x3x2x2x4xf32>
  %hs = graph.constant dense<[1, 3, 4, 4]> : !layout.tensor<4xi64>
  %h = graph.reshape %e, %hs : (!layout.tensor<1x3x2x2x4xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x3x4x4xf32>
  %t = graph.transpose %h {perm = [0, 2, 1, 3]} : (!layout.tensor<1x3x4x4xf32>) -> !layout.tensor<1x4x3x4xf32>
  %r = graph.apply_rotary %t, %cos, %sin : (!layout.tensor<1x4x3x4xf32>, !layout.tensor<1x4x3x4xf32>, !layout.tensor<1x4x3x4xf32>) -> !layout.tensor<1x4x3x4xf32>
  func.return %r : !layout.tensor<1x4x3x4xf32>
}
// CHECK-LABEL: func.func @tables_per_head
// CHECK:      graph.expand %k
// CHECK:      %r = graph.apply_rotary %t, %cos, %sin : !layout.tensor<1x4x3x4xf32>
