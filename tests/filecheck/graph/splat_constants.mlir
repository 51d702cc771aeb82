// Constants whose elements are all equal print as a splat (one value; the shape is the
// type's) at any size, so printed IR parses back with its data and runs; other large
// constants are still elided.

// RUN: tilegraph-opt %s | filecheck %s
// RUN: tilegraph-opt %s | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s --print-op-generic | tilegraph-opt | filecheck %s
// RUN: tilegraph-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: tilegraph-opt %s -o %t.mlir
// RUN: tilegraph-run %t.mlir --entry f --reference --no-format-report -q --save-outputs %t.out
// RUN: %python -c "import numpy as np, sys; y = np.load(sys.argv[1] + '/output0.npy'); assert (y == np.float32(3.75)).all() and y.shape == (4, 64), y" %t.out

func.func @f() -> (!layout.tensor<4x64xf32>, !layout.tensor<4xf32>) {
  %a = graph.constant dense<1.25> : !layout.tensor<4x64xf32>
  %b = graph.constant dense<2.5> : !layout.tensor<4x64xf32>
  %y = graph.add %a, %b : !layout.tensor<4x64xf32>
  %z = graph.constant dense<[0.0, -0.0, 0.0, 0.0]> : !layout.tensor<4xf32>
  func.return %y, %z : !layout.tensor<4x64xf32>, !layout.tensor<4xf32>
}

func.func @g() -> !layout.tensor<32xi32> {
  %r = graph.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]> : !layout.tensor<32xi32>
  func.return %r : !layout.tensor<32xi32>
}

// CHECK: %a = graph.constant dense<1.25> : !layout.tensor<4x64xf32>
// CHECK-NEXT: %b = graph.constant dense<2.5> : !layout.tensor<4x64xf32>
// -0.0 and 0.0 differ in their bits: not a splat
// CHECK: %z = graph.constant dense<[0.0, -0.0, 0.0, 0.0]> : !layout.tensor<4xf32>
// CHECK: %r = graph.constant dense<__elided__> : !layout.tensor<32xi32>

// GENERIC: #graph.dense<f32, [4, 64], 1.25>
