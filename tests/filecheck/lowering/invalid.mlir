// Errors of the tile lowering from the command line: one located message naming what is
// wrong, exit code 1, no traceback.

// A symbolic dim cannot be lowered (tile buffers need static shapes): the error names the
// value, whether the graph is lowered as written or after O2 (which fuses the two ops).
// RUN: not tilegraph-opt %s -p lower-graph-to-kernels 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not tilegraph-opt %s -p 'O2,lower-graph-to-kernels' 2>&1 | filecheck %s --check-prefix=SYMBOLIC
// RUN: not tilegraph-opt %s -p 'O2,lower-graph-to-kernels' 2>&1 | wc -l | filecheck %s --check-prefix=ONE-LINE
// ONE-LINE: {{^ *1$}}
// SYMBOLIC: error: pass 'lower-graph-to-kernels': %x: tile lowering needs static shapes, got !layout.tensor<[N, 4], f32>
// SYMBOLIC-NOT: {{error|Traceback|builtin.module}}

// Bad options of tile-kernels are reported before anything runs.
// RUN: not tilegraph-opt %s -p 'tile-kernels{platform=nope}' 2>&1 | filecheck %s --check-prefix=PLATFORM
// PLATFORM: error: pass 'tile-kernels': unknown platform 'nope'; valid platforms: {{.*}}ascend910b{{.*}}test
// PLATFORM-NOT: {{error|Traceback|builtin.module}}
// RUN: not tilegraph-opt %s -p 'lower-graph-to-kernels,tile-kernels{platform=nope}' 2>&1 | filecheck %s --check-prefix=PLATFORM
// RUN: not tilegraph-opt %s -p 'tile-kernels{precision=fp8}' 2>&1 | filecheck %s --check-prefix=PRECISION
// PRECISION: error: pass 'tile-kernels': precision must be one of origin, fp16, bf16, int8, must_keep_origin_dtype, {{.*}}, got 'fp8'
// PRECISION-NOT: {{error|Traceback|builtin.module}}

func.func @dynamic(%x: !layout.tensor<[N, 4], f32>) -> !layout.tensor<[N, 4], f32> {
  %y = graph.relu %x : !layout.tensor<[N, 4], f32>
  %z = graph.exp %y : !layout.tensor<[N, 4], f32>
  func.return %z : !layout.tensor<[N, 4], f32>
}
