// RUN: TILEGRAPH_ROUNDTRIP
// RUN: TILEGRAPH_GENERIC_ROUNDTRIP

// Every tile op in its custom syntax, printed, parsed back and printed again (and the
// generic form round-tripped). Buffers are memrefs whose memory space names the scope.

// Host ops: allocation in every scope, constants (values, hex-free small data, elided),
// a launch, and the tensor views of a kernel body.
func.func @host(%x: memref<2x4xf32, "GM">, %y: memref<2x4xf32, "GM">) {
  %w = tile.constant <f32, [4], [1.0, 2.0, 3.0, 4.0]> : memref<4xf32, "GM">
  %w2 = tile.constant <f16, [2, 2], [[1.0, -2.0], [3.5, 4.0]]> : memref<2x2xf16, "GM">
  %big = tile.constant <f32, [4, 8], __elided__> : memref<4x8xf32, "GM">
  %g = tile.alloc : memref<2x4xf32, "GM">
  %l1 = tile.alloc : memref<2x2x16x8xf32, "L1">
  %l0a = tile.alloc : memref<1x2x16x8xf32, "L0A">
  %l0b = tile.alloc : memref<2x1x16x8xf32, "L0B">
  %l0c = tile.alloc : memref<1x1x16x16xf32, "L0C">
  %ub = tile.alloc : memref<4x16xf16, "UB">
  tile.launch @kernel(%x, %w, %g) : memref<2x4xf32, "GM">, memref<4xf32, "GM">, memref<2x4xf32, "GM">
  tile.launch @nothing() : 
  func.return
}
// CHECK-LABEL: func.func @host
// CHECK-NEXT: %w = tile.constant <f32, [4], [1.0, 2.0, 3.0, 4.0]> : memref<4xf32, "GM">
// CHECK-NEXT: %w2 = tile.constant <f16, [2, 2], {{\[\[}}1.0, -2.0], [3.5, 4.0{{\]\]}}> : memref<2x2xf16, "GM">
// CHECK-NEXT: %big = tile.constant <f32, [4, 8], __elided__> : memref<4x8xf32, "GM">
// CHECK-NEXT: %g = tile.alloc : memref<2x4xf32, "GM">
// CHECK-NEXT: %l1 = tile.alloc : memref<2x2x16x8xf32, "L1">
// CHECK-NEXT: %l0a = tile.alloc : memref<1x2x16x8xf32, "L0A">
// CHECK-NEXT: %l0b = tile.alloc : memref<2x1x16x8xf32, "L0B">
// CHECK-NEXT: %l0c = tile.alloc : memref<1x1x16x16xf32, "L0C">
// CHECK-NEXT: %ub = tile.alloc : memref<4x16xf16, "UB">
// CHECK-NEXT: tile.launch @kernel(%x, %w, %g) : memref<2x4xf32, "GM">, memref<4xf32, "GM">, memref<2x4xf32, "GM">
// CHECK-NEXT: tile.launch @nothing() : 
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "host"
// GENERIC: "tile.constant"(
// GENERIC: "tile.constant"(
// GENERIC: "tile.constant"(
// GENERIC: "tile.alloc"(
// GENERIC: "tile.alloc"(
// GENERIC: "tile.alloc"(
// GENERIC: "tile.alloc"(
// GENERIC: "tile.alloc"(
// GENERIC: "tile.alloc"(
// GENERIC: "tile.launch"(
// GENERIC: "tile.launch"(

// -----

