// RUN: not tilegraph-opt %s 2>&1 | filecheck %s
// tile.sync_all, the all-core barrier, is only legal inside a launched kernel: a host
// function (no tile.kernel, or tile.kernel = "host") has no blocks to synchronise.
func.func @host() {
  tile.sync_all {mode = "hard", cores = "all"}
  func.return
}
// CHECK: error: 'tile.sync_all' in @host: an all-core barrier is only legal inside a launched kernel (a function with tile.kernel = "cube" or "vector")
// CHECK-NOT: Traceback
