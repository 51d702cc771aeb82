// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend310p},O2{coupled-attention=always},lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=COUPLED
// CHECK-NOT: tile.kernel = "host"

// Grouped K / V heads (LLaMA's repeat_kv): Q has 4 heads, K and V 2, each repeated twice
// by unsqueeze -> expand -> reshape. The repeat is a view with a grouped head dim
// (operand_views.StridedView.groups): K and V are viewed as their 2 stored heads and the
// DMAs read head h // 2, so no kernel expands them and the expand's shape is no argument.
// The flash kernel reads both: the mix kernel on ascend910b, the in-core kernel on
// ascend310p (coupled, tiling/attention_coupled.py).
func.func @gqa(%q: !layout.tensor<1x20x48xf32>, %k: !layout.tensor<1x20x24xf32>, %v: !layout.tensor<1x20x24xf32>) -> !layout.tensor<1x20x48xf32> {
  %s4 = graph.constant dense<[1, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[1, 20, 2, 12]> : !layout.tensor<4xi64>
  %axis = graph.constant dense<[2]> : !layout.tensor<1xi64>
  %rep = graph.constant dense<[1, 2, 2, 20, 12]> : !layout.tensor<5xi64>
  %heads = graph.constant dense<[1, 4, 20, 12]> : !layout.tensor<4xi64>
  %out = graph.constant dense<[1, 20, 48]> : !layout.tensor<3xi64>
  %scale = graph.constant dense<0.5> : !layout.tensor<f32>
  %qh = graph.reshape %q, %s4 : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %kh = graph.reshape %k, %s2 : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x2x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x2x12xf32>) -> !layout.tensor<1x2x20x12xf32>
  %ku = graph.unsqueeze %kt, %axis : (!layout.tensor<1x2x20x12xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x2x1x20x12xf32>
  %ke = graph.expand %ku, %rep : (!layout.tensor<1x2x1x20x12xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x20x12xf32>
  %kr = graph.reshape %ke, %heads : (!layout.tensor<1x2x2x20x12xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x4x20x12xf32>
  %kT = graph.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : (!layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x4x12x20xf32>
  %vh = graph.reshape %v, %s2 : (!layout.tensor<1x20x24xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x2x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x2x12xf32>) -> !layout.tensor<1x2x20x12xf32>
  %vu = graph.unsqueeze %vt, %axis : (!layout.tensor<1x2x20x12xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x2x1x20x12xf32>
  %ve = graph.expand %vu, %rep : (!layout.tensor<1x2x1x20x12xf32>, !layout.tensor<5xi64>) -> !layout.tensor<1x2x2x20x12xf32>
  %vr = graph.reshape %ve, %heads : (!layout.tensor<1x2x2x20x12xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x4x20x12xf32>
  %sc = graph.matmul %qt, %kT : (!layout.tensor<1x4x20x12xf32>, !layout.tensor<1x4x12x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %scaled = graph.mul %sc, %scale : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<f32>) -> !layout.tensor<1x4x20x20xf32>
  %p = graph.softmax %scaled {axis = -1 : i64} : !layout.tensor<1x4x20x20xf32>
  %o = graph.matmul %p, %vr : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x20x4x12xf32>
  %r = graph.reshape %ot, %out : (!layout.tensor<1x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x20x48xf32>
  func.return %r : !layout.tensor<1x20x48xf32>
}
// CHECK-LABEL: func.func @gqa(
// CHECK:         tile.launch @[[K:fused_[a-z_]+_[0-9]+]]_mix_aic(%q, %k, %v, %scale, %r, %mix_workspace) {aiv = @[[K]]_mix_aiv
// CHECK-NOT:     tile.launch
// CHECK:       func.func @[[K]]_mix_aic(
// CHECK:         %k_view = tile.strided_view %k : memref<1x20x24xf32, "GM"> to memref<1x2x20x12xf32, strided<[48, 12, 24, 1]>, "GM">
// CHECK-NEXT:    %v_view = tile.strided_view %v : memref<1x20x24xf32, "GM"> to memref<1x2x20x12xf32, strided<[48, 12, 24, 1]>, "GM">
// CHECK:         scf.for %[[H:b1]] = %c0 to %c4 step %c1 {
// CHECK:           tile.nd2nz %q_view[%c0, %[[H]], %c0, %c0]
// CHECK:           %[[G:group]] = arith.divui %[[H]], %c2 : index
// CHECK-NEXT:      tile.nd2nz %k_view[%c0, %[[G]], %c0, %c0] to %k_l1
// CHECK:           %[[G1:group_[0-9]+]] = arith.divui %[[H]], %c2 : index
// CHECK-NEXT:      tile.nd2nz %v_view[%c0, %[[G1]], %c0, %c0] to %v_l1

// COUPLED-LABEL: func.func @gqa(
// COUPLED:         tile.launch @[[K:fused_[a-z_]+_[0-9]+]](%q, %k, %v, %scale, %r, %p_workspace)
// COUPLED-NOT:     tile.launch
// COUPLED:       func.func @[[K]](
// COUPLED:         %k_view = tile.strided_view %k : memref<1x20x24xf32, "GM"> to memref<1x2x20x12xf32, strided<[48, 12, 24, 1]>, "GM">
// COUPLED-NEXT:    %v_view = tile.strided_view %v : memref<1x20x24xf32, "GM"> to memref<1x2x20x12xf32, strided<[48, 12, 24, 1]>, "GM">
// COUPLED:         scf.for %[[H:b1]] = %c0 to %c4 step %c1 {
// COUPLED:           %[[G:group]] = arith.divui %[[H]], %c2 : index
// COUPLED-NEXT:      tile.nd2nz %k_view[%c0, %[[G]], %c0, %c0] to %k_l1
// COUPLED:           %[[G1:group_[0-9]+]] = arith.divui %[[H]], %c2 : index
// COUPLED-NEXT:      tile.nd2nz %v_view[%c0, %[[G1]], %c0, %c0] to %v_l1
