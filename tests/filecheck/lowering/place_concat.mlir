// RUN: tilegraph-opt %s -p 'place-concat{strided=false}' | filecheck %s
// RUN: tilegraph-opt %s -p 'place-concat{strided=false}' | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p 'place-concat{strided=false},place-concat{strided=false}' | filecheck %s
// RUN: tilegraph-opt %s -p 'place-concat{strided=false},plan-memory' | filecheck %s --check-prefix=PLAN
// RUN: tilegraph-opt %s -p 'place-concat{strided=false}' --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS
// RUN: tilegraph-opt %s -p place-concat | filecheck %s --check-prefix=STRIDED
// RUN: tilegraph-opt %s -p place-concat,place-concat | filecheck %s --check-prefix=STRIDED

// place-concat on a host sequence as lower-graph-to-kernels writes it (macro kernels);
// strided=false (contiguous runs only) but for the last two RUN lines.
//
//   @relu(%x -> %a), @neg(%x -> %b), @cat2(%a, %b -> %c)   placed: %a, %b slices of %c
//   @exp(%a -> %e)                  a reader of %a after the concat reads the slice
//   @cat3(%c, %e -> %d)             placed too: %c (itself placed) a slice of %d, one buffer
//   @cat2(%x, %f -> %g)             an argument: refused
//   @cat2(%h, %w -> %i)             a tile.constant: refused
//   @cat2(%j, %j -> %k)             one input twice: refused
//   @cat2(%l, %m -> %n)             %l is returned: refused
//   @cat2(%p, %q -> %r)             %p written by two launches: refused
//   @cat2(%s, %t -> %u)             %s written again after the concat: refused
//   @cat_b(%v, %z -> %bb)           batch 2 on the concat's axis 1: strided runs, refused
//                                   with strided=false
//
// With strided=true (the default: the last two RUN lines) @cat_b is placed too: %v and
// %z are strided views of %bb, written by clones of @relu_b / @neg_b whose output has the view's type.
//
// The second RUN line parses the result back; the third shows that a second run changes
// nothing; the fourth that plan-memory places the concat's output once (its slices are no
// buffers of their own) and the inputs it refused each in their own place.
func.func @main(%x: memref<1x2x4xf32, "GM">, %y: memref<2x2x4xf32, "GM">) -> (memref<1x6x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<2x4x4xf32, "GM">) attributes {tile.signature = (!layout.tensor<1x2x4xf32>, !layout.tensor<2x2x4xf32>) -> (!layout.tensor<1x6x4xf32>, !layout.tensor<1x4x4xf32>, !layout.tensor<1x4x4xf32>, !layout.tensor<1x4x4xf32>, !layout.tensor<1x4x4xf32>, !layout.tensor<1x2x4xf32>, !layout.tensor<1x4x4xf32>, !layout.tensor<1x4x4xf32>, !layout.tensor<2x4x4xf32>)} {
  %w = tile.constant <f32, [1, 2, 4], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : memref<1x2x4xf32, "GM">
  %a = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %a) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %b = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @neg(%x, %b) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %c = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%a, %b, %c) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  %e = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @exp(%a, %e) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %d = tile.alloc : memref<1x6x4xf32, "GM">
  tile.launch @cat3(%c, %e, %d) : memref<1x4x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x6x4xf32, "GM">
  %f = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %f) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %g = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%x, %f, %g) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  %h = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %h) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %i = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%h, %w, %i) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  %j = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %j) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %k = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%j, %j, %k) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  %l = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %l) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %m = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @neg(%x, %m) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %n = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%l, %m, %n) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  %p = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %p) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  tile.launch @neg(%x, %p) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %q = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @exp(%x, %q) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %r = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%p, %q, %r) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  %s = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @relu(%x, %s) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %t = tile.alloc : memref<1x2x4xf32, "GM">
  tile.launch @neg(%x, %t) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %u = tile.alloc : memref<1x4x4xf32, "GM">
  tile.launch @cat2(%s, %t, %u) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">
  tile.launch @exp(%x, %s) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">
  %v = tile.alloc : memref<2x2x4xf32, "GM">
  tile.launch @relu_b(%y, %v) : memref<2x2x4xf32, "GM">, memref<2x2x4xf32, "GM">
  %z = tile.alloc : memref<2x2x4xf32, "GM">
  tile.launch @neg_b(%y, %z) : memref<2x2x4xf32, "GM">, memref<2x2x4xf32, "GM">
  %bb = tile.alloc : memref<2x4x4xf32, "GM">
  tile.launch @cat_b(%v, %z, %bb) : memref<2x2x4xf32, "GM">, memref<2x2x4xf32, "GM">, memref<2x4x4xf32, "GM">
  func.return %d, %g, %i, %k, %n, %l, %r, %u, %bb : memref<1x6x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x2x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<1x4x4xf32, "GM">, memref<2x4x4xf32, "GM">
}
func.func @relu(%in: memref<1x2x4xf32, "GM">, %out: memref<1x2x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<1x2x4xf32, "GM"> -> !layout.tensor<1x2x4xf32>
  %r = graph.relu %t : !layout.tensor<1x2x4xf32>
  tile.write %r to %out : !layout.tensor<1x2x4xf32> to memref<1x2x4xf32, "GM">
  func.return
}
func.func @neg(%in: memref<1x2x4xf32, "GM">, %out: memref<1x2x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<1x2x4xf32, "GM"> -> !layout.tensor<1x2x4xf32>
  %r = graph.neg %t : !layout.tensor<1x2x4xf32>
  tile.write %r to %out : !layout.tensor<1x2x4xf32> to memref<1x2x4xf32, "GM">
  func.return
}
func.func @exp(%in: memref<1x2x4xf32, "GM">, %out: memref<1x2x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<1x2x4xf32, "GM"> -> !layout.tensor<1x2x4xf32>
  %r = graph.exp %t : !layout.tensor<1x2x4xf32>
  tile.write %r to %out : !layout.tensor<1x2x4xf32> to memref<1x2x4xf32, "GM">
  func.return
}
func.func @relu_b(%in: memref<2x2x4xf32, "GM">, %out: memref<2x2x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<2x2x4xf32, "GM"> -> !layout.tensor<2x2x4xf32>
  %r = graph.relu %t : !layout.tensor<2x2x4xf32>
  tile.write %r to %out : !layout.tensor<2x2x4xf32> to memref<2x2x4xf32, "GM">
  func.return
}
func.func @neg_b(%in: memref<2x2x4xf32, "GM">, %out: memref<2x2x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<2x2x4xf32, "GM"> -> !layout.tensor<2x2x4xf32>
  %r = graph.neg %t : !layout.tensor<2x2x4xf32>
  tile.write %r to %out : !layout.tensor<2x2x4xf32> to memref<2x2x4xf32, "GM">
  func.return
}
func.func @cat2(%i0: memref<1x2x4xf32, "GM">, %i1: memref<1x2x4xf32, "GM">, %out: memref<1x4x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t0 = tile.read %i0 : memref<1x2x4xf32, "GM"> -> !layout.tensor<1x2x4xf32>
  %t1 = tile.read %i1 : memref<1x2x4xf32, "GM"> -> !layout.tensor<1x2x4xf32>
  %c = graph.concat %t0, %t1 {axis = 1} : (!layout.tensor<1x2x4xf32>, !layout.tensor<1x2x4xf32>) -> !layout.tensor<1x4x4xf32>
  tile.write %c to %out : !layout.tensor<1x4x4xf32> to memref<1x4x4xf32, "GM">
  func.return
}
func.func @cat3(%i0: memref<1x4x4xf32, "GM">, %i1: memref<1x2x4xf32, "GM">, %out: memref<1x6x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t0 = tile.read %i0 : memref<1x4x4xf32, "GM"> -> !layout.tensor<1x4x4xf32>
  %t1 = tile.read %i1 : memref<1x2x4xf32, "GM"> -> !layout.tensor<1x2x4xf32>
  %c = graph.concat %t0, %t1 {axis = 1} : (!layout.tensor<1x4x4xf32>, !layout.tensor<1x2x4xf32>) -> !layout.tensor<1x6x4xf32>
  tile.write %c to %out : !layout.tensor<1x6x4xf32> to memref<1x6x4xf32, "GM">
  func.return
}
func.func @cat_b(%i0: memref<2x2x4xf32, "GM">, %i1: memref<2x2x4xf32, "GM">, %out: memref<2x4x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t0 = tile.read %i0 : memref<2x2x4xf32, "GM"> -> !layout.tensor<2x2x4xf32>
  %t1 = tile.read %i1 : memref<2x2x4xf32, "GM"> -> !layout.tensor<2x2x4xf32>
  %c = graph.concat %t0, %t1 {axis = 1} : (!layout.tensor<2x2x4xf32>, !layout.tensor<2x2x4xf32>) -> !layout.tensor<2x4x4xf32>
  tile.write %c to %out : !layout.tensor<2x4x4xf32> to memref<2x4x4xf32, "GM">
  func.return
}

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %w = tile.constant
// CHECK-NEXT:    %d = tile.alloc : memref<1x6x4xf32, "GM">
// CHECK-NEXT:    %c = tile.slice_view %d[0] : memref<1x6x4xf32, "GM"> to memref<1x4x4xf32, "GM">
// CHECK-NEXT:    %a = tile.slice_view %c[0] : memref<1x4x4xf32, "GM"> to memref<1x2x4xf32, "GM">
// CHECK-NEXT:    tile.launch @relu(%x, %a)
// CHECK-NEXT:    %b = tile.slice_view %c[8] : memref<1x4x4xf32, "GM"> to memref<1x2x4xf32, "GM">
// CHECK-NEXT:    tile.launch @neg(%x, %b)
// CHECK-NEXT:    %e = tile.slice_view %d[16] : memref<1x6x4xf32, "GM"> to memref<1x2x4xf32, "GM">
// CHECK-NEXT:    tile.launch @exp(%a, %e)
// CHECK-NEXT:    %f = tile.alloc
// CHECK-NEXT:    tile.launch @relu(%x, %f)
// CHECK-NEXT:    %g = tile.alloc
// CHECK-NEXT:    tile.launch @cat2(%x, %f, %g)
// CHECK:         tile.launch @cat2(%h, %w, %i)
// CHECK:         tile.launch @cat2(%j, %j, %k)
// CHECK:         tile.launch @cat2(%l, %m, %n)
// CHECK:         tile.launch @cat2(%p, %q, %r)
// CHECK:         tile.launch @cat2(%s, %t, %u)
// CHECK-NEXT:    tile.launch @exp(%x, %s)
// CHECK:         tile.launch @cat_b(%v, %z, %bb)
// CHECK-NEXT:    func.return %d, %g, %i, %k, %n, %l, %r, %u, %bb
// CHECK-NOT:     tile.slice_view
// CHECK-NOT:     @cat3
// CHECK:         func.func @cat2(
// CHECK:         func.func @cat_b(

