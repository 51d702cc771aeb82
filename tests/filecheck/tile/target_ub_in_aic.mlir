// RUN: not tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// verify-target on a decoupled preset (ascend910b: AIC + AIV, no L0C -> UB): each
// violation names its op, function and the preset; ascend310p (coupled) accepts.
// A fixpipe into UB, in a cube kernel: both rules name it.
builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}} {
  func.func @fix_to_ub(%g: memref<32x32xf32, "GM">) attributes {tile.kernel = "cube"} {
    %c = tile.alloc : memref<2x2x16x16xf32, "L0C">
    %c0 = arith.constant 0 : index
    tile.fixpipe %c to %g[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "GM">
    %acc = tile.alloc : memref<32x32xf32, "UB">
    tile.fixpipe %c to %acc[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "UB">
    func.return
  }
}
// CHECK: error: pass 'verify-target': 'tile.alloc' (%acc) in @fix_to_ub: a UB access in an AIC function; on ascend910b the AIC has no vector unit or UB

