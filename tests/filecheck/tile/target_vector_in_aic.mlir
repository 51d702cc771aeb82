// RUN: not tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// verify-target on a decoupled preset (ascend910b: AIC + AIV, no L0C -> UB): each
// violation names its op, function and the preset; ascend310p (coupled) accepts.
// A vector op in an AIC function (a mix kernel's AIC part).
builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}} {
  func.func @aic_vadd(%u: memref<64xf32, "UB">) attributes {tile.kernel = "cube", tile.mix = "aic"} {
    tile.vadd %u, %u to %u : memref<64xf32, "UB">, memref<64xf32, "UB"> to memref<64xf32, "UB">
    func.return
  }
}
// CHECK: error: pass 'verify-target': 'tile.vadd' in @aic_vadd: a vector-unit op in an AIC function; on ascend910b the AIC has no vector unit or UB

