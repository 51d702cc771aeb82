// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops' | filecheck %s
// RUN: tilegraph-opt %s -p 'set-target{platform=ascend910b},fuse-ops,lower-graph-to-kernels,tile-kernels' | filecheck %s --check-prefix=TILED

// Phi-3's MLP (passes/fuse_legality.py is_view_split, tiling/matmul_views.py split_sources):
// the fused [gate | up] projection is split and SiLU(gate) * up computed. The split joins the
// elementwise kernel and computes nothing: the kernel reads gate's and up's tiles from the
// projection's rows, up from column 24 (row stride 48). The producer of a split's input
// never joins the kernel (the add below): the views need its result in GM.
func.func @gate_up(%gu: !layout.tensor<1x20x48xf32>) -> !layout.tensor<1x20x24xf32> {
  %sizes = graph.constant dense<[24, 24]> : !layout.tensor<2xi64>
  %gate, %up = graph.split %gu, %sizes {axis = 2} : (!layout.tensor<1x20x48xf32>, !layout.tensor<2xi64>) -> (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>)
  %sig = graph.sigmoid %gate : (!layout.tensor<1x20x24xf32>) -> !layout.tensor<1x20x24xf32>
  %silu = graph.mul %gate, %sig : (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>) -> !layout.tensor<1x20x24xf32>
  %out = graph.mul %silu, %up : (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>) -> !layout.tensor<1x20x24xf32>
  func.return %out : !layout.tensor<1x20x24xf32>
}
// CHECK-LABEL: func.func @gate_up(
// CHECK:         %out = graph.fused "fused_split_sigmoid_mul_0" <injective> (%gu, %sizes)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:      graph.split
// CHECK-NEXT:      graph.sigmoid
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %out

// TILED-LABEL: func.func @gate_up(
// TILED:         tile.launch @[[K:fused_split_sigmoid_mul_0]](%gu, %out)
// TILED-NOT:     tile.launch
// TILED:       func.func @[[K]](
// TILED-DAG:     tile.strided_view %gu : memref<1x20x48xf32, "GM"> to memref<1x20x24xf32, strided<[960, 48, 1]>, "GM">
// TILED-DAG:     tile.strided_view %gu : memref<1x20x48xf32, "GM"> to memref<1x20x24xf32, strided<[960, 48, 1], offset: 24>, "GM">
// TILED-NOT:     tile.launch

func.func @computed_input(%x: !layout.tensor<1x20x48xf32>) -> !layout.tensor<1x20x24xf32> {
  %one = graph.constant dense<1.0> : !layout.tensor<f32>
  %gu = graph.add %x, %one : (!layout.tensor<1x20x48xf32>, !layout.tensor<f32>) -> !layout.tensor<1x20x48xf32>
  %sizes = graph.constant dense<[24, 24]> : !layout.tensor<2xi64>
  %gate, %up = graph.split %gu, %sizes {axis = 2} : (!layout.tensor<1x20x48xf32>, !layout.tensor<2xi64>) -> (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>)
  %out = graph.mul %gate, %up : (!layout.tensor<1x20x24xf32>, !layout.tensor<1x20x24xf32>) -> !layout.tensor<1x20x24xf32>
  func.return %out : !layout.tensor<1x20x24xf32>
}
// CHECK-LABEL: func.func @computed_input(
// CHECK:         %gu = graph.add %x, %one
// CHECK:         %out = graph.fused "fused_split_mul_1" <injective> (%gu, %sizes)

// TILED-LABEL: func.func @computed_input(
// TILED:         tile.launch @add_{{[0-9]+}}(%x, %one, %gu)
// TILED:         tile.launch @fused_split_mul_{{[0-9]+}}(%gu, %out)
// TILED:       func.func @fused_split_mul_1(
// TILED:         tile.strided_view %gu : memref<1x20x48xf32, "GM"> to memref<1x20x24xf32, strided<[960, 48, 1], offset: 24>, "GM">
