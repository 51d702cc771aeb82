"""A concat kernel's tiles stay inside their region of the output.

inception_v1's first concat (64 + 128 + 32 + 32 channels of 27 x 27) once tiled its inputs
by 33 channels: the last tile of the 64-channel region stored 33 channels from offset 33,
2 of them into the next region. In program order the next region overwrote them; run as a
multi-core launch (the interpreter runs every block, each block runs the nests it does
not share out in full) a later block's copy of the first nest overwrote what an earlier
block had written to the second region. Found by the slow conformance test
``test_light_model_on_tiles_matches_onnxruntime[inception_v1-interpret]``.
"""

from __future__ import annotations

import numpy as np

from tilegraph.builder import GraphBuilder
from tilegraph.lowering.tiling.concat import within_region
from tilegraph.lowering.tiling.elementwise import TilePlan
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime.compiled import lowering_pipeline
from tilegraph.runtime.tiles import run_tiles
from tilegraph.tools.context import make_context


def test_tiles_along_the_concat_axis_divide_the_region():
    assert within_region(TilePlan((1, 64, 27, 27), 1, 33), 1).size == 32
    assert within_region(TilePlan((1, 67, 27, 27), 1, 33), 1).size == 1  # 67 is prime
    assert within_region(TilePlan((1, 64, 27, 27), 2, 5), 1).size == 5  # split elsewhere
    assert within_region(TilePlan((1, 128, 27, 27), 1, 32), 1).size == 32


def test_multi_block_concat_matches_numpy():
    rng = np.random.default_rng(3)
    channels = (64, 128, 32, 32)
    b = GraphBuilder()
    xs = [b.input(f"x{i}", [1, c, 27, 27], "float32", "NCHW") for i, c in enumerate(channels)]
    module = b.build(b.op("concat", *xs, axis=1))
    ctx = make_context()
    run_pipeline("O2", ctx, module)
    run_pipeline(lowering_pipeline(), ctx, module)
    data = [rng.standard_normal((1, c, 27, 27)).astype(np.float32) for c in channels]
    for executor in ("interpret", "fast"):
        (got,) = run_tiles(module, data, executor=executor)
        np.testing.assert_array_equal(got, np.concatenate(data, axis=1), err_msg=executor)
