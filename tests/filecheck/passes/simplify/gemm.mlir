// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=matmul-add-to-gemm,transpose-into-gemm,gemm-scalar-mul}' --split-input-file | filecheck %s
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=gemm-scalar-mul-any fast-math=true}' --split-input-file | filecheck %s --check-prefix=FAST
// RUN: tilegraph-opt %s -p 'algebraic-simplify{only=gemm-scalar-mul-any}' --split-input-file | filecheck %s --check-prefix=EXACT

// matmul-add-to-gemm: a [N] bias on either side, and an [M, 1] bias.
func.func @matmul_add(%a: !layout.tensor<3x4xf32>, %b: !layout.tensor<4x5xf32>, %bias: !layout.tensor<5xf32>, %col: !layout.tensor<3x1xf32>) -> (!layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>) {
  %m = graph.matmul %a, %b : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %y = graph.add %bias, %m : (!layout.tensor<5xf32>, !layout.tensor<3x5xf32>) -> !layout.tensor<3x5xf32>
  %m2 = graph.matmul %a, %b : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %z = graph.add %m2, %col : (!layout.tensor<3x5xf32>, !layout.tensor<3x1xf32>) -> !layout.tensor<3x5xf32>
  func.return %y, %z : !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>
}
// CHECK-LABEL: func.func @matmul_add
// CHECK-NEXT:  %y = graph.gemm %a, %b, %bias : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>, !layout.tensor<5xf32>) -> !layout.tensor<3x5xf32>
// CHECK-NEXT:  %z = graph.gemm %a, %b, %col : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>, !layout.tensor<3x1xf32>) -> !layout.tensor<3x5xf32>
// CHECK-NEXT:  func.return %y, %z

// -----
// matmul-add-to-gemm must not fire: the matmul has another user; batched (3-D) operands;
// a bias that broadcasts the result; float16 (matmul rounds before the add).
func.func @matmul_add_no(%a: !layout.tensor<3x4xf32>, %b: !layout.tensor<4x5xf32>, %bias: !layout.tensor<5xf32>, %a3: !layout.tensor<2x3x4xf32>, %big: !layout.tensor<2x3x5xf32>, %h: !layout.tensor<3x4xf16>, %hb: !layout.tensor<4x5xf16>, %hbias: !layout.tensor<5xf16>) -> (!layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<2x3x5xf32>, !layout.tensor<2x3x5xf32>, !layout.tensor<3x5xf16>) {
  %m = graph.matmul %a, %b : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %y = graph.add %m, %bias : (!layout.tensor<3x5xf32>, !layout.tensor<5xf32>) -> !layout.tensor<3x5xf32>
  %m3 = graph.matmul %a3, %b : (!layout.tensor<2x3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<2x3x5xf32>
  %z = graph.add %m3, %bias : (!layout.tensor<2x3x5xf32>, !layout.tensor<5xf32>) -> !layout.tensor<2x3x5xf32>
  %m4 = graph.matmul %a, %b : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %w = graph.add %m4, %big : (!layout.tensor<3x5xf32>, !layout.tensor<2x3x5xf32>) -> !layout.tensor<2x3x5xf32>
  %mh = graph.matmul %h, %hb : (!layout.tensor<3x4xf16>, !layout.tensor<4x5xf16>) -> !layout.tensor<3x5xf16>
  %v = graph.add %mh, %hbias : (!layout.tensor<3x5xf16>, !layout.tensor<5xf16>) -> !layout.tensor<3x5xf16>
  func.return %y, %m, %z, %w, %v : !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<2x3x5xf32>, !layout.tensor<2x3x5xf32>, !layout.tensor<3x5xf16>
}
// CHECK-LABEL: func.func @matmul_add_no
// CHECK-NOT:   graph.gemm

// -----
// transpose-into-gemm: both operands; an existing transA flag is toggled off; the
// transpose with another user stays.
func.func @transpose_gemm(%at: !layout.tensor<4x3xf32>, %bt: !layout.tensor<5x4xf32>, %a: !layout.tensor<3x4xf32>) -> (!layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<4x3xf32>) {
  %ta = graph.transpose %at {perm = [1, 0]} : (!layout.tensor<4x3xf32>) -> !layout.tensor<3x4xf32>
  %tb = graph.transpose %bt : (!layout.tensor<5x4xf32>) -> !layout.tensor<4x5xf32>
  %y = graph.gemm %ta, %tb {alpha = 0.5} : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %t2 = graph.transpose %a : (!layout.tensor<3x4xf32>) -> !layout.tensor<4x3xf32>
  %z = graph.gemm %t2, %tb {transA = 1} : (!layout.tensor<4x3xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  func.return %y, %z, %t2 : !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<4x3xf32>
}
// CHECK-LABEL: func.func @transpose_gemm
// CHECK:       %y = graph.gemm %at, %bt {alpha = 0.5, transA = 1, transB = 1}
// CHECK:       %t2 = graph.transpose %a
// CHECK-NEXT:  %z = graph.gemm %a, %bt {transB = 1}
// CHECK-NOT:   graph.transpose

// -----
// gemm-scalar-mul: a power-of-two scale moves into alpha and beta (exact); 0.3 only
// under fast-math (gemm-scalar-mul-any); a gemm with another user stays.
func.func @gemm_scale(%a: !layout.tensor<3x4xf32>, %b: !layout.tensor<4x5xf32>, %c: !layout.tensor<5xf32>) -> (!layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>) {
  %half = graph.constant dense<0.5> : !layout.tensor<f32>
  %s = graph.constant dense<0.3> : !layout.tensor<f32>
  %g = graph.gemm %a, %b, %c {beta = 3.0} : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>, !layout.tensor<5xf32>) -> !layout.tensor<3x5xf32>
  %y = graph.mul %half, %g : (!layout.tensor<f32>, !layout.tensor<3x5xf32>) -> !layout.tensor<3x5xf32>
  %g2 = graph.gemm %a, %b : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %z = graph.div %g2, %s : (!layout.tensor<3x5xf32>, !layout.tensor<f32>) -> !layout.tensor<3x5xf32>
  %g3 = graph.gemm %a, %b : (!layout.tensor<3x4xf32>, !layout.tensor<4x5xf32>) -> !layout.tensor<3x5xf32>
  %w = graph.mul %g3, %half : (!layout.tensor<3x5xf32>, !layout.tensor<f32>) -> !layout.tensor<3x5xf32>
  func.return %y, %z, %w, %g3 : !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>, !layout.tensor<3x5xf32>
}
// CHECK-LABEL: func.func @gemm_scale
// CHECK:       %y = graph.gemm %a, %b, %c {alpha = 0.5, beta = 1.5}
// CHECK:       %z = graph.div %g2, %s
// CHECK:       %w = graph.mul %g3, %half
// FAST-LABEL:  func.func @gemm_scale
// FAST:        %y = graph.mul %half, %g
// FAST:        %z = graph.gemm %a, %b {alpha = 3.3333333}
// EXACT-LABEL: func.func @gemm_scale
// EXACT:       %z = graph.div %g2, %s
