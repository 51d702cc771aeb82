// --print-between-passes, --time-passes and --pass-statistics see the passes inside O1, O2
// and format, not the pipelines as single steps.

// RUN: tilegraph-opt %s -p O2 --print-between-passes | filecheck %s --check-prefix=IR
// RUN: tilegraph-opt %s -p O2 --time-passes -o /dev/null | filecheck %s --check-prefix=TIME
// RUN: tilegraph-opt %s -p O2 --pass-statistics -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

func.func @f(%x: !layout.tensor<1x16x8x8xf16, NCHW>) -> !layout.tensor<1x16x8x8xf16, NCHW> {
  %y = graph.relu %x : !layout.tensor<1x16x8x8xf16, NCHW>
  func.return %y : !layout.tensor<1x16x8x8xf16, NCHW>
}

// IR: IR after infer-shapes:
// IR-NEXT: builtin.module {
// IR: IR after constant-fold:
// IR: IR after dce:
// IR: IR after infer-origin-format:
// IR: IR after select-storage-format:
// IR: IR after format-report:
// IR-NOT: IR after
// IR: func.func @f

// TIME: pass 'infer-shapes' (in O2 > O1) took {{[0-9.]+}} seconds
// TIME: pass 'O1' (in O2) took
// TIME: pass 'insert-trans-data' (in O2 > format) took
// TIME: pass 'format' (in O2) took
// TIME: pass 'fuse-ops' (in O2) took
// TIME-NEXT: pass 'fuse-dynamic-quantize' (in O2) took
// TIME-NEXT: pass 'O2' took

// STATS: O2 (ran 1x)
// STATS: O1 (ran 1x)
// STATS-NEXT: rounds 1
// STATS-NEXT: infer-shapes (ran 1x)
// STATS: cse (ran 1x)
// STATS: select-storage-format (ran 1x)
// STATS: fuse-ops (ran 1x)
