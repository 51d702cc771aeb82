// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend310p},O2{coupled-attention=always},lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=COUPLED
// CHECK-NOT: tile.kernel = "host"

// torch's SDPA NaN guard `where(isnan(p), 0, p)` between the softmax and ·V (every Hugging
// Face export). On a decoupled preset it is part of the flash kernel (tiling/attention.py,
// attention_guard.py): each K step subtracts the safe row max (m_new where it is above
// -inf, else 0) from the scores and the previous max, and O is divided by the row sum
// with 0 replaced by 1; row tiles only. A coupled preset's in-core flash kernel
// (tiling/attention_coupled.py) takes the same steps, in one cube kernel.
func.func @guarded(%q: !layout.tensor<1x20x48xf32>, %k: !layout.tensor<1x20x48xf32>, %v: !layout.tensor<1x20x48xf32>, %mask: !layout.tensor<1x1x1x20xf32>) -> !layout.tensor<1x20x48xf32> {
  %s = graph.constant dense<[1, 20, 4, 12]> : !layout.tensor<4xi64>
  %s2 = graph.constant dense<[1, 20, 48]> : !layout.tensor<3xi64>
  %scale = graph.constant dense<0.5> : !layout.tensor<f32>
  %zero = graph.constant dense<0.0> : !layout.tensor<f32>
  %qh = graph.reshape %q, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %qt = graph.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %kh = graph.reshape %k, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %kt = graph.transpose %kh {perm = array<i64: 0, 2, 3, 1>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x12x20xf32>
  %vh = graph.reshape %v, %s : (!layout.tensor<1x20x48xf32>, !layout.tensor<4xi64>) -> !layout.tensor<1x20x4x12xf32>
  %vt = graph.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x20x4x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %sc = graph.matmul %qt, %kt : (!layout.tensor<1x4x20x12xf32>, !layout.tensor<1x4x12x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %scaled = graph.mul %sc, %scale : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<f32>) -> !layout.tensor<1x4x20x20xf32>
  %masked = graph.add %scaled, %mask : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<1x1x1x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %p = graph.softmax %masked {axis = -1 : i64} : !layout.tensor<1x4x20x20xf32>
  %nan = graph.is_nan %p : (!layout.tensor<1x4x20x20xf32>) -> !layout.tensor<1x4x20x20xi1>
  %g = graph.where %nan, %zero, %p : (!layout.tensor<1x4x20x20xi1>, !layout.tensor<f32>, !layout.tensor<1x4x20x20xf32>) -> !layout.tensor<1x4x20x20xf32>
  %o = graph.matmul %g, %vt : (!layout.tensor<1x4x20x20xf32>, !layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x4x20x12xf32>
  %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (!layout.tensor<1x4x20x12xf32>) -> !layout.tensor<1x20x4x12xf32>
  %r = graph.reshape %ot, %s2 : (!layout.tensor<1x20x4x12xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x20x48xf32>
  func.return %r : !layout.tensor<1x20x48xf32>
}
// CHECK-LABEL: func.func @guarded(
// CHECK:         tile.launch @[[K:fused_[a-z_]+_[0-9]+]]_mix_aic(
// CHECK-NOT:     tile.launch
// CHECK:       func.func @[[K]]_mix_aiv({{.*}}tile.ops = "{{.*}}graph.softmax,graph.is_nan,graph.where,layout.trans_data,graph.matmul{{.*}}"
// CHECK:         tile.vdup %guard_neg_inf_ub {value = 0xfff0000000000000 : f64}
// CHECK-NEXT:    tile.vdup %guard_fill_ub {value = 0.000000e+00 : f64}
// CHECK:         tile.vmax %max_ub, %rowmax_ub to %rowmax_ub
// CHECK-NEXT:    tile.vcmp %rowmax_ub, %guard_neg_inf_ub to %guard_mask_ub {predicate = "gt"}
// CHECK-NEXT:    tile.vsel %guard_mask_ub, %rowmax_ub, %guard_fill_ub to %safe_max_ub
// CHECK-NEXT:    tile.vsub %max_ub, %safe_max_ub to %max_ub
// CHECK:         tile.vsub %masked_ub, %safe_max_ub to %masked_ub
// CHECK:         tile.vcopy %rowmax_ub to %max_ub
// CHECK:         tile.vcmp %sum_ub, %guard_fill_ub to %guard_mask_ub {predicate = "eq"}
// CHECK-NEXT:    tile.vdup %safe_max_ub {value = 1.000000e+00 : f64}
// CHECK-NEXT:    tile.vsel %guard_mask_ub, %safe_max_ub, %sum_ub to %sum_ub
// CHECK-NEXT:    tile.vdiv %o_ub, %sum_ub to %o_ub

// COUPLED-LABEL: func.func @guarded(
// COUPLED:         tile.launch @[[K:fused_[a-z_]+_[0-9]+]](
// COUPLED-NOT:     tile.launch
// COUPLED:       func.func @[[K]]({{.*}}tile.kernel = "cube"{{.*}}tile.ops = "{{.*}}graph.softmax,graph.is_nan,graph.where,layout.trans_data,graph.matmul{{.*}}"
// COUPLED:         tile.vdup %guard_neg_inf_ub {value = 0xfff0000000000000 : f64}
// COUPLED-NEXT:    tile.vdup %guard_fill_ub {value = 0.000000e+00 : f64}
// COUPLED:         tile.fixpipe %s_l0c to %s_ub
// COUPLED:         tile.vmax %max_ub, %rowmax_ub to %rowmax_ub
// COUPLED-NEXT:    tile.vcmp %rowmax_ub, %guard_neg_inf_ub to %guard_mask_ub {predicate = "gt"}
// COUPLED-NEXT:    tile.vsel %guard_mask_ub, %rowmax_ub, %guard_fill_ub to %safe_max_ub
// COUPLED:         tile.vcmp %sum_ub, %guard_fill_ub to %guard_mask_ub {predicate = "eq"}
// COUPLED-NEXT:    tile.vdup %safe_max_ub {value = 1.000000e+00 : f64}
// COUPLED-NEXT:    tile.vsel %guard_mask_ub, %safe_max_ub, %sum_ub to %sum_ub
// COUPLED-NEXT:    tile.vdiv %o_ub, %sum_ub to %o_ub
