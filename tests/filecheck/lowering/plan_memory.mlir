// RUN: tilegraph-opt %s -p plan-memory | filecheck %s
// RUN: tilegraph-opt %s -p plan-memory | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p plan-memory,plan-memory | filecheck %s
// RUN: tilegraph-opt %s -p plan-memory --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: tilegraph-opt %s -p plan-memory --print-op-generic | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s -p 'plan-memory{in_place=false}' | filecheck %s --check-prefix=NOINPLACE
// RUN: tilegraph-opt %s -p plan-memory --pass-statistics -o %t 2>&1 | filecheck %s --check-prefix=STATS

// plan-memory on a host sequence written by hand (macro kernels, as lower-graph-to-kernels
// writes them). Launch #k is point k, the func.return point 8; sizes are 4x8 / 8x4 f32 =
// 128 B and 3x5 f32 = 60 B, aligned to 64 B (the GM alignment is 32 B).
//
//   #0 exp(%x -> %a)            %x is an argument: caller-owned, never written over
//   #1 relu(%a -> %b)           elementwise, %a dies here, same type: %b takes %a's place
//   #2 transpose(%b -> %c)      not elementwise: %c needs a place of its own
//   #3 add_bias(%c, %bias -> %d) broadcast add, %c dies: %d takes %c's place
//   #4 transpose_back(%d -> %e) %e is returned: it lives to the end
//   #5 sigmoid(%y -> %s)
//   #6 neg(%s -> %n)            %s is read again at #7: no in-place
//   #7 mul(%s, %n -> %m)        both die: %m takes the first one's place (%s)
//
// Live bytes per point (in-place pairs once): 128 128 256 128 256 192 256 256 192, so the
// lower bound is 256 B; the plan reaches it (%e reuses %a/%b's place, %s/%m %c/%d's).
// Without reuse: 5 x 128 + 3 x 64 = 832 B. The constant region (%bias, 16 B) is 32 B, the
// caller-owned arguments 128 + 64 = 192 B. The second RUN line parses the result back, the
// third shows that planning a planned function changes nothing.
func.func @main(%x: memref<4x8xf32, "GM">, %y: memref<3x5xf32, "GM">) -> (memref<4x8xf32, "GM">, memref<3x5xf32, "GM">) attributes {tile.signature = (!layout.tensor<4x8xf32>, !layout.tensor<3x5xf32>) -> (!layout.tensor<4x8xf32>, !layout.tensor<3x5xf32>)} {
  %bias = tile.constant <f32, [4], [1.0, 2.0, 3.0, 4.0]> : memref<4xf32, "GM">
  %a = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @exp(%x, %a) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
  %b = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @relu(%a, %b) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
  %c = tile.alloc : memref<8x4xf32, "GM">
  tile.launch @transpose(%b, %c) : memref<4x8xf32, "GM">, memref<8x4xf32, "GM">
  %d = tile.alloc : memref<8x4xf32, "GM">
  tile.launch @add_bias(%c, %bias, %d) : memref<8x4xf32, "GM">, memref<4xf32, "GM">, memref<8x4xf32, "GM">
  %e = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @transpose_back(%d, %e) : memref<8x4xf32, "GM">, memref<4x8xf32, "GM">
  %s = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @sigmoid(%y, %s) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
  %n = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @neg(%s, %n) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
  %m = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @mul(%s, %n, %m) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
  func.return %e, %m : memref<4x8xf32, "GM">, memref<3x5xf32, "GM">

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tile.memory = {peak = 256 : i64, lower_bound = 256 : i64, no_reuse = 832 : i64, constants = 32 : i64, in_place = 3 : i64, buffers = 8 : i64, arguments = 192 : i64}
// CHECK-NEXT:    %workspace = tile.alloc : memref<256xi8, "GM">
// CHECK-NEXT:    %bias = tile.constant <f32, [4], [1.0, 2.0, 3.0, 4.0]> : memref<4xf32, "GM">
// CHECK-NEXT:    %a = tile.view %workspace[0] : memref<256xi8, "GM"> to memref<4x8xf32, "GM">
// CHECK-NEXT:    tile.launch @exp(%x, %a) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
// CHECK-NEXT:    %b = tile.view %workspace[0] : memref<256xi8, "GM"> to memref<4x8xf32, "GM">
// CHECK-NEXT:    tile.launch @relu(%a, %b)
// CHECK-NEXT:    %c = tile.view %workspace[128] : memref<256xi8, "GM"> to memref<8x4xf32, "GM">
// CHECK-NEXT:    tile.launch @transpose(%b, %c)
// CHECK-NEXT:    %d = tile.view %workspace[128] : memref<256xi8, "GM"> to memref<8x4xf32, "GM">
// CHECK-NEXT:    tile.launch @add_bias(%c, %bias, %d)
// CHECK-NEXT:    %e = tile.view %workspace[0] : memref<256xi8, "GM"> to memref<4x8xf32, "GM">
// CHECK-NEXT:    tile.launch @transpose_back(%d, %e)
// CHECK-NEXT:    %s = tile.view %workspace[128] : memref<256xi8, "GM"> to memref<3x5xf32, "GM">
// CHECK-NEXT:    tile.launch @sigmoid(%y, %s)
// CHECK-NEXT:    %n = tile.view %workspace[192] : memref<256xi8, "GM"> to memref<3x5xf32, "GM">
// CHECK-NEXT:    tile.launch @neg(%s, %n)
// CHECK-NEXT:    %m = tile.view %workspace[128] : memref<256xi8, "GM"> to memref<3x5xf32, "GM">
// CHECK-NEXT:    tile.launch @mul(%s, %n, %m)
// CHECK-NEXT:    func.return %e, %m : memref<4x8xf32, "GM">, memref<3x5xf32, "GM">
// CHECK-NEXT:  }
// CHECK-NOT:   tile.alloc
// CHECK-NOT:   tile.view

// The generic form of a view: the byte offset is a property.
// GENERIC: %workspace = "tile.alloc"() : () -> memref<256xi8, "GM">
// GENERIC: %a = "tile.view"(%workspace) <{offset = 0 : i64}> : (memref<256xi8, "GM">) -> memref<4x8xf32, "GM">

// Without in-place writes the pairs need places of their own: 320 B, which is also the
// lower bound under that rule (points #6 and #7: 128 + 3 x 64).
// NOINPLACE:      tile.memory = {peak = 320 : i64, lower_bound = 320 : i64, no_reuse = 832 : i64, constants = 32 : i64, in_place = 0 : i64
// NOINPLACE-NEXT: %workspace = tile.alloc : memref<320xi8, "GM">
// NOINPLACE:      %a = tile.view %workspace[0]
// NOINPLACE:      %b = tile.view %workspace[128]

// STATS:      plan-memory (ran 1x)
// STATS-NEXT:   buffers            8
// STATS-NEXT:   in-place           3
// STATS-NEXT:   peak-bytes         256
// STATS-NEXT:   lower-bound-bytes  256
// STATS-NEXT:   no-reuse-bytes     832
// STATS-NEXT:   constant-bytes     32

// The kernels: each body reads its inputs, computes with graph ops, writes its output.
}
func.func @exp(%in: memref<4x8xf32, "GM">, %out: memref<4x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<4x8xf32, "GM"> -> !layout.tensor<4x8xf32>
  %r = graph.exp %t : !layout.tensor<4x8xf32>
  tile.write %r to %out : !layout.tensor<4x8xf32> to memref<4x8xf32, "GM">
  func.return
}
func.func @relu(%in: memref<4x8xf32, "GM">, %out: memref<4x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<4x8xf32, "GM"> -> !layout.tensor<4x8xf32>
  %r = graph.relu %t : !layout.tensor<4x8xf32>
  tile.write %r to %out : !layout.tensor<4x8xf32> to memref<4x8xf32, "GM">
  func.return
}
func.func @transpose(%in: memref<4x8xf32, "GM">, %out: memref<8x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<4x8xf32, "GM"> -> !layout.tensor<4x8xf32>
  %r = graph.transpose %t {perm = [1, 0]} : (!layout.tensor<4x8xf32>) -> !layout.tensor<8x4xf32>
  tile.write %r to %out : !layout.tensor<8x4xf32> to memref<8x4xf32, "GM">
  func.return
}
func.func @add_bias(%in: memref<8x4xf32, "GM">, %bias: memref<4xf32, "GM">, %out: memref<8x4xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<8x4xf32, "GM"> -> !layout.tensor<8x4xf32>
  %b = tile.read %bias : memref<4xf32, "GM"> -> !layout.tensor<4xf32>
  %r = graph.add %t, %b : (!layout.tensor<8x4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<8x4xf32>
  tile.write %r to %out : !layout.tensor<8x4xf32> to memref<8x4xf32, "GM">
  func.return
}
func.func @transpose_back(%in: memref<8x4xf32, "GM">, %out: memref<4x8xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<8x4xf32, "GM"> -> !layout.tensor<8x4xf32>
  %r = graph.transpose %t {perm = [1, 0]} : (!layout.tensor<8x4xf32>) -> !layout.tensor<4x8xf32>
  tile.write %r to %out : !layout.tensor<4x8xf32> to memref<4x8xf32, "GM">
  func.return
}
func.func @sigmoid(%in: memref<3x5xf32, "GM">, %out: memref<3x5xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
  %r = graph.sigmoid %t : !layout.tensor<3x5xf32>
  tile.write %r to %out : !layout.tensor<3x5xf32> to memref<3x5xf32, "GM">
  func.return
}
func.func @neg(%in: memref<3x5xf32, "GM">, %out: memref<3x5xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %in : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
  %r = graph.neg %t : !layout.tensor<3x5xf32>
  tile.write %r to %out : !layout.tensor<3x5xf32> to memref<3x5xf32, "GM">
  func.return
}
func.func @mul(%p: memref<3x5xf32, "GM">, %q: memref<3x5xf32, "GM">, %out: memref<3x5xf32, "GM">) attributes {tile.kernel = "vector"} {
  %t = tile.read %p : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
  %u = tile.read %q : memref<3x5xf32, "GM"> -> !layout.tensor<3x5xf32>
  %r = graph.mul %t, %u : (!layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>) -> !layout.tensor<3x5xf32>
  tile.write %r to %out : !layout.tensor<3x5xf32> to memref<3x5xf32, "GM">
  func.return
}