func.func @kernel(%x: memref<2x4xf32, "GM">, %w: memref<4xf32, "GM">, %y: memref<2x4xf32, "GM">) {
  %t = tile.read %x : memref<2x4xf32, "GM"> -> !layout.tensor<2x4xf32>
  tile.write %t to %y : !layout.tensor<2x4xf32> to memref<2x4xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @kernel
// CHECK-NEXT: %t = tile.read %x : memref<2x4xf32, "GM"> -> !layout.tensor<2x4xf32>
// CHECK-NEXT: tile.write %t to %y : !layout.tensor<2x4xf32> to memref<2x4xf32, "GM">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "kernel"
// GENERIC: "tile.read"(
// GENERIC: "tile.write"(

// -----

// A module compiled for the small `test` preset: buffers that fit it verify.
module attributes {tilegraph.target = {platform = "test"}} {
  func.func @platform() {
    %ub = tile.alloc : memref<32x64xf32, "UB">
    %l0c = tile.alloc : memref<2x2x16x16xf32, "L0C">
    func.return
  }
}
// CHECK: builtin.module attributes {tilegraph.target = {platform = "test"}} {
// CHECK-LABEL: func.func @platform
// CHECK-NEXT: %ub = tile.alloc : memref<32x64xf32, "UB">
// CHECK-NEXT: %l0c = tile.alloc : memref<2x2x16x16xf32, "L0C">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "platform"
// GENERIC: "tile.alloc"(
// GENERIC: "tile.alloc"(

// -----

// tile.copy over every DMA path, with a pad value, negative (halo) offsets and a cast;
// tile.copy_flat (a run of elements) in and out, and one row into a tile {partial}.
func.func @copy(%g: memref<8x40xf32, "GM">, %u: memref<4x16xf32, "UB">, %v: memref<4x16xf16, "UB">, %l1: memref<4x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %cm1 = arith.constant -1 : index
  tile.copy %g[%c0, %c3] to %u[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
  tile.copy %g[%cm1, %c0] to %u[%c0, %c0] {pad = -1.000000e+00 : f64} : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
  tile.copy %g[%c0, %c0] to %v[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf16, "UB">
  tile.copy %g[%c3, %c3] to %l1[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf32, "L1">
  tile.copy %u[%c0, %c0] to %g[%c3, %c0] : memref<4x16xf32, "UB"> to memref<8x40xf32, "GM">
  tile.copy %l1[%c0, %c0] to %u[%c0, %c0] : memref<4x16xf32, "L1"> to memref<4x16xf32, "UB">
  tile.copy %u[%c0, %c0] to %l1[%c0, %c0] : memref<4x16xf32, "UB"> to memref<4x16xf32, "L1">
  tile.copy %l1[%c0, %c0] to %g[%c0, %c3] : memref<4x16xf32, "L1"> to memref<8x40xf32, "GM">
  tile.copy %u[%c0, %c0] to %u[%c0, %c0] : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.copy_flat %g[%c3] to %u[%c0] {count = 64 : i64} : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
  tile.copy_flat %u[%c0] to %g[%c3] {count = 32 : i64} : memref<4x16xf32, "UB"> to memref<8x40xf32, "GM">
  tile.copy_flat %g[%c3] to %u[%c3] {count = 16 : i64, partial} : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @copy
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c3 = arith.constant 3 : index
// CHECK-NEXT: %cm1 = arith.constant -1 : index
// CHECK-NEXT: tile.copy %g[%c0, %c3] to %u[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.copy %g[%cm1, %c0] to %u[%c0, %c0] {pad = -1.000000e+00 : f64} : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.copy %g[%c0, %c0] to %v[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf16, "UB">
// CHECK-NEXT: tile.copy %g[%c3, %c3] to %l1[%c0, %c0] : memref<8x40xf32, "GM"> to memref<4x16xf32, "L1">
// CHECK-NEXT: tile.copy %u[%c0, %c0] to %g[%c3, %c0] : memref<4x16xf32, "UB"> to memref<8x40xf32, "GM">
// CHECK-NEXT: tile.copy %l1[%c0, %c0] to %u[%c0, %c0] : memref<4x16xf32, "L1"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.copy %u[%c0, %c0] to %l1[%c0, %c0] : memref<4x16xf32, "UB"> to memref<4x16xf32, "L1">
// CHECK-NEXT: tile.copy %l1[%c0, %c0] to %g[%c0, %c3] : memref<4x16xf32, "L1"> to memref<8x40xf32, "GM">
// CHECK-NEXT: tile.copy %u[%c0, %c0] to %u[%c0, %c0] : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.copy_flat %g[%c3] to %u[%c0] {count = 64 : i64} : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.copy_flat %u[%c0] to %g[%c3] {count = 32 : i64} : memref<4x16xf32, "UB"> to memref<8x40xf32, "GM">
// CHECK-NEXT: tile.copy_flat %g[%c3] to %u[%c3] {count = 16 : i64, partial} : memref<8x40xf32, "GM"> to memref<4x16xf32, "UB">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "copy"
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy"(
// GENERIC: "tile.copy_flat"(
// GENERIC: "tile.copy_flat"(
// GENERIC: "tile.copy_flat"(

// -----

// tile.get_value: the scalar unit reads an element of an integer UB buffer as an index
// (with a bound: ONNX's negative indices wrap, out of range is an error).
func.func @get_value(%i: memref<4x8xi64, "UB">, %j: memref<16xi32, "UB">) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %a = tile.get_value %i[%c3, %c0] : memref<4x8xi64, "UB">
  %b = tile.get_value %j[%c3] {bound = 30522 : i64} : memref<16xi32, "UB">
  func.return
}
// CHECK-LABEL: func.func @get_value
// CHECK: %a = tile.get_value %i[%c3, %c0] : memref<4x8xi64, "UB">
// CHECK-NEXT: %b = tile.get_value %j[%c3] {bound = 30522 : i64} : memref<16xi32, "UB">
// GENERIC-LABEL: "func.func"() <{sym_name = "get_value"
// GENERIC: "tile.get_value"(
// GENERIC: "tile.get_value"(

// -----

// tile.gather_rows: GatherElements on a UB block of an axis (the scalar unit takes the
// elements whose index falls in the block); tile.scatter_rows {elements}: ScatterElements'
// form, every element an index of its own along the one axis of depth.
func.func @element_rows(%blk: memref<64x4xf32, "UB">, %i: memref<8x4xi64, "UB">, %r: memref<8x4xf32, "UB">) {
  %c64 = arith.constant 64 : index
  tile.gather_rows %blk[%c64], %i to %r {bound = 8400 : i64} : memref<64x4xf32, "UB">, memref<8x4xi64, "UB"> to memref<8x4xf32, "UB">
  tile.scatter_rows %r, %i to %blk[%c64] {depth = array<i64: 8400>, reduction = "add", elements} : memref<8x4xf32, "UB">, memref<8x4xi64, "UB"> to memref<64x4xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @element_rows
// CHECK: tile.gather_rows %blk[%c64], %i to %r {bound = 8400 : i64} : memref<64x4xf32, "UB">, memref<8x4xi64, "UB"> to memref<8x4xf32, "UB">
// CHECK-NEXT: tile.scatter_rows %r, %i to %blk[%c64] {depth = array<i64: 8400>, reduction = "add", elements} : memref<8x4xf32, "UB">, memref<8x4xi64, "UB"> to memref<64x4xf32, "UB">
// GENERIC-LABEL: "func.func"() <{sym_name = "element_rows"
// GENERIC: "tile.gather_rows"(
// GENERIC: "tile.scatter_rows"(

// -----

// The cube path: nd2nz (batched), load_5hd / store_5hd, load2d in each mode, load3d, mmad.
func.func @cube_path(%g: memref<2x20x40xf32, "GM">, %nz: memref<3x2x16x8xf32, "L1">, %nchw: memref<1x3x6x6xf32, "GM">, %f: memref<1x1x7x6x16xf32, "L1">, %fu: memref<1x1x6x6x16xf16, "UB">, %chw: memref<3x6x6xf32, "GM">, %a: memref<2x3x16x8xf32, "L0A">, %b: memref<3x2x16x8xf32, "L0B">, %c: memref<2x2x16x16xf32, "L0C">, %sq: memref<2x2x16x16xf32, "L1">, %sqb: memref<2x2x16x16xf32, "L0B">, %sqa: memref<2x3x16x16xf32, "L0A">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cm1 = arith.constant -1 : index
  %true = arith.constant true
  %false = arith.constant false
  tile.nd2nz %g[%c1, %c4, %c0] to %nz : memref<2x20x40xf32, "GM"> to memref<3x2x16x8xf32, "L1">
  tile.load_5hd %nchw[%c0, %c0, %cm1, %cm1] to %f : memref<1x3x6x6xf32, "GM"> to memref<1x1x7x6x16xf32, "L1">
  tile.load_5hd %nchw[%c0, %c0, %c0, %c0] to %fu : memref<1x3x6x6xf32, "GM"> to memref<1x1x6x6x16xf16, "UB">
  tile.load_5hd %nchw[%c0, %c0, %cm1, %c0] to %fu {pad = 0xfff0000000000000 : f64} : memref<1x3x6x6xf32, "GM"> to memref<1x1x6x6x16xf16, "UB">
  tile.load_5hd %chw[%c0, %c0, %c0, %c0] to %fu : memref<3x6x6xf32, "GM"> to memref<1x1x6x6x16xf16, "UB">
  tile.store_5hd %fu to %nchw[%c0, %c0, %c1, %c0] : memref<1x1x6x6x16xf16, "UB"> to memref<1x3x6x6xf32, "GM">
  tile.store_5hd %f to %nchw[%c0, %c0, %cm1, %c0] : memref<1x1x7x6x16xf32, "L1"> to memref<1x3x6x6xf32, "GM">
  tile.store_5hd %fu to %nchw[%c0, %c1, %c0, %c0] {channel_end = 2 : i64} : memref<1x1x6x6x16xf16, "UB"> to memref<1x3x6x6xf32, "GM">
  tile.load2d %nz[%c0, %c0] to %a {mode = "copy"} : memref<3x2x16x8xf32, "L1"> to memref<2x3x16x8xf32, "L0A">
  tile.load2d %nz[%c0, %c0] to %a {mode = "swap"} : memref<3x2x16x8xf32, "L1"> to memref<2x3x16x8xf32, "L0A">
  tile.load2d %sq[%c0, %c0] to %sqb {mode = "transpose"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
  tile.load2d %sq[%c1, %c0] to %sqb {mode = "transpose_fractals"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
  tile.load3d %f[%c0] to %sqa {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 3 : i64, channels = 3 : i64} : memref<1x1x7x6x16xf32, "L1"> to memref<2x3x16x16xf32, "L0A">
  tile.mmad %a, %b, %c, %true : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
  tile.mmad %a, %b, %c, %false : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
  %c20 = arith.constant 20 : index
  tile.mmad %a, %b, %c, %true m %c20 n %c1 : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
  tile.mmad %a, %b, %c, %true n %c20 : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
  tile.load2d %sq[%c0, %c0] to %sqb valid %c20 {mode = "transpose"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
  tile.mmad %a, %b, %c, %true m %c20 k %c4 : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
  tile.load2d %sq[%c0, %c0] to %sqb valid %c20 k %c4 {mode = "transpose"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
  tile.nd2nz %g[%c1, %c4, %c0] to %nz rows %c20 cols %c1 : memref<2x20x40xf32, "GM"> to memref<3x2x16x8xf32, "L1">
  func.return
}
// CHECK-LABEL: func.func @cube_path
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c1 = arith.constant 1 : index
// CHECK-NEXT: %c4 = arith.constant 4 : index
// CHECK-NEXT: %cm1 = arith.constant -1 : index
// CHECK-NEXT: %true = arith.constant true
// CHECK-NEXT: %false = arith.constant false
// CHECK-NEXT: tile.nd2nz %g[%c1, %c4, %c0] to %nz : memref<2x20x40xf32, "GM"> to memref<3x2x16x8xf32, "L1">
// CHECK-NEXT: tile.load_5hd %nchw[%c0, %c0, %cm1, %cm1] to %f : memref<1x3x6x6xf32, "GM"> to memref<1x1x7x6x16xf32, "L1">
// CHECK-NEXT: tile.load_5hd %nchw[%c0, %c0, %c0, %c0] to %fu : memref<1x3x6x6xf32, "GM"> to memref<1x1x6x6x16xf16, "UB">
// CHECK-NEXT: tile.load_5hd %nchw[%c0, %c0, %cm1, %c0] to %fu {pad = 0xfff0000000000000 : f64} : memref<1x3x6x6xf32, "GM"> to memref<1x1x6x6x16xf16, "UB">
// CHECK-NEXT: tile.load_5hd %chw[%c0, %c0, %c0, %c0] to %fu : memref<3x6x6xf32, "GM"> to memref<1x1x6x6x16xf16, "UB">
// CHECK-NEXT: tile.store_5hd %fu to %nchw[%c0, %c0, %c1, %c0] : memref<1x1x6x6x16xf16, "UB"> to memref<1x3x6x6xf32, "GM">
// CHECK-NEXT: tile.store_5hd %f to %nchw[%c0, %c0, %cm1, %c0] : memref<1x1x7x6x16xf32, "L1"> to memref<1x3x6x6xf32, "GM">
// CHECK-NEXT: tile.store_5hd %fu to %nchw[%c0, %c1, %c0, %c0] {channel_end = 2 : i64} : memref<1x1x6x6x16xf16, "UB"> to memref<1x3x6x6xf32, "GM">
// CHECK-NEXT: tile.load2d %nz[%c0, %c0] to %a {mode = "copy"} : memref<3x2x16x8xf32, "L1"> to memref<2x3x16x8xf32, "L0A">
// CHECK-NEXT: tile.load2d %nz[%c0, %c0] to %a {mode = "swap"} : memref<3x2x16x8xf32, "L1"> to memref<2x3x16x8xf32, "L0A">
// CHECK-NEXT: tile.load2d %sq[%c0, %c0] to %sqb {mode = "transpose"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
// CHECK-NEXT: tile.load2d %sq[%c1, %c0] to %sqb {mode = "transpose_fractals"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
// CHECK-NEXT: tile.load3d %f[%c0] to %sqa {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 3 : i64, channels = 3 : i64} : memref<1x1x7x6x16xf32, "L1"> to memref<2x3x16x16xf32, "L0A">
// CHECK-NEXT: tile.mmad %a, %b, %c, %true : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
// CHECK-NEXT: tile.mmad %a, %b, %c, %false : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
// CHECK-NEXT: %c20 = arith.constant 20 : index
// CHECK-NEXT: tile.mmad %a, %b, %c, %true m %c20 n %c1 : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
// CHECK-NEXT: tile.mmad %a, %b, %c, %true n %c20 : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
// CHECK-NEXT: tile.load2d %sq[%c0, %c0] to %sqb valid %c20 {mode = "transpose"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
// CHECK-NEXT: tile.mmad %a, %b, %c, %true m %c20 k %c4 : memref<2x3x16x8xf32, "L0A">, memref<3x2x16x8xf32, "L0B">, memref<2x2x16x16xf32, "L0C">
// CHECK-NEXT: tile.load2d %sq[%c0, %c0] to %sqb valid %c20 k %c4 {mode = "transpose"} : memref<2x2x16x16xf32, "L1"> to memref<2x2x16x16xf32, "L0B">
// CHECK-NEXT: tile.nd2nz %g[%c1, %c4, %c0] to %nz rows %c20 cols %c1 : memref<2x20x40xf32, "GM"> to memref<3x2x16x8xf32, "L1">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "cube_path"
// GENERIC: "tile.nd2nz"(
// GENERIC: "tile.load_5hd"(
// GENERIC: "tile.load_5hd"(
// GENERIC: "tile.load_5hd"(
// GENERIC: "tile.load_5hd"(
// GENERIC: "tile.store_5hd"(
// GENERIC: "tile.store_5hd"(
// GENERIC: "tile.store_5hd"(
// GENERIC: "tile.load2d"(
// GENERIC: "tile.load2d"(
// GENERIC: "tile.load2d"(
// GENERIC: "tile.load2d"(
// GENERIC: "tile.load3d"(
// GENERIC: "tile.mmad"(
// GENERIC: "tile.mmad"(

// -----

// mmad on every input type: f16 and bf16 accumulate in f32, i8 in i32.
func.func @mmad_types(%a16: memref<1x1x16x16xf16, "L0A">, %b16: memref<1x1x16x16xf16, "L0B">, %abf: memref<1x1x16x16xbf16, "L0A">, %bbf: memref<1x1x16x16xbf16, "L0B">, %a8: memref<1x1x16x32xi8, "L0A">, %b8: memref<1x1x16x32xi8, "L0B">, %c32: memref<1x1x16x16xf32, "L0C">, %ci: memref<1x1x16x16xi32, "L0C">, %init: i1) {
  tile.mmad %a16, %b16, %c32, %init : memref<1x1x16x16xf16, "L0A">, memref<1x1x16x16xf16, "L0B">, memref<1x1x16x16xf32, "L0C">
  tile.mmad %abf, %bbf, %c32, %init : memref<1x1x16x16xbf16, "L0A">, memref<1x1x16x16xbf16, "L0B">, memref<1x1x16x16xf32, "L0C">
  tile.mmad %a8, %b8, %ci, %init : memref<1x1x16x32xi8, "L0A">, memref<1x1x16x32xi8, "L0B">, memref<1x1x16x16xi32, "L0C">
  func.return
}
// CHECK-LABEL: func.func @mmad_types
// CHECK-NEXT: tile.mmad %a16, %b16, %c32, %init : memref<1x1x16x16xf16, "L0A">, memref<1x1x16x16xf16, "L0B">, memref<1x1x16x16xf32, "L0C">
// CHECK-NEXT: tile.mmad %abf, %bbf, %c32, %init : memref<1x1x16x16xbf16, "L0A">, memref<1x1x16x16xbf16, "L0B">, memref<1x1x16x16xf32, "L0C">
// CHECK-NEXT: tile.mmad %a8, %b8, %ci, %init : memref<1x1x16x32xi8, "L0A">, memref<1x1x16x32xi8, "L0B">, memref<1x1x16x16xi32, "L0C">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "mmad_types"
// GENERIC: "tile.mmad"(
// GENERIC: "tile.mmad"(
// GENERIC: "tile.mmad"(

// -----

// fixpipe: nd, nc1hwc0 and nz layouts, with and without bias, with and without relu, to GM, UB
// and L1, casting on the way.
func.func @fixpipe(%c: memref<2x2x16x16xf32, "L0C">, %g: memref<40x40xf32, "GM">, %g16: memref<1x40x40xf16, "GM">, %u: memref<32x32xf16, "UB">, %l1: memref<32x32xf32, "L1">, %bias: memref<32xf32, "L1">, %o: memref<1x2x4x8x16xf32, "GM">, %ou: memref<1x2x4x8x16xf16, "UB">, %nz: memref<4x40x16x16xf32, "GM">, %nzb: memref<2x2x2x16x16xf16, "GM">) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  tile.fixpipe %c to %g[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<40x40xf32, "GM">
  tile.fixpipe %c to %g[%c16, %c16] bias %bias : memref<32xf32, "L1"> {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<40x40xf32, "GM">
  tile.fixpipe %c to %g16[%c0, %c16, %c0] {layout = "nd", relu = true} : memref<2x2x16x16xf32, "L0C"> to memref<1x40x40xf16, "GM">
  tile.fixpipe %c to %u[%c0, %c0] bias %bias : memref<32xf32, "L1"> {layout = "nd", relu = true} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf16, "UB">
  tile.fixpipe %c to %l1[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "L1">
  tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] {layout = "nc1hwc0", rows = 4 : i64} : memref<2x2x16x16xf32, "L0C"> to memref<1x2x4x8x16xf32, "GM">
  tile.fixpipe %c to %ou[%c0, %c0, %c0, %c0, %c0] bias %bias : memref<32xf32, "L1"> {layout = "nc1hwc0", relu = true, rows = 4 : i64} : memref<2x2x16x16xf32, "L0C"> to memref<1x2x4x8x16xf16, "UB">
  tile.fixpipe %c to %nz[%c0, %c16, %c0, %c0] {layout = "nz"} : memref<2x2x16x16xf32, "L0C"> to memref<4x40x16x16xf32, "GM">
  tile.fixpipe %c to %nzb[%c0, %c0, %c0, %c0, %c0] bias %bias : memref<32xf32, "L1"> {layout = "nz", relu = true} : memref<2x2x16x16xf32, "L0C"> to memref<2x2x2x16x16xf16, "GM">
  tile.fixpipe %c to %g[%c16, %c16] bias %bias : memref<32xf32, "L1"> m %c16 n %c16 {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<40x40xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @fixpipe
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c16 = arith.constant 16 : index
// CHECK-NEXT: tile.fixpipe %c to %g[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<40x40xf32, "GM">
// CHECK-NEXT: tile.fixpipe %c to %g[%c16, %c16] bias %bias : memref<32xf32, "L1"> {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<40x40xf32, "GM">
// CHECK-NEXT: tile.fixpipe %c to %g16[%c0, %c16, %c0] {layout = "nd", relu = true} : memref<2x2x16x16xf32, "L0C"> to memref<1x40x40xf16, "GM">
// CHECK-NEXT: tile.fixpipe %c to %u[%c0, %c0] bias %bias : memref<32xf32, "L1"> {layout = "nd", relu = true} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf16, "UB">
// CHECK-NEXT: tile.fixpipe %c to %l1[%c0, %c0] {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<32x32xf32, "L1">
// CHECK-NEXT: tile.fixpipe %c to %o[%c0, %c0, %c0, %c0, %c0] {layout = "nc1hwc0", rows = 4 : i64} : memref<2x2x16x16xf32, "L0C"> to memref<1x2x4x8x16xf32, "GM">
// CHECK-NEXT: tile.fixpipe %c to %ou[%c0, %c0, %c0, %c0, %c0] bias %bias : memref<32xf32, "L1"> {layout = "nc1hwc0", relu = true, rows = 4 : i64} : memref<2x2x16x16xf32, "L0C"> to memref<1x2x4x8x16xf16, "UB">
// CHECK-NEXT: tile.fixpipe %c to %nz[%c0, %c16, %c0, %c0] {layout = "nz"} : memref<2x2x16x16xf32, "L0C"> to memref<4x40x16x16xf32, "GM">
// CHECK-NEXT: tile.fixpipe %c to %nzb[%c0, %c0, %c0, %c0, %c0] bias %bias : memref<32xf32, "L1"> {layout = "nz", relu = true} : memref<2x2x16x16xf32, "L0C"> to memref<2x2x2x16x16xf16, "GM">
// CHECK-NEXT: tile.fixpipe %c to %g[%c16, %c16] bias %bias : memref<32xf32, "L1"> m %c16 n %c16 {layout = "nd"} : memref<2x2x16x16xf32, "L0C"> to memref<40x40xf32, "GM">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "fixpipe"
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(
// GENERIC: "tile.fixpipe"(

// -----

// Every unary vector op (and one that broadcasts its source).
func.func @vector_unary(%x: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "UB">, %r: memref<1x16xf32, "UB">) {
  tile.vabs %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vneg %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vrelu %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vexp %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vln %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vsqrt %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vrsqrt %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vrec %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vtanh %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vsigmoid %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.verf %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vsin %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vcos %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vfloor %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vceil %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vround %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vsign %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vnot %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vcopy %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vexp %r to %y : memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @vector_unary
// CHECK-NEXT: tile.vabs %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vneg %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vrelu %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vexp %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vln %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vsqrt %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vrsqrt %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vrec %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vtanh %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vsigmoid %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.verf %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vsin %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vcos %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vfloor %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vceil %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vround %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vsign %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vnot %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vcopy %x to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vexp %r to %y : memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "vector_unary"
// GENERIC: "tile.vabs"(
// GENERIC: "tile.vneg"(
// GENERIC: "tile.vrelu"(
// GENERIC: "tile.vexp"(
// GENERIC: "tile.vln"(
// GENERIC: "tile.vsqrt"(
// GENERIC: "tile.vrsqrt"(
// GENERIC: "tile.vrec"(
// GENERIC: "tile.vtanh"(
// GENERIC: "tile.vsigmoid"(
// GENERIC: "tile.verf"(
// GENERIC: "tile.vsin"(
// GENERIC: "tile.vcos"(
// GENERIC: "tile.vfloor"(
// GENERIC: "tile.vceil"(
// GENERIC: "tile.vround"(
// GENERIC: "tile.vsign"(
// GENERIC: "tile.vnot"(
// GENERIC: "tile.vcopy"(
// GENERIC: "tile.vexp"(

// -----

// Every binary vector op, and broadcasts along size-1 and missing leading dims.
func.func @vector_binary(%x: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "UB">, %r: memref<1x16xf32, "UB">, %col: memref<4x1xf32, "UB">, %s: memref<16xf32, "UB">) {
  tile.vadd %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vsub %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmul %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vdiv %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmax %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmin %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vpow %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vand %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vor %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vadd %x, %r to %y : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmul %col, %r to %y : memref<4x1xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vsub %x, %s to %y : memref<4x16xf32, "UB">, memref<16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @vector_binary
// CHECK-NEXT: tile.vadd %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vsub %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmul %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vdiv %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmax %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmin %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vpow %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vand %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vor %x, %y to %y : memref<4x16xf32, "UB">, memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vadd %x, %r to %y : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmul %col, %r to %y : memref<4x1xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vsub %x, %s to %y : memref<4x16xf32, "UB">, memref<16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "vector_binary"
// GENERIC: "tile.vadd"(
// GENERIC: "tile.vsub"(
// GENERIC: "tile.vmul"(
// GENERIC: "tile.vdiv"(
// GENERIC: "tile.vmax"(
// GENERIC: "tile.vmin"(
// GENERIC: "tile.vpow"(
// GENERIC: "tile.vand"(
// GENERIC: "tile.vor"(
// GENERIC: "tile.vadd"(
// GENERIC: "tile.vmul"(
// GENERIC: "tile.vsub"(

// -----

// Every vector op with a scalar operand.
func.func @vector_scalar(%x: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "UB">, %r: memref<1x16xf32, "UB">) {
  tile.vadds %x, 2.000000e+00 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmuls %x, -5.000000e-01 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmaxs %x, 0.000000e+00 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vmins %x, 1.000000e+02 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vadds %r, 1.000000e+00 : f64 to %y : memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @vector_scalar
// CHECK-NEXT: tile.vadds %x, 2.000000e+00 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmuls %x, -5.000000e-01 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmaxs %x, 0.000000e+00 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vmins %x, 1.000000e+02 : f64 to %y : memref<4x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vadds %r, 1.000000e+00 : f64 to %y : memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "vector_scalar"
// GENERIC: "tile.vadds"(
// GENERIC: "tile.vmuls"(
// GENERIC: "tile.vmaxs"(
// GENERIC: "tile.vmins"(
// GENERIC: "tile.vadds"(

// -----

// vcmp with every predicate, vsel, vcast, vdup, vbrc, vreduce of each kind, vtranspose,
// vstride (steps 2, -1 and a broadcast 0), vpick (index tables: rows 3, 0; columns).
func.func @vector_other(%x: memref<4x16xf32, "UB">, %y: memref<4x16xf32, "UB">, %r: memref<1x16xf32, "UB">, %col: memref<4x1xf32, "UB">, %m: memref<4x16xi1, "UB">, %h: memref<4x16xf16, "UB">, %i: memref<4x16xi32, "UB">, %one: memref<1x1xf32, "UB">, %t: memref<16x4xf32, "UB">, %f: memref<1x2x3x4xf32, "UB">, %ft: memref<1x3x4x2xf32, "UB">, %s: memref<2x16xf32, "UB">) {
  tile.vcmp %x, %r to %m {predicate = "eq"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
  tile.vcmp %x, %r to %m {predicate = "ne"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
  tile.vcmp %x, %r to %m {predicate = "lt"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
  tile.vcmp %x, %r to %m {predicate = "le"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
  tile.vcmp %x, %r to %m {predicate = "gt"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
  tile.vcmp %x, %r to %m {predicate = "ge"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
  tile.vsel %m, %x, %r to %y : memref<4x16xi1, "UB">, memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vcast %x to %h : memref<4x16xf32, "UB"> to memref<4x16xf16, "UB">
  tile.vcast %h to %i : memref<4x16xf16, "UB"> to memref<4x16xi32, "UB">
  tile.vdup %y {value = 5.000000e-01 : f64} : memref<4x16xf32, "UB">
  tile.vdup %m {value = 1.000000e+00 : f64} : memref<4x16xi1, "UB">
  tile.vbrc %r to %y : memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vbrc %col to %y : memref<4x1xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vreduce %x to %r {kind = "sum", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<1x16xf32, "UB">
  tile.vreduce %x to %col {kind = "max", axes = array<i64: 1>} : memref<4x16xf32, "UB"> to memref<4x1xf32, "UB">
  tile.vreduce %x to %one {kind = "min", axes = array<i64: 0, 1>} : memref<4x16xf32, "UB"> to memref<1x1xf32, "UB">
  tile.vreduce %x to %r {kind = "prod", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<1x16xf32, "UB">
  tile.vtranspose %x to %t {perm = array<i64: 1, 0>} : memref<4x16xf32, "UB"> to memref<16x4xf32, "UB">
  tile.vtranspose %f to %ft {perm = array<i64: 0, 2, 3, 1>} : memref<1x2x3x4xf32, "UB"> to memref<1x3x4x2xf32, "UB">
  tile.vstride %x to %s {steps = array<i64: 2, -1>} : memref<4x16xf32, "UB"> to memref<2x16xf32, "UB">
  tile.vstride %one to %y {steps = array<i64: 0, 0>} : memref<1x1xf32, "UB"> to memref<4x16xf32, "UB">
  tile.vpick %x to %s {indices = array<i64: 3, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7>} : memref<4x16xf32, "UB"> to memref<2x16xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @vector_other
// CHECK-NEXT: tile.vcmp %x, %r to %m {predicate = "eq"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vcmp %x, %r to %m {predicate = "ne"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vcmp %x, %r to %m {predicate = "lt"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vcmp %x, %r to %m {predicate = "le"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vcmp %x, %r to %m {predicate = "gt"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vcmp %x, %r to %m {predicate = "ge"} : memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vsel %m, %x, %r to %y : memref<4x16xi1, "UB">, memref<4x16xf32, "UB">, memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vcast %x to %h : memref<4x16xf32, "UB"> to memref<4x16xf16, "UB">
// CHECK-NEXT: tile.vcast %h to %i : memref<4x16xf16, "UB"> to memref<4x16xi32, "UB">
// CHECK-NEXT: tile.vdup %y {value = 5.000000e-01 : f64} : memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vdup %m {value = 1.000000e+00 : f64} : memref<4x16xi1, "UB">
// CHECK-NEXT: tile.vbrc %r to %y : memref<1x16xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vbrc %col to %y : memref<4x1xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vreduce %x to %r {kind = "sum", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<1x16xf32, "UB">
// CHECK-NEXT: tile.vreduce %x to %col {kind = "max", axes = array<i64: 1>} : memref<4x16xf32, "UB"> to memref<4x1xf32, "UB">
// CHECK-NEXT: tile.vreduce %x to %one {kind = "min", axes = array<i64: 0, 1>} : memref<4x16xf32, "UB"> to memref<1x1xf32, "UB">
// CHECK-NEXT: tile.vreduce %x to %r {kind = "prod", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<1x16xf32, "UB">
// CHECK-NEXT: tile.vtranspose %x to %t {perm = array<i64: 1, 0>} : memref<4x16xf32, "UB"> to memref<16x4xf32, "UB">
// CHECK-NEXT: tile.vtranspose %f to %ft {perm = array<i64: 0, 2, 3, 1>} : memref<1x2x3x4xf32, "UB"> to memref<1x3x4x2xf32, "UB">
// CHECK-NEXT: tile.vstride %x to %s {steps = array<i64: 2, -1>} : memref<4x16xf32, "UB"> to memref<2x16xf32, "UB">
// CHECK-NEXT: tile.vstride %one to %y {steps = array<i64: 0, 0>} : memref<1x1xf32, "UB"> to memref<4x16xf32, "UB">
// CHECK-NEXT: tile.vpick %x to %s {indices = array<i64: 3, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7>} : memref<4x16xf32, "UB"> to memref<2x16xf32, "UB">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "vector_other"
// GENERIC: "tile.vcmp"(
// GENERIC: "tile.vcmp"(
// GENERIC: "tile.vcmp"(
// GENERIC: "tile.vcmp"(
// GENERIC: "tile.vcmp"(
// GENERIC: "tile.vcmp"(
// GENERIC: "tile.vsel"(
// GENERIC: "tile.vcast"(
// GENERIC: "tile.vcast"(
// GENERIC: "tile.vdup"(
// GENERIC: "tile.vdup"(
// GENERIC: "tile.vbrc"(
// GENERIC: "tile.vbrc"(
// GENERIC: "tile.vreduce"(
// GENERIC: "tile.vreduce"(
// GENERIC: "tile.vreduce"(
// GENERIC: "tile.vreduce"(
// GENERIC: "tile.vtranspose"(
// GENERIC: "tile.vtranspose"(
// GENERIC: "tile.vstride"(
// GENERIC: "tile.vstride"(
// GENERIC: "tile.vpick"(

// -----

// vpool of each kind; vreduce may also drop the reduced dims.
func.func @vector_pool(%x: memref<1x1x9x9x16xf32, "UB">, %y: memref<1x1x4x4x16xf32, "UB">, %t: memref<4x16xf32, "UB">, %v: memref<16xf32, "UB">) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  tile.vpool %x[%c0] to %y {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 8 : i64, width = 8 : i64} : memref<1x1x9x9x16xf32, "UB"> to memref<1x1x4x4x16xf32, "UB">
  tile.vpool %x[%c2] to %y {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 8 : i64, width = 8 : i64} : memref<1x1x9x9x16xf32, "UB"> to memref<1x1x4x4x16xf32, "UB">
  tile.vpool %x[%c0] to %y {kind = "avg_include_pad", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 8 : i64, width = 8 : i64} : memref<1x1x9x9x16xf32, "UB"> to memref<1x1x4x4x16xf32, "UB">
  tile.vreduce %t to %v {kind = "sum", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<16xf32, "UB">
  func.return
}
// CHECK-LABEL: func.func @vector_pool
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: tile.vpool %x[%c0] to %y {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 8 : i64, width = 8 : i64} : memref<1x1x9x9x16xf32, "UB"> to memref<1x1x4x4x16xf32, "UB">
// CHECK-NEXT: tile.vpool %x[%c2] to %y {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 8 : i64, width = 8 : i64} : memref<1x1x9x9x16xf32, "UB"> to memref<1x1x4x4x16xf32, "UB">
// CHECK-NEXT: tile.vpool %x[%c0] to %y {kind = "avg_include_pad", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, height = 8 : i64, width = 8 : i64} : memref<1x1x9x9x16xf32, "UB"> to memref<1x1x4x4x16xf32, "UB">
// CHECK-NEXT: tile.vreduce %t to %v {kind = "sum", axes = array<i64: 0>} : memref<4x16xf32, "UB"> to memref<16xf32, "UB">
// CHECK-NEXT: func.return
// GENERIC-LABEL: "func.func"() <{sym_name = "vector_pool"
// GENERIC: "tile.vpool"(
// GENERIC: "tile.vpool"(
// GENERIC: "tile.vpool"(
// GENERIC: "tile.vreduce"(

// -----

// Mix kernels (decoupled presets): a mix launch names the AIV function and both block
// counts; cross-core flags with and without a slot operand.
func.func @mix_host(%x: memref<2x4xf32, "GM">, %ws: memref<2x2x4xf32, "GM">) {
  tile.launch @k_mix_aic(%x, %ws) {aiv = @k_mix_aiv, blocks = 2 : i64, aiv_blocks = 2 : i64} : memref<2x4xf32, "GM">, memref<2x2x4xf32, "GM">
  func.return
}
// CHECK-LABEL: func.func @mix_host
// CHECK-NEXT: tile.launch @k_mix_aic(%x, %ws) {aiv = @k_mix_aiv, blocks = 2 : i64, aiv_blocks = 2 : i64} : memref<2x4xf32, "GM">, memref<2x2x4xf32, "GM">
// GENERIC-LABEL: "func.func"() <{sym_name = "mix_host"
// GENERIC: "tile.launch"(%{{.*}}) <{{.*}}aiv = @k_mix_aiv

// -----

func.func @cross_core(%slot: index) {
  tile.sync_block_wait[%slot] {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
  tile.sync_block_set[%slot] {flag = 0 : i64, mode = "aic_to_aiv", pipe = "FIX"}
  tile.sync_block_wait {flag = 0 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
  tile.sync_block_set {flag = 10 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
  func.return
}
// CHECK-LABEL: func.func @cross_core
// CHECK-NEXT: tile.sync_block_wait[%slot] {flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}
// CHECK-NEXT: tile.sync_block_set[%slot] {flag = 0 : i64, mode = "aic_to_aiv", pipe = "FIX"}
// CHECK-NEXT: tile.sync_block_wait {flag = 0 : i64, mode = "aic_to_aiv", pipe = "MTE2"}
// CHECK-NEXT: tile.sync_block_set {flag = 10 : i64, mode = "aiv_to_aic", pipe = "MTE2"}
// GENERIC-LABEL: "func.func"() <{sym_name = "cross_core"
// GENERIC: "tile.sync_block_wait"(%{{.*}}) <{flag = 2 : i64, mode = "aiv_to_aic", pipe = "FIX"}>
