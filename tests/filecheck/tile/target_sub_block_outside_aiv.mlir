// RUN: not tilegraph-opt %s -p verify-target 2>&1 | filecheck %s
// tile.sub_block_idx only in a mix kernel's AIV part: a plain vector kernel's blocks have
// no group mates to tell apart (checked on every preset, coupled ones too).
builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}} {
  func.func @vector_sub() attributes {tile.kernel = "vector"} {
    %s = tile.sub_block_idx
    func.return
  }
}
// CHECK: error: pass 'verify-target': 'tile.sub_block_idx' (%s) in @vector_sub: tile.sub_block_idx outside a mix kernel's AIV part
