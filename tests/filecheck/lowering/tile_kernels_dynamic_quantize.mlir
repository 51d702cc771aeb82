// RUN: tilegraph-opt %s -p 'tile-kernels,plan-memory' | filecheck %s

// DynamicQuantizeLinear as one kernel (lowering/conversion/tiling/dynamic_quantize.py) on
// 310P: the parameters and the QuantizeLinear of a 37 x 1001 float32 tensor, shared over
// the 8 AI cores in chunks of 4672 elements (37037 / 8 rounded up to 64 lanes). Each block
// reduces its chunk, writes its two extremes (each broadcast over a 32-byte slot) into the
// launch's %dq_partials workspace, meets the others at the soft all-core barrier (its GM
// workspace zero-filled by the launch, its UB workspace a buffer of the kernel), reads all
// the slots back, computes the scale and zero point, quantises the chunk still in UB, and
// block 0 alone stores the parameters.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "int8"}} {
  func.func @main(%x: memref<37x1001xf32, "GM">) -> (memref<37x1001xui8, "GM">, memref<f32, "GM">, memref<ui8, "GM">) attributes {tile.signature = (!layout.tensor<37x1001xf32>) -> (!layout.tensor<37x1001xui8>, !layout.tensor<f32>, !layout.tensor<ui8>)} {
    %q = tile.alloc : memref<37x1001xui8, "GM">
    %s = tile.alloc : memref<f32, "GM">
    %z = tile.alloc : memref<ui8, "GM">
    tile.launch @dynamic_quantize_0(%x, %q, %s, %z) : memref<37x1001xf32, "GM">, memref<37x1001xui8, "GM">, memref<f32, "GM">, memref<ui8, "GM">
    func.return %q, %s, %z : memref<37x1001xui8, "GM">, memref<f32, "GM">, memref<ui8, "GM">
  }
  func.func @dynamic_quantize_0(%x: memref<37x1001xf32, "GM">, %q_out: memref<37x1001xui8, "GM">, %s_out: memref<f32, "GM">, %z_out: memref<ui8, "GM">) attributes {tile.kernel = "vector"} {
    %x_1 = tile.read %x : memref<37x1001xf32, "GM"> -> !layout.tensor<37x1001xf32>
    %s, %z, %0 = graph.dynamic_quantize_params %x_1 {layout.kernel = "origin"} : (!layout.tensor<37x1001xf32>) -> (!layout.tensor<f32>, !layout.tensor<ui8>, !layout.tensor<i8>)
    %q = graph.quantize_linear %x_1, %s, %z {layout.kernel = "origin"} : (!layout.tensor<37x1001xf32>, !layout.tensor<f32>, !layout.tensor<ui8>) -> !layout.tensor<37x1001xui8>
    tile.write %q to %q_out : !layout.tensor<37x1001xui8> to memref<37x1001xui8, "GM">
    tile.write %s to %s_out : !layout.tensor<f32> to memref<f32, "GM">
    tile.write %z to %z_out : !layout.tensor<ui8> to memref<ui8, "GM">
    func.return
  }
}

// CHECK-LABEL: func.func @main(
// CHECK:         %dq_partials = tile.view %workspace[{{[0-9]+}}] : memref<{{[0-9]+}}xi8, "GM"> to memref<16x8xf32, "GM">
// CHECK:         %sync_workspace = tile.view %workspace[{{[0-9]+}}] : memref<{{[0-9]+}}xi8, "GM"> to memref<64xi32, "GM">
// CHECK:         tile.launch @dynamic_quantize_0(%x, %q, %s, %z, %dq_partials, %sync_workspace) {zero_fill = [5 : i64], blocks = 8 : i64}

// CHECK-LABEL: func.func @dynamic_quantize_0(
// CHECK-SAME:    tile.blocks = 8 : i64
// CHECK:         %sync_ub_workspace = tile.alloc {{.*}}: memref<64xi32, "UB">
// CHECK:         %block = tile.block_idx
// CHECK:         %[[START:.*]] = arith.muli %block, %c4672
// CHECK:         tile.copy_flat %x[%[[START]]] to %x_ub[%c0] {count = 4672 : i64}
// CHECK:         tile.vreduce %x_ub to %part_ub {kind = "min"
// CHECK:         tile.vreduce %x_ub to %part_ub {kind = "max"
// CHECK:         tile.copy %slot_ub[%c0, %c0] to %dq_partials[%block, %c0]
// CHECK:         tile.copy %slot_ub[%c0, %c0] to %dq_partials[{{%.*}}, %c0]
// CHECK-NEXT:    tile.sync_all %sync_workspace, %sync_ub_workspace : memref<64xi32, "GM">, memref<64xi32, "UB"> {mode = "soft", cores = "aiv"}
// CHECK-NEXT:    tile.copy %dq_partials[%c0, %c0] to %partials_ub[%c0, %c0]
// CHECK-NEXT:    tile.vreduce %partials_ub to %lo_ub {kind = "min"
// CHECK-NEXT:    tile.copy %dq_partials[%c8, %c0] to %partials_ub[%c0, %c0]
// CHECK-NEXT:    tile.vreduce %partials_ub to %hi_ub {kind = "max"
// CHECK:         tile.vdiv %x_ub, %safe_ub to %quotient_ub
// CHECK-NEXT:    tile.vround %quotient_ub
// CHECK:         tile.vcast %quotient_ub to %y_ub {rounding = "rint"}
// CHECK-NEXT:    tile.copy_flat %y_ub[%c0] to %q_out[%[[START]]] {count = 4672 : i64}
// CHECK-NEXT:    scf.for %first = %block to %c1 step %c1 {
// CHECK:           tile.copy %scale_out_ub[] to %s_out[]
// CHECK:           tile.copy %zero_point_out_ub[] to %z_out[]
// CHECK-NEXT:    }
