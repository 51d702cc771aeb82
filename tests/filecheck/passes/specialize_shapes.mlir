// RUN: tilegraph-opt %s -p 'specialize-shapes{sizes="b=2,w=10"}' | filecheck %s
// RUN: tilegraph-opt %s -p O2 | filecheck %s --check-prefix=KEEP
// RUN: not tilegraph-opt %s -p 'specialize-shapes{sizes="b=2,w=1"}' 2>&1 | filecheck %s --check-prefix=GUARD
// RUN: not tilegraph-opt %s -p 'specialize-shapes{sizes="b=two"}' 2>&1 | filecheck %s --check-prefix=BAD

// A module compiled with symbols b (batch) and w (width) and the guard MaxPool recorded:
// specialize-shapes makes both static in every type, expression dims evaluate
// (floor(w/2) -> 5); the guards stay on the module, and every pass keeps them (O2).
builtin.module attributes {tilegraph.guards = [{kind = "assert", condition = "w - 2 >= 0", op = "p", reason = "a window of size 2 fits the padded input"}], tilegraph.symbols = {b = ["x", 0 : i64], w = ["x", 3 : i64]}} {
  func.func @main(%x: !layout.tensor<[b, 3, 4, w], f32, NCHW>) -> !layout.tensor<[b, 3, 2, "floor(w/2)"], f32, NCHW> {
    %r = graph.relu %x : !layout.tensor<[b, 3, 4, w], f32, NCHW>
    %p = graph.max_pool %r {kernel_shape = [2, 2], strides = [2, 2]} : (!layout.tensor<[b, 3, 4, w], f32, NCHW>) -> !layout.tensor<[b, 3, 2, "floor(w/2)"], f32, NCHW>
    func.return %p : !layout.tensor<[b, 3, 2, "floor(w/2)"], f32, NCHW>
  }
}

// CHECK:      tilegraph.guards = [{kind = "assert", condition = "w - 2 >= 0"
// CHECK:      func.func @main(%x: !layout.tensor<2x3x4x10xf32, NCHW>) -> !layout.tensor<2x3x2x5xf32, NCHW>
// CHECK-NEXT:   %r = graph.relu %x : !layout.tensor<2x3x4x10xf32, NCHW>
// CHECK-NEXT:   %p = graph.max_pool %r {kernel_shape = [2, 2], strides = [2, 2]} : (!layout.tensor<2x3x4x10xf32, NCHW>) -> !layout.tensor<2x3x2x5xf32, NCHW>

// KEEP: tilegraph.guards = [{kind = "assert", condition = "w - 2 >= 0", op = "p", reason = "a window of size 2 fits the padded input"}], tilegraph.symbols = {b = ["x", 0 : i64], w = ["x", 3 : i64]}

// GUARD: pass 'specialize-shapes': assert guard w - 2 >= 0 failed with w = 1; needed by op 'p' (a window of size 2 fits the padded input)

// BAD: pass 'specialize-shapes': sizes must be NAME=SIZE pairs, got 'b=two'
