// --emit-onnx writes the graph after the pipeline as ONNX; onnx.printer shows what is in it.
// RUN: tilegraph-opt %s -p O2 --emit-onnx %t.onnx -o %t.mlir 2>&1 | filecheck %s --check-prefix=LOG
// RUN: %python -c "import onnx, sys; print(onnx.printer.to_text(onnx.load(sys.argv[1])))" %t.onnx | filecheck %s
// RUN: tilegraph-opt %s -p O1 --emit-onnx %t.o1.onnx -o %t.o1.mlir
// RUN: %python -c "import onnx, sys; print(onnx.printer.to_text(onnx.load(sys.argv[1])))" %t.o1.onnx | filecheck %s --check-prefix=O1

// The printed IR elides the weights: it cannot be exported (one line, exit 1).
// RUN: not tilegraph-opt %t.mlir --emit-onnx %t.bad.onnx 2>&1 | filecheck %s --check-prefix=BAD

func.func @main(%x: !layout.tensor<[N, 3, 4, 4], f32, NCHW>) -> !layout.tensor<[N, 4, 4, 4], f32, NCHW> {
  %w = graph.constant dense<[[[[0.5]], [[-1.0]], [[0.25]]], [[[1.5]], [[0.75]], [[-0.5]]], [[[2.0]], [[0.125]], [[-2.0]]], [[[1.0]], [[1.0]], [[1.0]]]]> : !layout.tensor<4x3x1x1xf32, NCHW>
  %b = graph.constant dense<[0.1, -0.2, 0.3, -0.4]> : !layout.tensor<4xf32>
  %c = graph.conv2d %x, %w, %b : (!layout.tensor<[N, 3, 4, 4], f32, NCHW>, !layout.tensor<4x3x1x1xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<[N, 4, 4, 4], f32, NCHW>
  %r = graph.relu %c : !layout.tensor<[N, 4, 4, 4], f32, NCHW>
  func.return %r : !layout.tensor<[N, 4, 4, 4], f32, NCHW>
}

// LOG: wrote {{.*}}.onnx (1 nodes, 2 functions, 2 initializers; opsets ai.onnx 21, tilegraph 1)

// CHECK:      opset_import: ["" : 21, "tilegraph" : 1]
// CHECK:      main (float[N,3,4,4] x) => (float[N,4,4,4] output0)
// CHECK-NEXT: <float[4,3,1,1] w = {0.5,-1,0.25,1.5,0.75,-0.5,2,0.125,-2,1,1,1}, float[4] b = {0.1,-0.2,0.3,-0.4}
// CHECK:      output0 = tilegraph.[[KERNEL:fused_[a-z0-9_]+]] <kernel_name: string = "[[KERNEL]]", kind: string = "out_elemwise_fusable"> (x, w, b)
// CHECK:      domain: "tilegraph"
// CHECK:      [[KERNEL]] <kernel_name,kind>(x, w, b) => (r)
// CHECK-NEXT: {
// CHECK-NEXT:   x_1 = tilegraph.TransData <dst_format: string = "NC1HWC0", dst_storage_shape: strings = ["N", "1", "4", "4", "16"], origin_format: string = "NCHW", src_format: string = "NCHW", src_storage_shape: strings = ["N", "3", "4", "4"]> (x)
// CHECK-NEXT:   c = Conv (x_1, w, b)
// CHECK-NEXT:   r_1 = Relu (c)
// CHECK-NEXT:   r = tilegraph.TransData <dst_format: string = "NCHW", {{.*}}src_format: string = "NC1HWC0"{{.*}}> (r_1)
// CHECK-NEXT: }
// CHECK:      TransData <{{.*}}>(input) => (output)
// CHECK-NEXT: {
// CHECK-NEXT:   output = Identity (input)
// CHECK-NEXT: }

// O1:      opset_import: ["" : 21]
// O1:      c = Conv (x, w, b)
// O1-NEXT: output0 = Relu (c)
// O1-NOT:  tilegraph

// BAD: error: @main: 'graph.constant' (%w): the constant's data was elided when the IR was printed (print it with --print-constants)
// BAD-NOT: Traceback
