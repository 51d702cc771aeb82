// The target on the module (tilegraph.target): printed and parsed back, pinned by the first
// pass that reads it, set by a pass option where absent, and a differing option is an error.
// RUN: tilegraph-opt %s --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: tilegraph-opt %s --split-input-file | tilegraph-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: tilegraph-opt %s --split-input-file -p fuse-ops | filecheck %s --check-prefix=FUSE
// RUN: not tilegraph-opt %s --split-input-file -p 'fuse-ops{platform=ascend910b}' 2>&1 | filecheck %s --check-prefix=DIFFERS
// RUN: not tilegraph-opt %s --split-input-file -p 'fuse-ops,tile-kernels{platform=test}' 2>&1 | filecheck %s --check-prefix=PINNED

// A chain of adds over 32 KiB tensors (each input and the output double-buffered in 20 KiB
// tiles). No target: fuse-ops reads the default preset (ascend910b, UB 192 KiB: three
// inputs per group) and pins it, so a later pass cannot use another preset.
func.func @chain(%a: !layout.tensor<128x64xf32>, %b: !layout.tensor<128x64xf32>, %c: !layout.tensor<128x64xf32>, %d: !layout.tensor<128x64xf32>, %e: !layout.tensor<128x64xf32>) -> !layout.tensor<128x64xf32> {
  %ab = graph.add %a, %b : !layout.tensor<128x64xf32>
  %abc = graph.add %ab, %c : !layout.tensor<128x64xf32>
  %abcd = graph.add %abc, %d : !layout.tensor<128x64xf32>
  %abcde = graph.add %abcd, %e : !layout.tensor<128x64xf32>
  func.return %abcde : !layout.tensor<128x64xf32>
}
// ROUND:       func.func @chain
// FUSE:        builtin.module attributes {tilegraph.target = {platform = "ascend910b"}} {
// FUSE-LABEL:  func.func @chain
// FUSE-NEXT:   %abc = graph.fused "fused_add_0" <broadcast> (%a, %b, %c)
// FUSE:        %abcde = graph.fused "fused_add_1" <broadcast> (%abc, %d, %e)
// PINNED: error: pass 'tile-kernels': platform 'test' differs from the module's target 'ascend910b' (set by pass 'fuse-ops')

// -----
// The same chain on ascend310p (UB 256 KiB): four inputs fit in one group.
builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "fp16"}} {
  func.func @chain(%a: !layout.tensor<128x64xf32>, %b: !layout.tensor<128x64xf32>, %c: !layout.tensor<128x64xf32>, %d: !layout.tensor<128x64xf32>, %e: !layout.tensor<128x64xf32>) -> !layout.tensor<128x64xf32> {
    %ab = graph.add %a, %b : !layout.tensor<128x64xf32>
    %abc = graph.add %ab, %c : !layout.tensor<128x64xf32>
    %abcd = graph.add %abc, %d : !layout.tensor<128x64xf32>
    %abcde = graph.add %abcd, %e : !layout.tensor<128x64xf32>
    func.return %abcde : !layout.tensor<128x64xf32>
  }
}
// ROUND:       builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "fp16"}} {
// FUSE:        builtin.module attributes {tilegraph.target = {platform = "ascend310p", precision = "fp16"}} {
// FUSE-LABEL:  func.func @chain
// FUSE-NEXT:   %ab = graph.add %a, %b
// FUSE-NEXT:   %abcde = graph.fused "fused_add_0" <broadcast> (%ab, %c, %d, %e)
// DIFFERS: error: pass 'fuse-ops': platform 'ascend910b' differs from the module's target 'ascend310p' (set by the input IR)

