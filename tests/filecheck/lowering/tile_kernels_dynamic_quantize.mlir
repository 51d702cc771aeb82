// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// DynamicQuantizeLinear's scale and zero point (tiling/dynamic_quantize.py) on the `test`
// preset (UB 8 KiB): one pass over the input in chunks, vreduce min and max of each into
// accumulators that start at 0 (the range includes 0, so the 0 a ragged chunk loads past
// the tensor changes neither), then the float32 scalar steps of the ONNX function body and
// a rank-0 store per result read (the scale, the uint8 zero point and the zero point moved
// onto int8 for the int8 cube). Inputs as lower-graph-to-kernels writes them.

// ---- 37 x 300: chunks of 3 rows, the last one ragged (1 row) ----------------------------
func.func @dynamic_quantize_params_1(%in0: memref<37x300xf32, "GM">, %v0_out: memref<f32, "GM">, %v0_out_1: memref<ui8, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<37x300xf32, "GM"> -> !layout.tensor<37x300xf32>
  %v0, %v0_1, %v0_2 = graph.dynamic_quantize_params %in0_1 {layout.kernel = "origin"} : (!layout.tensor<37x300xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
  tile.write %v0 to %v0_out : !layout.tensor<f32> to memref<f32, "GM">
  tile.write %v0_1 to %v0_out_1 : !layout.tensor<ui8> to memref<ui8, "GM">
  func.return
}
// CHECK-LABEL: func.func @dynamic_quantize_params_1(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 1 : i64, tile.ops = "graph.dynamic_quantize_params"
// CHECK:         tile.vdup %[[LO:.+]] {value = 0.000000e+00 : f64} : memref<1x1xf32, "UB">
// CHECK-NEXT:    tile.vdup %[[HI:.+]] {value = 0.000000e+00 : f64} : memref<1x1xf32, "UB">
// CHECK-NEXT:    scf.for %[[R:.+]] = %c0 to %c37 step %c3 {
// CHECK-NEXT:      tile.copy %in0[%[[R]], %c0] to %[[X:.+]][%c0, %c0] : memref<37x300xf32, "GM"> to memref<3x300xf32, "UB">
// CHECK-NEXT:      tile.vreduce %[[X]] to %[[P:.+]] {kind = "min", axes = array<i64: 0, 1>}
// CHECK-NEXT:      tile.vmin %[[LO]], %[[P]] to %[[LO]]
// CHECK-NEXT:      tile.vreduce %[[X]] to %[[P]] {kind = "max", axes = array<i64: 0, 1>}
// CHECK-NEXT:      tile.vmax %[[HI]], %[[P]] to %[[HI]]
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.vsub %[[HI]], %[[LO]] to %[[S:.+]] :
// CHECK-NEXT:    tile.vdup %[[T:.+]] {value = 2.550000e+02 : f64}
// CHECK-NEXT:    tile.vdiv %[[S]], %[[T]] to %[[S]]
// CHECK-NEXT:    tile.vdup %[[T]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    tile.vcmp %[[S]], %[[T]] to %[[M:.+]] {predicate = "eq"}
// CHECK-NEXT:    tile.vdup %[[T]] {value = 1.000000e+00 : f64}
// CHECK-NEXT:    tile.vsel %[[M]], %[[T]], %[[S]] to %[[SAFE:.+]] :
// CHECK-NEXT:    tile.vdiv %[[LO]], %[[SAFE]] to %[[P]]
// CHECK-NEXT:    tile.vdup %[[T]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:    tile.vsub %[[T]], %[[P]] to %[[P]]
// CHECK-NEXT:    tile.vmaxs %[[P]], 0.000000e+00 : f64 to %[[P]]
// CHECK-NEXT:    tile.vmins %[[P]], 2.550000e+02 : f64 to %[[P]]
// CHECK-NEXT:    tile.vround %[[P]] to %[[P]]
// CHECK-NEXT:    tile.vreduce %[[SAFE]] to %[[SO:.+]] {kind = "sum", axes = array<i64: 0, 1>} : memref<1x1xf32, "UB"> to memref<f32, "UB">
// CHECK-NEXT:    tile.vreduce %[[P]] to %[[ZF:.+]] {kind = "sum", axes = array<i64: 0, 1>} : memref<1x1xf32, "UB"> to memref<f32, "UB">
// CHECK-NEXT:    tile.copy %[[SO]][] to %v0_out[] : memref<f32, "UB"> to memref<f32, "GM">
// CHECK-NEXT:    tile.vcast %[[ZF]] to %[[Z:.+]] {rounding = "rint"} : memref<f32, "UB"> to memref<ui8, "UB">
// CHECK-NEXT:    tile.copy %[[Z]][] to %v0_out_1[] : memref<ui8, "UB"> to memref<ui8, "GM">
// CHECK-NOT:     tile.vadds

// -----

// ---- 3 x 17 fits UB whole: one chunk, no loop ---------------------------------------------
func.func @dynamic_quantize_params_2(%in0: memref<3x17xf32, "GM">, %v0_out: memref<f32, "GM">, %v0_out_1: memref<ui8, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<3x17xf32, "GM"> -> !layout.tensor<3x17xf32>
  %v0, %v0_1, %v0_2 = graph.dynamic_quantize_params %in0_1 {layout.kernel = "origin"} : (!layout.tensor<3x17xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
  tile.write %v0 to %v0_out : !layout.tensor<f32> to memref<f32, "GM">
  tile.write %v0_1 to %v0_out_1 : !layout.tensor<ui8> to memref<ui8, "GM">
  func.return
}
// CHECK-LABEL: func.func @dynamic_quantize_params_2(
// CHECK-NOT:     scf.for
// CHECK:         tile.copy %in0[%c0, %c0] to %[[X:.+]][%c0, %c0] : memref<3x17xf32, "GM"> to memref<3x17xf32, "UB">
// CHECK-NEXT:    tile.vreduce %[[X]] to %{{.+}} {kind = "min", axes = array<i64: 0, 1>}
// CHECK:         tile.copy %{{.+}}[] to %v0_out_1[] : memref<ui8, "UB"> to memref<ui8, "GM">

// -----

// ---- only the int8 zero point is read (fold-integer-ops' int8 cube operand) -----------------
// The uint8 zero point and the scale are not written; the zero point moves by -128 before its
// conversion (exact: an integer in [0, 255]).
func.func @dynamic_quantize_params_3(%in0: memref<3x17xf32, "GM">, %v0_out: memref<i8, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<3x17xf32, "GM"> -> !layout.tensor<3x17xf32>
  %v0, %v0_1, %v0_2 = graph.dynamic_quantize_params %in0_1 {layout.kernel = "origin"} : (!layout.tensor<3x17xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
  tile.write %v0_2 to %v0_out : !layout.tensor<i8> to memref<i8, "GM">
  func.return
}
// CHECK-LABEL: func.func @dynamic_quantize_params_3(
// CHECK:         tile.vround %[[P:.+]] to %[[P]]
// CHECK:         tile.vreduce %[[P]] to %[[ZF:.+]] {kind = "sum", axes = array<i64: 0, 1>} : memref<1x1xf32, "UB"> to memref<f32, "UB">
// CHECK-NEXT:    tile.vadds %[[ZF]], -1.280000e+02 : f64 to %[[ZF]]
// CHECK-NEXT:    tile.vcast %[[ZF]] to %[[Z:.+]] {rounding = "rint"} : memref<f32, "UB"> to memref<i8, "UB">
// CHECK-NEXT:    tile.copy %[[Z]][] to %v0_out[] : memref<i8, "UB"> to memref<i8, "GM">
// CHECK-NOT:     tile.copy
