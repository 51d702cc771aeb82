// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// Range on the vector cores (tiling/arange.py) on the `test` preset (UB 8 KiB, tiles at
// most half of it): a Range of constants that constant-fold leaves alone (past its growth
// limit) is a kernel with no input; each tile of the output is tile.varange from its
// offset, then stored. Inputs as lower-graph-to-kernels writes them (the scalars inlined).

// ---- int64 0 .. 9001: 17 tiles of 512 and a ragged one of 297 ----------------------------
func.func @range_0(%v3_out: memref<9001xi64, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<0> : !layout.tensor<i64>
  %v1 = graph.constant dense<9001> : !layout.tensor<i64>
  %v2 = graph.constant dense<1> : !layout.tensor<i64>
  %v3 = graph.range %v0, %v1, %v2 {layout.kernel = "origin"} : (!layout.tensor<i64>, !layout.tensor<i64>, !layout.tensor<i64>) -> !layout.tensor<9001xi64>
  tile.write %v3 to %v3_out : !layout.tensor<9001xi64> to memref<9001xi64, "GM">
  func.return
}
// CHECK-LABEL: func.func @range_0(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 18 : i64, tile.ops = "graph.range"
// CHECK:         %[[SEQ:.+]] = tile.alloc : memref<512xi64, "UB">
// CHECK:         scf.for %[[I:.+]] = %c0 to %c9001 step %c512 {
// CHECK-NEXT:      tile.varange %[[I]] to %[[SEQ]] {start = 0.000000e+00 : f64, delta = 1.000000e+00 : f64} : memref<512xi64, "UB">
// CHECK-NEXT:      tile.copy %[[SEQ]][%c0] to %v3_out[%[[I]]] : memref<512xi64, "UB"> to memref<9001xi64, "GM">
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- float16, a negative step: the scalars as f64 immediates -----------------------------
func.func @range_1(%v3_out: memref<3000xf16, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<2.5> : !layout.tensor<f16>
  %v1 = graph.constant dense<-747.5> : !layout.tensor<f16>
  %v2 = graph.constant dense<-0.25> : !layout.tensor<f16>
  %v3 = graph.range %v0, %v1, %v2 {layout.kernel = "origin"} : (!layout.tensor<f16>, !layout.tensor<f16>, !layout.tensor<f16>) -> !layout.tensor<3000xf16>
  tile.write %v3 to %v3_out : !layout.tensor<3000xf16> to memref<3000xf16, "GM">
  func.return
}
// CHECK-LABEL: func.func @range_1(
// CHECK-SAME:    tile.ops = "graph.range"
// CHECK:         tile.varange %{{.+}} to %{{.+}} {start = 2.500000e+00 : f64, delta = -2.500000e-01 : f64} : memref<{{[0-9]+}}xf16, "UB">

// -----

// ---- a Range computed in float64 (stash_type 11) stays on the host -----------------------
func.func @range_2(%v3_out: memref<3000xf16, "GM">) attributes {tile.kernel = "vector"} {
  %v0 = graph.constant dense<2.5> : !layout.tensor<f16>
  %v1 = graph.constant dense<-747.5> : !layout.tensor<f16>
  %v2 = graph.constant dense<-0.25> : !layout.tensor<f16>
  %v3 = graph.range %v0, %v1, %v2 {stash_type = 11, layout.kernel = "origin"} : (!layout.tensor<f16>, !layout.tensor<f16>, !layout.tensor<f16>) -> !layout.tensor<3000xf16>
  tile.write %v3 to %v3_out : !layout.tensor<3000xf16> to memref<3000xf16, "GM">
  func.return
}
// CHECK-LABEL: func.func @range_2(
// CHECK-SAME:    tile.kernel = "host"
// CHECK-SAME:    a 16-bit float range computed in float64 (stash_type 11)
