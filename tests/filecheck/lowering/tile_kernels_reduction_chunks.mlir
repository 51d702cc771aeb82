// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels' | tilegraph-opt | filecheck %s

// A softmax over 1000 classes on the `test` preset (8 KiB UB, half a budget): a row (4000 B)
// and its scratch do not fit, so the row is cut into chunks of 496 (two of 496, the last of
// 8: ragged). Pass 1 (online) keeps the running max (%acc0) and the sum of exp(x - max)
// (%acc1), rescaled by exp(max_old - max_new); its loads fill the lanes past the row with
// -inf (exp gives 0 there). Pass 2 re-reads each chunk and writes exp(x - max) / sum. The
// printed form parses back (second RUN line: the -inf pad as a hex float).
func.func @s(%x: !layout.tensor<2x1000xf32, ND>) -> !layout.tensor<2x1000xf32, ND> {
  %y = graph.softmax %x {axis = -1 : i64} : !layout.tensor<2x1000xf32, ND>
  func.return %y : !layout.tensor<2x1000xf32, ND>
}
// CHECK-LABEL: func.func @softmax_{{[0-9]+}}(
// CHECK-SAME:    tile.kernel = "vector", tile.tiles = 2 : i64
// CHECK:         %[[X:.+]] = tile.alloc : memref<1x496xf32, "UB">
// CHECK-NEXT:    %[[E:.+]] = tile.alloc : memref<1x496xf32, "UB">
// CHECK-NEXT:    %[[M:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK-NEXT:    %[[S:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK-NEXT:    %[[P:.+]] = tile.alloc : memref<1x1xf32, "UB">
// CHECK:         scf.for %[[ROW:.+]] = %c0 to %c2 step %c1 {
// CHECK-NEXT:      tile.vdup %[[M]] {value = 0xfff0000000000000 : f64}
// CHECK-NEXT:      tile.vdup %[[S]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      scf.for %[[C:.+]] = %c0 to %c1000 step %c496 {
// CHECK-NEXT:        tile.copy %x[%[[ROW]], %[[C]]] to %[[X]][%c0, %c0] {pad = 0xfff0000000000000 : f64}
// CHECK-NEXT:        tile.vreduce %[[X]] to %[[P]] {kind = "max", axes = array<i64: 1>}
// CHECK-NEXT:        tile.vmax %[[M]], %[[P]] to %[[P]]
// CHECK-NEXT:        tile.vsub %[[M]], %[[P]] to %[[M]]
// CHECK-NEXT:        tile.vexp %[[M]] to %[[M]]
// CHECK-NEXT:        tile.vmul %[[S]], %[[M]] to %[[S]]
// CHECK-NEXT:        tile.vsub %[[X]], %[[P]] to %[[E]]
// CHECK-NEXT:        tile.vexp %[[E]] to %[[E]]
// CHECK-NEXT:        tile.vreduce %[[E]] to %[[M]] {kind = "sum", axes = array<i64: 1>}
// CHECK-NEXT:        tile.vadd %[[S]], %[[M]] to %[[S]]
// CHECK-NEXT:        tile.vcopy %[[P]] to %[[M]]
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %[[C2:.+]] = %c0 to %c1000 step %c496 {
// CHECK-NEXT:        tile.copy %x[%[[ROW]], %[[C2]]] to %[[X]][%c0, %c0] :
// CHECK-NEXT:        tile.vsub %[[X]], %[[M]] to %[[E]]
// CHECK-NEXT:        tile.vexp %[[E]] to %[[E]]
// CHECK-NEXT:        tile.vdiv %[[E]], %[[S]] to %[[E]]
// CHECK-NEXT:        tile.copy %[[E]][%c0, %c0] to %y_out[%[[ROW]], %[[C2]]]
// CHECK-NEXT:      }
// CHECK-NEXT:    } {tile.parallel}

// SqueezeNet's global average pool on the test preset: 13 x 13 x 16 fp32 lanes of one channel
// block (10.6 KiB) do not fit, so H is cut into chunks of rows (pad 0: the ragged rows add
// nothing), summed into a [1, 1, 1, 1, 16] accumulator and divided by 169 at the end.
func.func @g(%x: !layout.tensor<1x40x13x13xf32, NCHW>) -> !layout.tensor<1x40x1x1xf32, NCHW> {
  %w = graph.constant dense<0.5> : !layout.tensor<40x40x1x1xf32, NCHW>
  %c = graph.conv2d %x, %w : (!layout.tensor<1x40x13x13xf32, NCHW>, !layout.tensor<40x40x1x1xf32, NCHW>) -> !layout.tensor<1x40x13x13xf32, NCHW>
  %r = graph.relu %c : !layout.tensor<1x40x13x13xf32, NCHW>
  %p = graph.global_avg_pool %r : (!layout.tensor<1x40x13x13xf32, NCHW>) -> !layout.tensor<1x40x1x1xf32, NCHW>
  func.return %p : !layout.tensor<1x40x1x1xf32, NCHW>
}
// CHECK-LABEL: func.func @global_avg_pool_{{[0-9]+}}(
// CHECK:         %[[GX:.+]] = tile.alloc : memref<1x1x[[H:[0-9]+]]x13x16xf32, "UB">
// CHECK-NEXT:    %[[ACC:.+]] = tile.alloc : memref<1x1x1x1x16xf32, "UB">
// CHECK:         scf.for %[[CB:.+]] = %c0 to %c3 step %c1 {
// CHECK-NEXT:      tile.vdup %[[ACC]] {value = 0.000000e+00 : f64}
// CHECK-NEXT:      scf.for %[[R:.+]] = %c0 to %c13 step %c[[H]] {
// CHECK-NEXT:        tile.copy %{{.+}}[%c0, %[[CB]], %[[R]], %c0, %c0] to %[[GX]][%c0, %c0, %c0, %c0, %c0] :
// CHECK-NEXT:        tile.vreduce %[[GX]] to %{{.+}} {kind = "sum", axes = array<i64: 2, 3>}
// CHECK-NEXT:        tile.vadd %[[ACC]], %{{.+}} to %[[ACC]]
// CHECK-NEXT:      }
// CHECK-NEXT:      tile.vmuls %[[ACC]], 0.00591715
// CHECK-NEXT:      tile.copy %[[ACC]][%c0, %c0, %c0, %c0, %c0] to %{{.+}}[%c0, %[[CB]], %c0, %c0, %c0]
// CHECK-NEXT:    } {tile.parallel}
