// RUN: tilegraph-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Verifier errors of tile.loop_launches (dialects/tile/loop.py), one per chunk, in order.

// A scan output's stack must hold trip slices: 3 slots for a loop of 4 iterations.
func.func @short_stack(%s: memref<2x16xf32, "GM">, %y: memref<3x2x16xf32, "GM">) {
  "tile.loop_launches"(%s, %y) <{trip = 4 : i64, operandSegmentSizes = array<i32: 0, 0, 0, 0, 1, 1, 0>}> ({
  ^bb0(%s1: memref<2x16xf32, "GM">, %y1: memref<3x2x16xf32, "GM">):
  }) : (memref<2x16xf32, "GM">, memref<3x2x16xf32, "GM">) -> ()
  func.return
}
// CHECK: error: {{.*}}'tile.loop_launches': a scan output's stack must be a [4, 2, 16] buffer, got memref<3x2x16xf32, "GM">

// -----

// A carried value's initial, state and next buffers have one type.
func.func @state_type(%i: memref<2x16xf32, "GM">, %s: memref<2x16xf32, "GM">, %n: memref<2x8xf32, "GM">) {
  "tile.loop_launches"(%i, %s, %n) <{trip = 2 : i64, operandSegmentSizes = array<i32: 0, 1, 1, 1, 0, 0, 0>}> ({
  ^bb0(%i1: memref<2x16xf32, "GM">, %s1: memref<2x16xf32, "GM">, %n1: memref<2x8xf32, "GM">):
  }) : (memref<2x16xf32, "GM">, memref<2x16xf32, "GM">, memref<2x8xf32, "GM">) -> ()
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: error: {{.*}}'tile.loop_launches': a carried value's buffers differ: memref<2x16xf32, "GM"> and memref<2x8xf32, "GM">

// -----

// The body holds launches only: an allocation belongs before the loop.
func.func @alloc_in_body(%x: memref<4xf32, "GM">) {
  "tile.loop_launches"(%x) <{trip = 2 : i64, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 1>}> ({
  ^bb0(%x1: memref<4xf32, "GM">):
    %t = tile.alloc : memref<4xf32, "GM">
  }) : (memref<4xf32, "GM">) -> ()
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: error: {{.*}}'tile.loop_launches': the body holds launches only, not tile.alloc

// -----

// At least one iteration.
func.func @no_trip(%x: memref<4xf32, "GM">) {
  "tile.loop_launches"(%x) <{trip = 0 : i64, operandSegmentSizes = array<i32: 0, 0, 0, 0, 0, 0, 1>}> ({
  ^bb0(%x1: memref<4xf32, "GM">):
  }) : (memref<4xf32, "GM">) -> ()
  func.return
}
// CHECK-NEXT: {{^// -+$}}
// CHECK-NEXT: error: {{.*}}'tile.loop_launches': trip must be at least 1, got 0
