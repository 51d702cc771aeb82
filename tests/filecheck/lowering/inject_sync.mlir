// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},inject-sync' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},inject-sync,inject-sync' | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},inject-sync' | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p 'tile-kernels{platform=test},inject-sync' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// inject-sync on an add + relu chain tiled by two rows (test preset). MTE2 loads a and b,
// V adds and applies ReLU, MTE3 stores: forward flags MTE2 -> V (loads before the add) and
// V -> MTE3 (relu before the store); loop-carried flags V -> MTE2 (the next loads overwrite
// what the add reads) and MTE3 -> V (the next relu overwrites what the store reads), each
// primed before the loop and drained after it; a V barrier between the add and the relu
// that reads its result. The second RUN line shows a synchronised kernel is left alone.
func.func @add_relu(%in: memref<64x100xf32, "GM">, %in2: memref<64x100xf32, "GM">, %out: memref<64x100xf32, "GM">) attributes {tile.kernel = "vector"} {
  %a = tile.read %in : memref<64x100xf32, "GM"> -> !layout.tensor<64x100xf32>
  %b = tile.read %in2 : memref<64x100xf32, "GM"> -> !layout.tensor<64x100xf32>
  %c = graph.add %a, %b : (!layout.tensor<64x100xf32>, !layout.tensor<64x100xf32>) -> !layout.tensor<64x100xf32>
  %d = graph.relu %c : !layout.tensor<64x100xf32>
  tile.write %d to %out : !layout.tensor<64x100xf32> to memref<64x100xf32, "GM">
  func.return
}

// CHECK-LABEL: func.func @add_relu(
// CHECK:         tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
// CHECK-NEXT:    tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
// CHECK-NEXT:    scf.for %i0 = %c0 to %c64 step %c2 {
// CHECK-NEXT:      tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
// CHECK-NEXT:      tile.copy %in[%i0, %c0] to %a_ub
// CHECK-NEXT:      tile.copy %in2[%i0, %c0] to %b_ub
// CHECK-NEXT:      tile.set_flag {src = "MTE2", dst = "V", event = 0 : i64}
// CHECK-NEXT:      tile.wait_flag {src = "MTE2", dst = "V", event = 0 : i64}
// CHECK-NEXT:      tile.vadd %a_ub, %b_ub to %c_ub
// CHECK-NEXT:      tile.set_flag {src = "V", dst = "MTE2", event = 0 : i64}
// CHECK-NEXT:      tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
// CHECK-NEXT:      tile.pipe_barrier {pipe = "V"}
// CHECK-NEXT:      tile.vrelu %c_ub to %d_ub
// CHECK-NEXT:      tile.set_flag {src = "V", dst = "MTE3", event = 0 : i64}
// CHECK-NEXT:      tile.wait_flag {src = "V", dst = "MTE3", event = 0 : i64}
// CHECK-NEXT:      tile.copy %d_ub[%c0, %c0] to %out[%i0, %c0]
// CHECK-NEXT:      tile.set_flag {src = "MTE3", dst = "V", event = 0 : i64}
// CHECK-NEXT:    } {tile.parallel}
// CHECK-NEXT:    tile.wait_flag {src = "MTE3", dst = "V", event = 0 : i64}
// CHECK-NEXT:    tile.wait_flag {src = "V", dst = "MTE2", event = 0 : i64}
// CHECK-NEXT:    func.return

// STATS:      inject-sync (ran 1x)
// STATS-NEXT:   kernels                   1
// STATS-NEXT:   set-wait-pairs            4
// STATS-NEXT:   barriers                  1
// STATS-NEXT:   implied-pairs-dropped     0
// STATS-NEXT:   implied-barriers-dropped  0
