// RUN: tilegraph-opt %s -p alias-reshapes | filecheck %s
// RUN: tilegraph-opt %s -p alias-reshapes | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p alias-reshapes,alias-reshapes | filecheck %s
// RUN: tilegraph-opt %s -p alias-reshapes,plan-memory | filecheck %s --check-prefix=PLAN
// RUN: tilegraph-opt %s -p alias-reshapes --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// alias-reshapes on a host sequence as lower-graph-to-kernels writes it (macro kernels).
//
//   @relu(%x -> %r)            a kernel
//   @reshape(%r -> %s)         reshape-only, %s only read after: an alias of %r
//   @squeeze(%s -> %q)         an alias of an alias: the view's source is %s
//   @exp(%q -> %e)             reads %r's bytes through two views
//   @flatten(%y -> %f)         the source is an argument, %f is only read: an alias
//   @neg(%f -> %n)
//   @unsqueeze(%w -> %u)       the source is a tile.constant (never written): an alias
//   @add(%n, %u -> %a)
//   @reshape(%x -> %k)         %k is returned and its source is an argument: the copy stays
//   @squeeze(%r -> %o)         %o is returned, its source a workspace buffer: an alias
//   @reshape(%e -> %z)         %e is written again afterwards (@relu2): the copy stays
//   @relu2(%x -> %e)
//   @transpose(%r -> %t)       moves elements: not a reshape kernel
//   @to_5hd(%v -> %h)          a layout.trans_data: not a reshape kernel
//
// The second RUN line parses the result back; the third shows that a second run changes
// nothing; the fourth that plan-memory reads the aliases as their sources (%r lives to
// its last reader through them and is returned through %o: it lives to the end).
func.func @main(%x: memref<3x16x8xf32, "GM">, %y: memref<2x3x4xf32, "GM">, %v: memref<1x4x6x6xf32, "GM">) -> (memref<3x128xf32, "GM">, memref<3x16x8xf32, "GM">, memref<6x4xf32, "GM">, memref<3x128xf32, "GM">, memref<8x16x3xf32, "GM">, memref<1x1x6x6x16xf32, "GM">) attributes {tile.signature = (!layout.tensor<3x16x8xf32>, !layout.tensor<2x3x4xf32>, !layout.tensor<1x4x6x6xf32, NCHW>) -> (!layout.tensor<3x128xf32>, !layout.tensor<3x16x8xf32>, !layout.tensor<6x4xf32>, !layout.tensor<3x128xf32>, !layout.tensor<8x16x3xf32>, !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>)} {
  %w = tile.constant <f32, [4], [1.0, 2.0, 3.0, 4.0]> : memref<4xf32, "GM">
  %r = tile.alloc : memref<3x16x8xf32, "GM">
  tile.launch @relu(%x, %r) : memref<3x16x8xf32, "GM">, memref<3x16x8xf32, "GM">
  %s = tile.alloc : memref<1x3x128xf32, "GM">
  tile.launch @reshape(%r, %s) : memref<3x16x8xf32, "GM">, memref<1x3x128xf32, "GM">
  %q = tile.alloc : memref<3x128xf32, "GM">
  tile.launch @squeeze(%s, %q) : memref<1x3x128xf32, "GM">, memref<3x128xf32, "GM">
  %e = tile.alloc : memref<3x128xf32, "GM">
  tile.launch @exp(%q, %e) : memref<3x128xf32, "GM">, memref<3x128xf32, "GM">
  %f = tile.alloc : memref<6x4xf32, "GM">
  tile.launch @flatten(%y, %f) : memref<2x3x4xf32, "GM">, memref<6x4xf32, "GM">
  %n = tile.alloc : memref<6x4xf32, "GM">
  tile.launch @neg(%f, %n) : memref<6x4xf32, "GM">, memref<6x4xf32, "GM">
  %u = tile.alloc : memref<1x4xf32, "GM">
  tile.launch @unsqueeze(%w, %u) : memref<4xf32, "GM">, memref<1x4xf32, "GM">
  %a = tile.alloc : memref<6x4xf32, "GM">
  tile.launch @add(%n, %u, %a) : memref<6x4xf32, "GM">, memref<1x4xf32, "GM">, memref<6x4xf32, "GM">
  %k = tile.alloc : memref<3x128xf32, "GM">
  tile.launch @reshape_arg(%x, %k) : memref<3x16x8xf32, "GM">, memref<3x128xf32, "GM">
  %o = tile.alloc : memref<3x16x8xf32, "GM">
  tile.launch @squeeze_r(%r, %o) : memref<3x16x8xf32, "GM">, memref<3x16x8xf32, "GM">
  %z = tile.alloc : memref<8x16x3xf32, "GM">
  tile.launch @reshape_e(%e, %z) : memref<3x128xf32, "GM">, memref<8x16x3xf32, "GM">
  tile.launch @relu2(%k, %e) : memref<3x128xf32, "GM">, memref<3x128xf32, "GM">
  %t = tile.alloc : memref<8x16x3xf32, "GM">
  tile.launch @transpose(%r, %t) : memref<3x16x8xf32, "GM">, memref<8x16x3xf32, "GM">
  %h = tile.alloc : memref<1x1x6x6x16xf32, "GM">
  tile.launch @to_5hd(%v, %h) : memref<1x4x6x6xf32, "GM">, memref<1x1x6x6x16xf32, "GM">
  func.return %k, %o, %a, %e, %z, %h : memref<3x128xf32, "GM">, memref<3x16x8xf32, "GM">, memref<6x4xf32, "GM">, memref<3x128xf32, "GM">, memref<8x16x3xf32, "GM">, memref<1x1x6x6x16xf32, "GM">
}
func.func @relu(%in: memref<3x16x8xf32, "GM">, %out: memref<3x16x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x16x8xf32, "GM"> -> !layout.tensor<3x16x8xf32>
  %r = graph.relu %t : !layout.tensor<3x16x8xf32>
  tile.write %r to %out : !layout.tensor<3x16x8xf32> to memref<3x16x8xf32, "GM">
  func.return
}
func.func @reshape(%in: memref<3x16x8xf32, "GM">, %out: memref<1x3x128xf32, "GM">) attributes {tile.kernel = "vector"} {
  %shape = graph.constant dense<[1, 3, 128]> : !layout.tensor<3xi64>
  %t = tile.read %in : memref<3x16x8xf32, "GM"> -> !layout.tensor<3x16x8xf32>
  %r = graph.reshape %t, %shape : (!layout.tensor<3x16x8xf32>, !layout.tensor<3xi64>) -> !layout.tensor<1x3x128xf32>
  tile.write %r to %out : !layout.tensor<1x3x128xf32> to memref<1x3x128xf32, "GM">
  func.return
}
func.func @squeeze(%in: memref<1x3x128xf32, "GM">, %out: memref<3x128xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<1x3x128xf32, "GM"> -> !layout.tensor<1x3x128xf32>
  %r = graph.squeeze %t : (!layout.tensor<1x3x128xf32>) -> !layout.tensor<3x128xf32>
  tile.write %r to %out : !layout.tensor<3x128xf32> to memref<3x128xf32, "GM">
  func.return
}
func.func @exp(%in: memref<3x128xf32, "GM">, %out: memref<3x128xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x128xf32, "GM"> -> !layout.tensor<3x128xf32>
  %r = graph.exp %t : !layout.tensor<3x128xf32>
  tile.write %r to %out : !layout.tensor<3x128xf32> to memref<3x128xf32, "GM">
  func.return
}
func.func @flatten(%in: memref<2x3x4xf32, "GM">, %out: memref<6x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<2x3x4xf32, "GM"> -> !layout.tensor<2x3x4xf32>
  %r = graph.flatten %t {axis = 2} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<6x4xf32>
  tile.write %r to %out : !layout.tensor<6x4xf32> to memref<6x4xf32, "GM">
  func.return
}
func.func @neg(%in: memref<6x4xf32, "GM">, %out: memref<6x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<6x4xf32, "GM"> -> !layout.tensor<6x4xf32>
  %r = graph.neg %t : !layout.tensor<6x4xf32>
  tile.write %r to %out : !layout.tensor<6x4xf32> to memref<6x4xf32, "GM">
  func.return
}
func.func @unsqueeze(%in: memref<4xf32, "GM">, %out: memref<1x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %axes = graph.constant dense<[0]> : !layout.tensor<1xi64>
  %t = tile.read %in : memref<4xf32, "GM"> -> !layout.tensor<4xf32>
  %r = graph.unsqueeze %t, %axes : (!layout.tensor<4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<1x4xf32>
  tile.write %r to %out : !layout.tensor<1x4xf32> to memref<1x4xf32, "GM">
  func.return
}
func.func @add(%in0: memref<6x4xf32, "GM">, %in1: memref<1x4xf32, "GM">, %out: memref<6x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t0 = tile.read %in0 : memref<6x4xf32, "GM"> -> !layout.tensor<6x4xf32>
  %t1 = tile.read %in1 : memref<1x4xf32, "GM"> -> !layout.tensor<1x4xf32>
  %r = graph.add %t0, %t1 : (!layout.tensor<6x4xf32>, !layout.tensor<1x4xf32>) -> !layout.tensor<6x4xf32>
  tile.write %r to %out : !layout.tensor<6x4xf32> to memref<6x4xf32, "GM">
  func.return
}
func.func @reshape_arg(%in: memref<3x16x8xf32, "GM">, %out: memref<3x128xf32, "GM">) attributes {tile.kernel = "vector"} {
  %shape = graph.constant dense<[3, 128]> : !layout.tensor<2xi64>
  %t = tile.read %in : memref<3x16x8xf32, "GM"> -> !layout.tensor<3x16x8xf32>
  %r = graph.reshape %t, %shape : (!layout.tensor<3x16x8xf32>, !layout.tensor<2xi64>) -> !layout.tensor<3x128xf32>
  tile.write %r to %out : !layout.tensor<3x128xf32> to memref<3x128xf32, "GM">
  func.return
}
func.func @squeeze_r(%in: memref<3x16x8xf32, "GM">, %out: memref<3x16x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x16x8xf32, "GM"> -> !layout.tensor<3x16x8xf32>
  %r = graph.squeeze %t : (!layout.tensor<3x16x8xf32>) -> !layout.tensor<3x16x8xf32>
  tile.write %r to %out : !layout.tensor<3x16x8xf32> to memref<3x16x8xf32, "GM">
  func.return
}
func.func @reshape_e(%in: memref<3x128xf32, "GM">, %out: memref<8x16x3xf32, "GM">) attributes {tile.kernel = "vector"} {
  %shape = graph.constant dense<[8, 16, 3]> : !layout.tensor<3xi64>
  %t = tile.read %in : memref<3x128xf32, "GM"> -> !layout.tensor<3x128xf32>
  %r = graph.reshape %t, %shape : (!layout.tensor<3x128xf32>, !layout.tensor<3xi64>) -> !layout.tensor<8x16x3xf32>
  tile.write %r to %out : !layout.tensor<8x16x3xf32> to memref<8x16x3xf32, "GM">
  func.return
}
func.func @relu2(%in: memref<3x128xf32, "GM">, %out: memref<3x128xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x128xf32, "GM"> -> !layout.tensor<3x128xf32>
  %r = graph.relu %t : !layout.tensor<3x128xf32>
  tile.write %r to %out : !layout.tensor<3x128xf32> to memref<3x128xf32, "GM">
  func.return
}
func.func @transpose(%in: memref<3x16x8xf32, "GM">, %out: memref<8x16x3xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x16x8xf32, "GM"> -> !layout.tensor<3x16x8xf32>
  %r = graph.transpose %t {perm = [2, 1, 0]} : (!layout.tensor<3x16x8xf32>) -> !layout.tensor<8x16x3xf32>
  tile.write %r to %out : !layout.tensor<8x16x3xf32> to memref<8x16x3xf32, "GM">
  func.return
}
func.func @to_5hd(%in: memref<1x4x6x6xf32, "GM">, %out: memref<1x1x6x6x16xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<1x4x6x6xf32, "GM"> -> !layout.tensor<1x4x6x6xf32, NCHW>
  %r = layout.trans_data %t : !layout.tensor<1x4x6x6xf32, NCHW> -> !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]>
  tile.write %r to %out : !layout.tensor<1x4x6x6xf32, NCHW -> NC1HWC0 [1, 1, 6, 6, 16]> to memref<1x1x6x6x16xf32, "GM">
  func.return
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %w = tile.constant
// CHECK-NEXT:    %r = tile.alloc : memref<3x16x8xf32, "GM">
// CHECK-NEXT:    tile.launch @relu(%x, %r)
// CHECK-NEXT:    %s = tile.reshape_view %r : memref<3x16x8xf32, "GM"> to memref<1x3x128xf32, "GM">
// CHECK-NEXT:    %q = tile.reshape_view %s : memref<1x3x128xf32, "GM"> to memref<3x128xf32, "GM">
// CHECK-NEXT:    %e = tile.alloc : memref<3x128xf32, "GM">
// CHECK-NEXT:    tile.launch @exp(%q, %e)
// CHECK-NEXT:    %f = tile.reshape_view %y : memref<2x3x4xf32, "GM"> to memref<6x4xf32, "GM">
// CHECK-NEXT:    %n = tile.alloc : memref<6x4xf32, "GM">
// CHECK-NEXT:    tile.launch @neg(%f, %n)
// CHECK-NEXT:    %u = tile.reshape_view %w : memref<4xf32, "GM"> to memref<1x4xf32, "GM">
// CHECK-NEXT:    %a = tile.alloc : memref<6x4xf32, "GM">
// CHECK-NEXT:    tile.launch @add(%n, %u, %a)
// CHECK-NEXT:    %k = tile.alloc : memref<3x128xf32, "GM">
// CHECK-NEXT:    tile.launch @reshape_arg(%x, %k)
// CHECK-NEXT:    %o = tile.reshape_view %r : memref<3x16x8xf32, "GM"> to memref<3x16x8xf32, "GM">
// CHECK-NEXT:    %z = tile.alloc : memref<8x16x3xf32, "GM">
// CHECK-NEXT:    tile.launch @reshape_e(%e, %z)
// CHECK-NEXT:    tile.launch @relu2(%k, %e)
// CHECK-NEXT:    %t = tile.alloc : memref<8x16x3xf32, "GM">
// CHECK-NEXT:    tile.launch @transpose(%r, %t)
// CHECK-NEXT:    %h = tile.alloc : memref<1x1x6x6x16xf32, "GM">
// CHECK-NEXT:    tile.launch @to_5hd(%v, %h)
// CHECK-NEXT:    func.return %k, %o, %a, %e, %z, %h

// The kernels no launch runs any more are gone; the refused ones stay.
// CHECK-NOT:   func.func @reshape(
// CHECK-NOT:   func.func @squeeze(
// CHECK-NOT:   func.func @flatten(
// CHECK-NOT:   func.func @unsqueeze(
// CHECK:       func.func @reshape_arg(
// CHECK-NOT:   func.func @squeeze_r(
// CHECK:       func.func @reshape_e(
// CHECK:       func.func @transpose(
// CHECK:       func.func @to_5hd(

// plan-memory: the eight allocations left are its buffers (an alias is none: it is its
// source's bytes); the views are placed, the aliases stay aliases of them.
// PLAN:      tile.memory = {{{.*}}buffers = 8 : i64
// PLAN:      %r = tile.view %workspace[{{[0-9]+}}]
// PLAN-NEXT: tile.launch @relu(%x, %r)
// PLAN-NEXT: %s = tile.reshape_view %r
// PLAN-NEXT: %q = tile.reshape_view %s

// STATS:      alias-reshapes (ran 1x)
// STATS-NEXT:   aliased          5
// STATS-NEXT:   kernels-removed  5
