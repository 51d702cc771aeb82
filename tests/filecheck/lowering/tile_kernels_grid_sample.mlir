// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | filecheck %s
// RUN: tilegraph-opt %s --split-input-file -p 'tile-kernels{platform=test}' | tilegraph-opt --split-input-file | filecheck %s

// GridSample (tiling/grid_sample.py, grid_sample_taps.py) on the `test` preset (UB 8 KiB,
// tiles at most half of it). X [N, C, H, W], the grid [N, Ho, Wo, 2] and the output are
// addressed as [N, C, H*W], [N, 1, 2Q] and [N, C, Q] (Q = Ho * Wo positions); per image
// and channel block the planes are loaded once, per tile of P positions the grid's
// coordinates are picked (x: the even lanes, y: the odd ones), turned into taps by vector
// ops, gathered from the planes by vtake and blended.

// ---- bilinear, zeros, align_corners = 0: 35 positions in tiles of 24 -------------------
// The 3 planes of 4 x 5 are one channel block (they take far less than half of the tile
// budget, half of the preset's UB); with them, 35 positions and their taps do not fit,
// 24 to 31 do: tiles of 24 (whole 32-byte blocks), the last one ragged (11).
func.func @bilinear(%in0: memref<2x3x4x5xf32, "GM">, %in1: memref<2x5x7x2xf32, "GM">, %v_out: memref<2x3x5x7xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x = tile.read %in0 : memref<2x3x4x5xf32, "GM"> -> !layout.tensor<2x3x4x5xf32, NCHW>
  %g = tile.read %in1 : memref<2x5x7x2xf32, "GM"> -> !layout.tensor<2x5x7x2xf32>
  %v = graph.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros", align_corners = 0 : i64, layout.kernel = "origin"} : (!layout.tensor<2x3x4x5xf32, NCHW>, !layout.tensor<2x5x7x2xf32>) -> !layout.tensor<2x3x5x7xf32>
  tile.write %v to %v_out : !layout.tensor<2x3x5x7xf32> to memref<2x3x5x7xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @bilinear(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 4 : i64, tile.ops = "graph.grid_sample"
// CHECK:         %[[X:[a-z_0-9]+]] = tile.strided_view %in0 : memref<2x3x4x5xf32, "GM"> to memref<2x3x20xf32, strided<[60, 20, 1]>, "GM">
// CHECK-NEXT:    %[[G:[a-z_0-9]+]] = tile.strided_view %in1 : memref<2x5x7x2xf32, "GM"> to memref<2x1x70xf32, strided<[70, 70, 1]>, "GM">
// CHECK-NEXT:    %[[OUT:[a-z_0-9]+]] = tile.strided_view %v_out : memref<2x3x5x7xf32, "GM"> to memref<2x3x35xf32, strided<[105, 35, 1]>, "GM">
// CHECK:         scf.for %[[N:[a-z_0-9]+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.copy %[[X]][%[[N]], %c0, %c0] to %[[PLANE:[a-z_0-9]+]][%c0, %c0, %c0] : {{.*}} to memref<1x3x20xf32, "UB">
// CHECK-NEXT:      scf.for %[[P:[a-z_0-9]+]] = %c0 to %c35 step %c24 {
// CHECK-NEXT:        %[[AT:[a-z_0-9]+]] = arith.muli %[[P]], %c2 : index
// CHECK-NEXT:        tile.copy %[[G]][%[[N]], %c0, %[[AT]]] to %[[GRID:[a-z_0-9]+]][%c0, %c0, %c0] : {{.*}} to memref<1x1x48xf32, "UB">
// CHECK-NEXT:        tile.vpick %[[GRID]] to %[[GX:[a-z_0-9]+]] {indices = array<i64: 0, 0, 0, 2, 4, 6, {{.*}}, 42, 44, 46>}
// CHECK-NEXT:        tile.vpick %[[GRID]] to %[[GY:[a-z_0-9]+]] {indices = array<i64: 0, 0, 1, 3, 5, 7, {{.*}}, 43, 45, 47>}
// x in pixels along W = 5: ((g + 1) * 5 - 1) / 2
// CHECK-NEXT:        tile.vadds %[[GX]], 1.000000e+00 : f64 to %[[GX]]
// CHECK-NEXT:        tile.vmuls %[[GX]], 5.000000e+00 : f64 to %[[GX]]
// CHECK-NEXT:        tile.vadds %[[GX]], -1.000000e+00 : f64 to %[[GX]]
// CHECK-NEXT:        tile.vmuls %[[GX]], 5.000000e-01 : f64 to %[[GX]]
// the taps floor(x) (weight 1 - t) and floor(x) + 1 (weight t), each zeroed outside [0, 4]
// CHECK-NEXT:        tile.vfloor %[[GX]] to %[[BASE:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vsub %[[GX]], %[[BASE]] to %[[T:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vcopy %[[BASE]] to %[[X0:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vmuls %[[T]], -1.000000e+00 : f64 to %[[W0:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vadds %[[W0]], 1.000000e+00 : f64 to %[[W0]]
// CHECK-NEXT:        tile.vcmp %[[X0]], %[[ZERO:[a-z_0-9]+]] to %[[IN:[a-z_0-9]+]] {predicate = "ge"}
// CHECK-NEXT:        tile.vcmp %[[X0]], %[[FOUR:[a-z_0-9]+]] to %[[LE:[a-z_0-9]+]] {predicate = "le"}
// CHECK-NEXT:        tile.vand %[[IN]], %[[LE]] to %[[IN]]
// CHECK-NEXT:        tile.vsel %[[IN]], %[[X0]], %[[ZERO]] to %[[X0]]
// CHECK-NEXT:        tile.vsel %[[IN]], %[[W0]], %[[ZERO]] to %[[W0]]
// CHECK-NEXT:        tile.vadds %[[BASE]], 1.000000e+00 : f64 to %[[X1:[a-z_0-9]+]] :
// CHECK:             tile.vmuls %[[GY]], 4.000000e+00 : f64 to %[[GY]]
// the rows scaled by W once per y tap, then per (y, x) pair: the flat offset, the
// gather of every channel, the weighted sum
// CHECK:             tile.vmuls %[[Y0:[a-z_0-9]+]], 5.000000e+00 : f64 to %[[Y0]]
// CHECK-NEXT:        tile.vmuls %[[Y1:[a-z_0-9]+]], 5.000000e+00 : f64 to %[[Y1]]
// CHECK-NEXT:        tile.vadd %[[Y0]], %[[X0]] to %[[FLAT:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vcast %[[FLAT]] to %[[IDX:[a-z_0-9]+]] {rounding = "rint"} : memref<1x1x24xf32, "UB"> to memref<1x1x24xi32, "UB">
// CHECK-NEXT:        tile.vbrc %[[IDX]] to %[[IDXC:[a-z_0-9]+]] : memref<1x1x24xi32, "UB"> to memref<1x3x24xi32, "UB">
// CHECK-NEXT:        tile.vtake %[[PLANE]], %[[IDXC]] to %[[VALS:[a-z_0-9]+]] {axis = 2 : i64} : memref<1x3x20xf32, "UB">, memref<1x3x24xi32, "UB"> to memref<1x3x24xf32, "UB">
// CHECK-NEXT:        tile.vmul %[[WY0:[a-z_0-9]+]], %[[W0]] to %[[W:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vmul %[[VALS]], %[[W]] to %[[ACC:[a-z_0-9]+]] :
// CHECK-NEXT:        tile.vadd %[[Y0]], %[[X1]] to %[[FLAT]]
// CHECK-COUNT-3:     tile.vtake %[[PLANE]]
// CHECK:             tile.vadd %[[ACC]], %{{.+}} to %[[ACC]]
// CHECK-NEXT:        tile.copy %[[ACC]][%c0, %c0, %c0] to %[[OUT]][%[[N]], %c0, %[[P]]] : memref<1x3x24xf32, "UB"> to memref<2x3x35xf32, strided<[105, 35, 1]>, "GM">
// CHECK-NEXT:      } {tile.parallel}
// CHECK-NEXT:    } {tile.parallel}

// -----

// ---- nearest, reflection, align_corners = 1: rounded, reflected at [0, W - 1] ------------
// One gather per position, no blend: the gathered elements are the tile stored.
func.func @nearest(%in0: memref<1x2x3x4xf32, "GM">, %in1: memref<1x2x3x2xf32, "GM">, %v_out: memref<1x2x2x3xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x = tile.read %in0 : memref<1x2x3x4xf32, "GM"> -> !layout.tensor<1x2x3x4xf32, NCHW>
  %g = tile.read %in1 : memref<1x2x3x2xf32, "GM"> -> !layout.tensor<1x2x3x2xf32>
  %v = graph.grid_sample %x, %g {mode = "nearest", padding_mode = "reflection", align_corners = 1 : i64, layout.kernel = "origin"} : (!layout.tensor<1x2x3x4xf32, NCHW>, !layout.tensor<1x2x3x2xf32>) -> !layout.tensor<1x2x2x3xf32>
  tile.write %v to %v_out : !layout.tensor<1x2x2x3xf32> to memref<1x2x2x3xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @nearest(
// CHECK-SAME:    tile.tiles = 1 : i64
// CHECK:         tile.vdup %[[THREE:[a-z_0-9]+]] {value = 3.000000e+00 : f64}
// x in pixels along W = 4 with align_corners: (g + 1) / 2 * 3, rounded half to even
// CHECK:         tile.vadds %[[GX:[a-z_0-9]+]], 1.000000e+00 : f64 to %[[GX]]
// CHECK-NEXT:    tile.vmuls %[[GX]], 5.000000e-01 : f64 to %[[GX]]
// CHECK-NEXT:    tile.vmuls %[[GX]], 3.000000e+00 : f64 to %[[GX]]
// CHECK-NEXT:    tile.vround %[[GX]] to %[[GX]]
// reflected at 0 and 3: the flips are the distance beyond a border over the span 3
// CHECK-NEXT:    tile.vcmp %[[GX]], %{{.+}} to %[[BELOW:[a-z_0-9]+]] {predicate = "lt"}
// CHECK-NEXT:    tile.vcmp %[[GX]], %[[THREE]] to %[[ABOVE:[a-z_0-9]+]] {predicate = "gt"}
// CHECK:         tile.vdiv %{{.+}}, %[[THREE]] to %[[FLIPS:[a-z_0-9]+]] :
// CHECK-NEXT:    tile.vfloor %[[FLIPS]] to %[[FLIPS]]
// CHECK:         tile.vsel %[[ABOVE]], %{{.+}}, %[[GX]] to %[[GX]]
// CHECK-NEXT:    tile.vsel %[[BELOW]], %{{.+}}, %[[GX]] to %[[GX]]
// CHECK:         tile.vmins %[[GX]], 3.000000e+00 : f64 to %[[GX]]
// CHECK:         tile.vround %[[GY:[a-z_0-9]+]] to %[[GY]]
// CHECK:         tile.vtake %[[PLANE:[a-z_0-9]+]], %[[IDX:[a-z_0-9]+]] to %[[VALS:[a-z_0-9]+]] {axis = 2 : i64}
// CHECK-NOT:     tile.vtake
// CHECK-NOT:     tile.vmul
// CHECK-NEXT:    tile.copy %[[VALS]][%c0, %c0, %c0] to %{{.+}} : memref<1x2x6xf32, "UB"> to memref<1x2x6xf32, strided<[12, 6, 1]>, "GM">

// -----

// ---- bicubic, border: four taps per axis, 16 gathers per tile --------------------------
func.func @cubic(%in0: memref<1x1x3x4xf32, "GM">, %in1: memref<1x2x3x2xf32, "GM">, %v_out: memref<1x1x2x3xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x = tile.read %in0 : memref<1x1x3x4xf32, "GM"> -> !layout.tensor<1x1x3x4xf32, NCHW>
  %g = tile.read %in1 : memref<1x2x3x2xf32, "GM"> -> !layout.tensor<1x2x3x2xf32>
  %v = graph.grid_sample %x, %g {mode = "cubic", padding_mode = "border", align_corners = 0 : i64, layout.kernel = "origin"} : (!layout.tensor<1x1x3x4xf32, NCHW>, !layout.tensor<1x2x3x2xf32>) -> !layout.tensor<1x1x2x3xf32>
  tile.write %v to %v_out : !layout.tensor<1x1x2x3xf32> to memref<1x1x2x3xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @cubic(
// Keys' far weight (a = -0.75) of the tap at floor(x) - 1: ((a d - 5a) d + 8a) d - 4a, d = t + 1
// CHECK:         tile.vfloor %{{.+}} to %[[BASE:[a-z_0-9]+]] :
// CHECK-NEXT:    tile.vsub %{{.+}}, %[[BASE]] to %[[T:[a-z_0-9]+]] :
// CHECK-NEXT:    tile.vadds %[[BASE]], -1.000000e+00 : f64 to %[[TAP:[a-z_0-9]+]] :
// CHECK-NEXT:    tile.vadds %[[T]], 1.000000e+00 : f64 to %[[D:[a-z_0-9]+]] :
// CHECK-NEXT:    tile.vmuls %[[D]], -7.500000e-01 : f64 to %[[W:[a-z_0-9]+]] :
// CHECK-NEXT:    tile.vadds %[[W]], 3.750000e+00 : f64 to %[[W]]
// CHECK-NEXT:    tile.vmul %[[W]], %[[D]] to %[[W]]
// CHECK-NEXT:    tile.vadds %[[W]], -6.000000e+00 : f64 to %[[W]]
// CHECK-NEXT:    tile.vmul %[[W]], %[[D]] to %[[W]]
// CHECK-NEXT:    tile.vadds %[[W]], 3.000000e+00 : f64 to %[[W]]
// border: the tap clamped into [0, 3]
// CHECK-NEXT:    tile.vcmp %[[TAP]], %[[ZERO:[a-z_0-9]+]] to %[[OK:[a-z_0-9]+]] {predicate = "ge"}
// CHECK-NEXT:    tile.vsel %[[OK]], %[[TAP]], %[[ZERO]] to %[[TAP]]
// CHECK-NEXT:    tile.vmins %[[TAP]], 3.000000e+00 : f64 to %[[TAP]]
// CHECK-COUNT-16: tile.vtake
// CHECK-NOT:     tile.vtake

// -----

// ---- what stays on the host ---------------------------------------------------------------
func.func @volumetric(%in0: memref<1x2x3x4x5xf32, "GM">, %in1: memref<1x2x2x2x3xf32, "GM">, %v_out: memref<1x2x2x2x2xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x = tile.read %in0 : memref<1x2x3x4x5xf32, "GM"> -> !layout.tensor<1x2x3x4x5xf32, NCDHW>
  %g = tile.read %in1 : memref<1x2x2x2x3xf32, "GM"> -> !layout.tensor<1x2x2x2x3xf32>
  %v = graph.grid_sample %x, %g {mode = "linear", padding_mode = "zeros", align_corners = 0 : i64, layout.kernel = "origin"} : (!layout.tensor<1x2x3x4x5xf32, NCDHW>, !layout.tensor<1x2x2x2x3xf32>) -> !layout.tensor<1x2x2x2x2xf32>
  tile.write %v to %v_out : !layout.tensor<1x2x2x2x2xf32> to memref<1x2x2x2x2xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @volumetric(
// CHECK-SAME:    tile.kernel = "host", tile.host_reason = "a 3-D (volumetric) grid_sample: only 2-D planes"

// -----

// 40 x 60 float32 (9.6 KB) is more than the preset's UB
func.func @large_plane(%in0: memref<1x1x40x60xf32, "GM">, %in1: memref<1x2x2x2xf32, "GM">, %v_out: memref<1x1x2x2xf32, "GM">) attributes {tile.kernel = "vector"} {
  %x = tile.read %in0 : memref<1x1x40x60xf32, "GM"> -> !layout.tensor<1x1x40x60xf32, NCHW>
  %g = tile.read %in1 : memref<1x2x2x2xf32, "GM"> -> !layout.tensor<1x2x2x2xf32>
  %v = graph.grid_sample %x, %g {mode = "linear", padding_mode = "zeros", align_corners = 0 : i64, layout.kernel = "origin"} : (!layout.tensor<1x1x40x60xf32, NCHW>, !layout.tensor<1x2x2x2xf32>) -> !layout.tensor<1x1x2x2xf32>
  tile.write %v to %v_out : !layout.tensor<1x1x2x2xf32> to memref<1x1x2x2xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @large_plane(
// CHECK-SAME:    tile.kernel = "host", tile.host_reason = "a grid_sample input plane of 40 x 60 that does not fit UB with its taps"
