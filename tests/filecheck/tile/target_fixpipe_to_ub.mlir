// RUN: not tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// verify-target on a decoupled preset (ascend910b: AIC + AIV, no L0C -> UB): each
// violation names its op, function and the preset; ascend310p (coupled) accepts.
// The fixpipe itself, in a function of no declared unit that has L0C (an AIC function).
builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}} {
  func.func @fix_only(%c: memref<2x2x16x16xf32, "L0C">, %acc: memref<32x32xf32, "UB">) {
    %c0 = arith.constant 0 : index
    tile.fixpipe %c to %acc[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "UB">
    func.return
  }
}
// CHECK: error: pass 'verify-target': 'tile.fixpipe' in @fix_only: fixpipe writes L0C -> UB, which ascend910b (decoupled AIC / AIV) has no path for: L0C goes to GM or L1 (a mix kernel's GM workspace)

