// RUN: tilegraph-opt %s -p plan-memory --split-input-file --verify-diagnostics | filecheck %s
// RUN: not tilegraph-opt %s -p plan-memory --split-input-file 2>&1 | filecheck %s --check-prefix=CLI

// What plan-memory refuses, and what the tile.view verifier rejects: one message per
// chunk, in order, naming the function, the buffer and the launch.

// Only kernels, no host function: nothing to plan. From the command line it is one line
// and a non-zero exit code.
func.func @only_a_kernel(%in: memref<4xf32, "GM">, %out: memref<4xf32, "GM">) attributes {tile.kernel = "vector"} {
  func.return
}
// CHECK: plan-memory: the module has no lowered host function (a func.func with tile.signature); run lower-graph-to-kernels first
// CLI: error: pass 'plan-memory': the module has no lowered host function (a func.func with tile.signature); run lower-graph-to-kernels first
// CLI-NOT: Traceback

// -----

// The launched kernel is not in the module: the planner cannot tell what it writes.
func.func @main(%x: memref<4xf32, "GM">) -> memref<4xf32, "GM"> attributes {tile.signature = (!layout.tensor<4xf32>) -> !layout.tensor<4xf32>} {
  %a = tile.alloc : memref<4xf32, "GM">
  tile.launch @missing(%x, %a) : memref<4xf32, "GM">, memref<4xf32, "GM">
  func.return %a : memref<4xf32, "GM">
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: plan-memory: @main launches @missing, which is not a function of the module

// -----

// A declared kernel without a body: same.
func.func @main(%x: memref<4xf32, "GM">) -> memref<4xf32, "GM"> attributes {tile.signature = (!layout.tensor<4xf32>) -> !layout.tensor<4xf32>} {
  %a = tile.alloc : memref<4xf32, "GM">
  tile.launch @external(%x, %a) : memref<4xf32, "GM">, memref<4xf32, "GM">
  func.return %a : memref<4xf32, "GM">
}
func.func private @external(memref<4xf32, "GM">, memref<4xf32, "GM">)
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: plan-memory: @external has no body; cannot tell which of its arguments it writes

// -----

// %a is read by @neg before anything writes it (on the planned workspace it would hold
// another tensor's bytes, not zeros).
func.func @main(%x: memref<4xf32, "GM">) -> memref<4xf32, "GM"> attributes {tile.signature = (!layout.tensor<4xf32>) -> !layout.tensor<4xf32>} {
  %a = tile.alloc : memref<4xf32, "GM">
  %b = tile.alloc : memref<4xf32, "GM">
  tile.launch @neg(%a, %b) : memref<4xf32, "GM">, memref<4xf32, "GM">
  func.return %b : memref<4xf32, "GM">
}
func.func @neg(%in: memref<4xf32, "GM">, %out: memref<4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<4xf32, "GM"> -> !layout.tensor<4xf32>
  %r = graph.neg %t : !layout.tensor<4xf32>
  tile.write %r to %out : !layout.tensor<4xf32> to memref<4xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: plan-memory: @main: %a is read by launch #0 (@neg) before any launch writes it

// -----

// A returned buffer that no launch writes.
func.func @main(%x: memref<4xf32, "GM">) -> memref<4xf32, "GM"> attributes {tile.signature = (!layout.tensor<4xf32>) -> !layout.tensor<4xf32>} {
  %a = tile.alloc : memref<4xf32, "GM">
  func.return %a : memref<4xf32, "GM">
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: plan-memory: @main: %a is returned but no launch writes it

// -----

// The host sequence may only launch kernels on a buffer and return it.
func.func @main(%x: memref<4xf32, "GM">) -> memref<4xf32, "GM"> attributes {tile.signature = (!layout.tensor<4xf32>) -> !layout.tensor<4xf32>} {
  %a = tile.alloc : memref<4xf32, "GM">
  memref.dealloc %a : memref<4xf32, "GM">
  func.return %x : memref<4xf32, "GM">
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: plan-memory: @main: %a is used by 'memref.dealloc'; the host sequence may only launch kernels on it and return it

// -----

// tile.view: the offset must be a multiple of the GM alignment (32 B)...
func.func @misaligned() {
  %ws = tile.alloc : memref<256xi8, "GM">
  %v = tile.view %ws[16] : memref<256xi8, "GM"> to memref<4xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}plan_memory_invalid.mlir{{(:[0-9]+)?}}: error: 'tile.view' (%v) in @misaligned: 'tile.view': offset 16 is not a multiple of the GM alignment (32 B)

// -----

// ... the view must end inside the workspace (a GM bf16 element takes a 4-byte container,
// as the executors hold it) ...
func.func @past_the_end() {
  %ws = tile.alloc : memref<256xi8, "GM">
  %v = tile.view %ws[224] : memref<256xi8, "GM"> to memref<16xbf16, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.view' (%v) in @past_the_end: 'tile.view': a 64 B view at offset 224 ends at 288, past the end of the 256 B workspace

// -----

// ... the workspace is a 1-D i8 GM buffer ...
func.func @not_a_workspace() {
  %ws = tile.alloc : memref<64xf32, "GM">
  %v = tile.view %ws[0] : memref<64xf32, "GM"> to memref<4xf32, "GM">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.view' (%v) in @not_a_workspace: 'tile.view': the workspace must be a 1-D i8 buffer in GM, got memref<64xf32, "GM">

// -----

// ... and a view is a GM buffer.
func.func @on_chip_view() {
  %ws = tile.alloc : memref<256xi8, "GM">
  %v = tile.view %ws[0] : memref<256xi8, "GM"> to memref<4xf32, "UB">
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: {{.*}}: error: 'tile.view' (%v) in @on_chip_view: 'tile.view': views are GM buffers, but the result is in UB
