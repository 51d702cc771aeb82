// RUN: not tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// verify-target on a preset without an L0C -> GM path (ascend310p: its CANN platform
// configuration lacks fix_pipe_l0c2out): a fixpipe into GM is rejected, located and
// naming the preset; the way out is fixpipe -> UB, then tile.copy UB -> GM.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "origin"}} {
  func.func @fix_to_gm(%c: memref<2x2x16x16xf32, "L0C">, %out: memref<32x32xf32, "GM">) attributes {tile.kernel = "cube"} {
    %c0 = arith.constant 0 : index
    tile.fixpipe %c to %out[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "GM">
    func.return
  }
}
// CHECK: error: pass 'verify-target': 'tile.fixpipe' in @fix_to_gm: fixpipe writes L0C -> GM, which ascend310p has no path for (no fix_pipe_l0c2out): L0C goes to UB, then tile.copy UB -> GM
