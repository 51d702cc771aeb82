// RUN: tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// verify-target on a decoupled preset (ascend910b: AIC + AIV, no L0C -> UB): each
// violation names its op, function and the preset; ascend310p (coupled) accepts.
// The same on the coupled ascend310p: accepted.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "origin"}} {
  func.func @coupled(%c: memref<2x2x16x16xf32, "L0C">, %acc: memref<32x32xf32, "UB">) attributes {tile.kernel = "cube"} {
    %c0 = arith.constant 0 : index
    tile.fixpipe %c to %acc[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "UB">
    tile.vadd %acc, %acc to %acc : memref<32x32xf32, "UB">, memref<32x32xf32, "UB"> to memref<32x32xf32, "UB">
    func.return
  }
}
// CHECK: func.func @coupled(
