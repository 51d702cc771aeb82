// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Vector programs of elementwise ops that are not one instruction (issue 25), on the `test`
// preset (UB 8 KiB; tiles keep the buffers at half of it). The inputs are macro kernels as
// lower-graph-to-kernels writes them after O2.

// ---- hard_swish -> thresholded_relu on NCHW 1 x 20 x 9 x 7 --------------------------------
// Three channels per tile, the last tile ragged (20 = 6 x 3 + 2). hard_swish is
// x * clip(x / 6 + 1/2, 0, 1); thresholded_relu selects x > alpha into a zero tile through
// an i1 mask (a product with a step would turn -inf into NaN).
func.func @hard_swish_thresholded_relu(%in0: memref<1x20x9x7xf32, "GM">, %v1_out: memref<1x20x9x7xf32, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<1x20x9x7xf32, "GM"> -> !layout.tensor<1x20x9x7xf32, NCHW>
  %v0 = graph.hard_swish %in0_1 {layout.kernel = "any"} : !layout.tensor<1x20x9x7xf32, NCHW>
  %v1 = graph.thresholded_relu %v0 {alpha = 0.25, layout.kernel = "any"} : !layout.tensor<1x20x9x7xf32, NCHW>
  tile.write %v1 to %v1_out : !layout.tensor<1x20x9x7xf32, NCHW> to memref<1x20x9x7xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @hard_swish_thresholded_relu(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 7 : i64, tile.ops = "graph.hard_swish,graph.thresholded_relu"
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<1x3x9x7xf32, "UB">
// CHECK-DAG:     %[[HS:.+]] = tile.alloc : memref<1x3x9x7xf32, "UB">
// CHECK-DAG:     %[[TR:.+]] = tile.alloc : memref<1x3x9x7xf32, "UB">
// CHECK-DAG:     %[[TMP:.+]] = tile.alloc : memref<1x3x9x7xf32, "UB">
// CHECK-DAG:     %[[MASK:.+]] = tile.alloc : memref<1x3x9x7xi1, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c20 step %c3 {
// CHECK-NEXT:      tile.copy %in0[%c0, %[[I]], %c0, %c0] to %[[X]][%c0, %c0, %c0, %c0]
// CHECK-NEXT:      tile.vmuls %[[X]], 0.16666666666666666 : f64 to %[[HS]]
// CHECK-NEXT:      tile.vadds %[[HS]], 5.000000e-01 : f64 to %[[HS]]
// CHECK-NEXT:      tile.vmins %[[HS]], 1.000000e+00 : f64 to %[[HS]]
// CHECK-NEXT:      tile.vmaxs %[[HS]], 0.000000e+00 : f64 to %[[HS]]
// CHECK-NEXT:      tile.vmul %[[HS]], %[[X]] to %[[HS]]
// CHECK-NEXT:      tile.vdup %[[TMP]] {value = 2.500000e-01 : f64}
// CHECK-NEXT:      tile.vcmp %[[HS]], %[[TMP]] to %[[MASK]] {predicate = "gt"}
// CHECK-NEXT:      tile.vdup %[[TMP]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      tile.vsel %[[MASK]], %[[HS]], %[[TMP]] to %[[TR]] : memref<1x3x9x7xi1, "UB">, memref<1x3x9x7xf32, "UB">, memref<1x3x9x7xf32, "UB"> to memref<1x3x9x7xf32, "UB">
// CHECK-NEXT:      tile.copy %[[TR]][%c0, %c0, %c0, %c0] to %v1_out[%c0, %[[I]], %c0, %c0] : memref<1x3x9x7xf32, "UB"> to memref<1x20x9x7xf32, "GM">
// CHECK-NEXT:    }

// -----

// ---- is_inf (positive only) of a 33 x 50 matrix: an i1 result, f32 scratch ----------------
// Eight rows per tile, the last one ragged (33 = 4 x 8 + 1). x - x is NaN exactly at ±inf
// and NaN, x == x drops NaN, x > 0 keeps +inf. The scratch tile takes the input's type,
// the mask and the result are i1.
func.func @is_inf(%in0: memref<33x50xf32, "GM">, %v0_out: memref<33x50xi1, "GM">) attributes {tile.kernel = "vector"} {
  %in0_1 = tile.read %in0 : memref<33x50xf32, "GM"> -> !layout.tensor<33x50xf32>
  %v0 = graph.is_inf %in0_1 {detect_negative = 0, layout.kernel = "any"} : (!layout.tensor<33x50xf32>) -> !layout.tensor<33x50xi1>
  tile.write %v0 to %v0_out : !layout.tensor<33x50xi1> to memref<33x50xi1, "GM">
  func.return
}
// CHECK-LABEL: func.func @is_inf(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 5 : i64, tile.ops = "graph.is_inf"
// CHECK-DAG:     %[[X:.+]] = tile.alloc : memref<8x50xf32, "UB">
// CHECK-DAG:     %[[OUT:.+]] = tile.alloc : memref<8x50xi1, "UB">
// CHECK-DAG:     %[[TMP:.+]] = tile.alloc : memref<8x50xf32, "UB">
// CHECK-DAG:     %[[MASK:.+]] = tile.alloc : memref<8x50xi1, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c33 step %c8 {
// CHECK-NEXT:      tile.copy %in0[%[[I]], %c0] to %[[X]][%c0, %c0]
// CHECK-NEXT:      tile.vsub %[[X]], %[[X]] to %[[TMP]]
// CHECK-NEXT:      tile.vcmp %[[TMP]], %[[TMP]] to %[[MASK]] {predicate = "ne"}
// CHECK-NEXT:      tile.vcmp %[[X]], %[[X]] to %[[OUT]] {predicate = "eq"}
// CHECK-NEXT:      tile.vand %[[OUT]], %[[MASK]] to %[[OUT]]
// CHECK-NEXT:      tile.vdup %[[TMP]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      tile.vcmp %[[X]], %[[TMP]] to %[[MASK]] {predicate = "gt"}
// CHECK-NEXT:      tile.vand %[[OUT]], %[[MASK]] to %[[OUT]]
// CHECK-NEXT:      tile.copy %[[OUT]][%c0, %c0] to %v0_out[%[[I]], %c0] : memref<8x50xi1, "UB"> to memref<33x50xi1, "GM">
// CHECK-NEXT:    }
