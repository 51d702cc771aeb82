// RUN: tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// The path ascend310p has (no L0C -> GM): fixpipe L0C -> UB, then MTE3's copy UB -> GM.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "origin"}} {
  func.func @fix_via_ub(%c: memref<2x2x16x16xf32, "L0C">, %acc: memref<32x32xf32, "UB">, %out: memref<32x32xf32, "GM">) attributes {tile.kernel = "cube"} {
    %c0 = arith.constant 0 : index
    tile.fixpipe %c to %acc[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "UB">
    tile.copy %acc[%c0, %c0] to %out[%c0, %c0] : memref<32x32xf32, "UB"> to memref<32x32xf32, "GM">
    func.return
  }
}
// CHECK: func.func @fix_via_ub(
// CHECK: tile.copy
