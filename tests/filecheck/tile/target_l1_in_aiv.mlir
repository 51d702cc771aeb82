// RUN: not tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// verify-target on a decoupled preset (ascend910b: AIC + AIV, no L0C -> UB): each
// violation names its op, function and the preset; ascend310p (coupled) accepts.
// An L1 buffer in an AIV function.
builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}} {
  func.func @aiv_l1() attributes {tile.kernel = "vector"} {
    %l1 = tile.alloc : memref<1x1x16x16xf32, "L1">
    func.return
  }
}
// CHECK: error: pass 'verify-target': 'tile.alloc' (%l1) in @aiv_l1: L1 buffer in an AIV function; on ascend910b the AIV has UB only

