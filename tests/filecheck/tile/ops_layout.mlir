// RUN: TILEGRAPH_ROUNDTRIP
// Round trip of the layout-converting DMA forms added with the NZ / ragged-group lowerings:
// tile.nz2nd (UB NZ tile -> GM ND rows), tile.load3d with the valid channels of a ragged
// group block, tile.vcast with an explicit rounding, tile.nd2nz into a batch slice of L1.

func.func @layouts(%nz: memref<3x2x16x16xf32, "UB">, %nd: memref<2x20x40xf32, "GM">,
    %fmap: memref<1x1x6x8x16xf32, "L1">, %a: memref<2x1x16x16xf32, "L0A">,
    %x: memref<4x16xf32, "UB">, %y: memref<4x16xi32, "UB">, %l1: memref<1x3x2x16x16xf32, "L1">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.nz2nd %nz to %nd[%c1, %c4, %c0] : memref<3x2x16x16xf32, "UB"> to memref<2x20x40xf32, "GM">
  tile.load3d %fmap[%c0] to %a valid %c4 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_left = 1 : i64, out_width = 8 : i64, channels = 16 : i64} : memref<1x1x6x8x16xf32, "L1"> to memref<2x1x16x16xf32, "L0A">
  tile.vcast %x to %y {rounding = "trunc"} : memref<4x16xf32, "UB"> to memref<4x16xi32, "UB">
  tile.nd2nz %nd[%c1, %c0, %c0] to %l1 : memref<2x20x40xf32, "GM"> to memref<1x3x2x16x16xf32, "L1">
  func.return
}
// CHECK-LABEL: func.func @layouts
// CHECK:      tile.nz2nd %nz to %nd[%c1, %c4, %c0] : memref<3x2x16x16xf32, "UB"> to memref<2x20x40xf32, "GM">
// CHECK-NEXT: tile.load3d %fmap[%c0] to %a valid %c4 {{{.*}}channels = 16 : i64} : memref<1x1x6x8x16xf32, "L1"> to memref<2x1x16x16xf32, "L0A">
// CHECK-NEXT: tile.vcast %x to %y {rounding = "trunc"} : memref<4x16xf32, "UB"> to memref<4x16xi32, "UB">
// CHECK-NEXT: tile.nd2nz %nd[%c1, %c0, %c0] to %l1 : memref<2x20x40xf32, "GM"> to memref<1x3x2x16x16xf32, "L1">
