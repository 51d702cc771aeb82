// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A soft all-core barrier (Ascend C's SyncAll(gmWorkspace, ubWorkspace), 310P's AI cores)
// writes its core's arrival to a GM workspace of 32 bytes of i32 per core, with a UB
// workspace of as many bytes: without them, or with one too small for the kernel's
// blocks, it is rejected; a hard barrier takes none.

func.func @soft_without_workspace() attributes {tile.kernel = "cube", tile.blocks = 2 : i64} {
  tile.sync_all {mode = "soft", cores = "all"}
  func.return
}
// CHECK: {{.*}}sync_all_workspace_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.sync_all' in @soft_without_workspace: a soft all-core barrier needs its GM workspace (Ascend C's SyncAll(gmWorkspace, ubWorkspace): 32 bytes of i32 per core, zero-initialised), allocated by the host before the launch

// -----

func.func @soft_too_small(%ws: memref<8xi32, "GM">, %ub: memref<16xi32, "UB">) attributes {tile.kernel = "cube", tile.blocks = 2 : i64} {
  tile.sync_all %ws, %ub : memref<8xi32, "GM">, memref<16xi32, "UB"> {mode = "soft", cores = "all"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.sync_all' in @soft_too_small: a soft all-core barrier over 2 blocks needs a GM workspace of 16 i32 (32 bytes per block), got memref<8xi32, "GM">

// -----

func.func @soft_in_ub(%ws: memref<16xi32, "UB">, %ub: memref<16xi32, "UB">) attributes {tile.kernel = "cube", tile.blocks = 2 : i64} {
  tile.sync_all %ws, %ub : memref<16xi32, "UB">, memref<16xi32, "UB"> {mode = "soft", cores = "all"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.sync_all' in @soft_in_ub: a soft all-core barrier's GM workspace is a 1-D i32 buffer in GM, got memref<16xi32, "UB">

// -----

func.func @soft_without_ub_workspace(%ws: memref<16xi32, "GM">) attributes {tile.kernel = "cube", tile.blocks = 2 : i64} {
  tile.sync_all %ws : memref<16xi32, "GM"> {mode = "soft", cores = "all"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.sync_all' in @soft_without_ub_workspace: a soft all-core barrier takes its GM workspace and its UB workspace (Ascend C's ubWorkspace: 32 bytes of i32 per core), got 1 operand(s)

// -----

func.func @soft_ub_too_small(%ws: memref<16xi32, "GM">, %ub: memref<8xi32, "UB">) attributes {tile.kernel = "cube", tile.blocks = 2 : i64} {
  tile.sync_all %ws, %ub : memref<16xi32, "GM">, memref<8xi32, "UB"> {mode = "soft", cores = "all"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.sync_all' in @soft_ub_too_small: a soft all-core barrier over 2 blocks needs a UB workspace of 16 i32 (32 bytes per block), got memref<8xi32, "UB">

// -----

func.func @hard_with_workspace(%ws: memref<16xi32, "GM">) attributes {tile.kernel = "vector", tile.blocks = 2 : i64} {
  tile.sync_all %ws : memref<16xi32, "GM"> {mode = "hard", cores = "aiv"}
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.sync_all' in @hard_with_workspace: a hard all-core barrier takes no workspace (the chip's all-core synchronisation instruction); only a soft one does
// CHECK-NOT: Traceback