// PLAN:          tile.memory = {{.*}}buffers = 19
// PLAN:          %d = tile.view %workspace[{{[0-9]+}}] : memref<{{[0-9]+}}xi8, "GM"> to memref<1x6x4xf32, "GM">
// PLAN-NEXT:     %c = tile.slice_view %d[0]
// PLAN-NEXT:     %a = tile.slice_view %c[0]
// PLAN:          %b = tile.slice_view %c[8]
// PLAN:          %e = tile.slice_view %d[16]
// PLAN:          %f = tile.view %workspace

// STATS:       place-concat (ran 1x)
// STATS-DAG:     refused-argument       1
// STATS-DAG:     refused-constant       1
// STATS-DAG:     refused-repeated       1
// STATS-DAG:     refused-returned       1
// STATS-DAG:     refused-writers        1
// STATS-DAG:     refused-written-after  1
// STATS-DAG:     refused-strided        1
// STATS-DAG:     placed                 2
// STATS-DAG:     kernels-removed        1

// STRIDED:       %v = tile.strided_view %bb : memref<2x4x4xf32, "GM"> to memref<2x2x4xf32, strided<[16, 4, 1]>, "GM">
// STRIDED-NEXT:  tile.launch @relu_b_strided(%y, %v) : memref<2x2x4xf32, "GM">, memref<2x2x4xf32, strided<[16, 4, 1]>, "GM">
// STRIDED-NEXT:  %z = tile.strided_view %bb : memref<2x4x4xf32, "GM"> to memref<2x2x4xf32, strided<[16, 4, 1], offset: 8>, "GM">
// STRIDED-NEXT:  tile.launch @neg_b_strided(%y, %z)
// STRIDED-NEXT:  func.return
// STRIDED-NOT:   func.func @relu_b(
// STRIDED:       func.func @relu_b_strided(%in: memref<2x2x4xf32, "GM">, %out: memref<2x2x4xf32, strided<[16, 4, 1]>, "GM">)
// STRIDED:         tile.write %r to %out : !layout.tensor<2x2x4xf32> to memref<2x2x4xf32, strided<[16, 4, 1]>, "GM">
// STRIDED-NOT:   func.func @cat_b(
