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
import pytest

from tilegraph.builder import GraphBuilder
from tilegraph.lowering.conversion.tiling.concat import within_region
from tilegraph.lowering.conversion.tiling.elementwise import TilePlan
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime.reference import run_reference
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.runtime.tiles import run_tiles


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


def test_store_5hd_drops_the_channels_past_its_region():
    """A 16-lane tile stored at channel 16 with channel_end 20 writes channels 16..19 and
    leaves 20.. (the next region's) alone."""
    from xdsl.dialects.builtin import IndexType, f32
    from xdsl.utils.test_value import create_ssa_value

    from tilegraph.dialects.tile import Store5hdOp, scoped_memref

    src = create_ssa_value(scoped_memref([1, 1, 2, 3, 16], f32, "UB"))
    dst = create_ssa_value(scoped_memref([1, 32, 2, 3], f32, "GM"))
    offsets = [create_ssa_value(IndexType()) for _ in range(4)]
    tile = np.arange(96, dtype=np.float32).reshape(1, 1, 2, 3, 16)
    planar = tile.transpose(0, 1, 4, 2, 3).reshape(1, 16, 2, 3)
    for end, written in ((None, 16), (20, 4)):
        out = np.full((1, 32, 2, 3), -1.0, np.float32)
        kernel_of(Store5hdOp(src, dst, offsets, end))(tile, out, 0, 16, 0, 0)
        np.testing.assert_array_equal(out[:, 16 : 16 + written], planar[:, :written])
        assert (out[:, :16] == -1).all() and (out[:, 16 + written :] == -1).all()


def _conv_outputs(b: GraphBuilder, x, channels, rng) -> list:
    """1x1 convs of ``x`` (16 channels): their outputs are stored NC1HWC0."""
    return [
        b.op("conv2d", x, b.constant(rng.standard_normal((c, 16, 1, 1)).astype(np.float32), "NCHW"))
        for c in channels
    ]


def _tiles_match_the_reference(module, data, atol: float) -> None:
    """O2, then both executors on the lowered module against the graph level."""
    ctx = make_context()
    run_pipeline("O2", ctx, module)
    graph = module.clone()
    run_pipeline(lowering_pipeline(), ctx, module)
    (want,) = run_reference(graph, data)
    for executor in ("interpret", "fast"):
        (got,) = run_tiles(module, data, executor=executor)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol, err_msg=executor)


def test_regions_stopping_inside_a_c0_block_keep_the_next_regions_channels():
    """Convs give 24 and 40 channels in NC1HWC0; their concat is NCHW for the next conv.
    The first region's second C0 block holds 8 channels and 8 padding lanes; stored whole,
    the lanes landed on channels 24..31. The second region's nest is shared out over the
    blocks of the launch and the first's is not, so every block rewrote the lanes after
    block 0 had stored channels 24..31: the interpreter (which runs every block) was wrong by
    a third of the output's scale, the fast executor (block 0 of 1) right."""
    rng = np.random.default_rng(3)
    b = GraphBuilder("main")
    x = b.input("x", [1, 16, 28, 28], "float32", "NCHW")
    w = b.constant(rng.standard_normal((16, 64, 1, 1)).astype(np.float32), "NCHW")
    joined = b.op("concat", *_conv_outputs(b, x, (24, 40), rng), axis=1)
    module = b.build(b.op("conv2d", joined, w))
    data = [rng.standard_normal((1, 16, 28, 28)).astype(np.float32)]
    _tiles_match_the_reference(module, data, atol=1e-4)


@pytest.mark.parametrize("axis", [0, 2, 3])
def test_5hd_regions_concatenated_along_n_h_or_w(axis):
    """Conv outputs (NC1HWC0) concatenated along N, H or W into an NCHW output, a sigmoid
    after. The regions once shifted along C1 — the axis of a concat along C — whatever the
    concat's axis: both executors stored the regions over each other, wrong by more than
    the outputs' range."""
    rng = np.random.default_rng(4)
    b = GraphBuilder("main")
    x = b.input("x", [1, 16, 12, 10], "float32", "NCHW")
    joined = b.op("concat", *_conv_outputs(b, x, (24, 24), rng), axis=axis)
    module = b.build(b.op("sigmoid", joined))
    data = [rng.standard_normal((1, 16, 12, 10)).astype(np.float32)]
    _tiles_match_the_reference(module, data, atol=1e-6)
