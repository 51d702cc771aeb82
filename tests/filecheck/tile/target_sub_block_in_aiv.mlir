// RUN: tilegraph-opt %s -p verify-target | filecheck %s
// tile.sub_block_idx in a mix kernel's AIV part is accepted (target_sub_block_outside_aiv.mlir:
// anywhere else it is rejected).
builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}} {
  func.func @k_mix_aiv() attributes {tile.kernel = "vector", tile.mix = "aiv"} {
    %s = tile.sub_block_idx
    func.return
  }
}
// CHECK: func.func @k_mix_aiv()
// CHECK-NEXT: %s = tile.sub_block_idx
