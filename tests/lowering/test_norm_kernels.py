"""Instance norm and group norm on the vector unit (layer norm's program over the spatial
axes, or over each group's channels and pixels; scale and bias per channel, or per group),
each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`): graph -> macro kernels -> tiled loops on
both executors, on the ``test`` preset (8 KiB UB: several channel tiles, a ragged last
one; spatial axes too long for one tile are chunked, with a ragged last chunk), with NaN
in padding lanes (``pad_value``), in fp32 and fp16; NCHW inputs held as NC1HWC0 (after a
convolution) normalise each C0 lane on its own. A group norm tile holds whole groups (moved
by flat copies). The cycle model costs the kernels."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import SSAValue

from tests.lowering.test_reduction_chunks import TOLERANCES
from tests.lowering.test_tile_differential import (
    CUBE,
    NAN,
    VECTOR,
    Graph,
    Levels,
    assert_matches,
    assert_units,
    estimated_cycles,
    run_levels,
)
from tilegraph.dialects.tile import memref_shape
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR


def _check(levels: Levels, units: dict[str, str], dtype: str, min_atol: float = 0.0) -> None:
    """Every level agrees (no NaN from padding lanes), on the given units, in tiles."""
    assert_units(levels.tiled_kernels, units, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the kernel into tiles"
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        for i, out in enumerate(outputs):
            assert not np.isnan(out).any(), f"{level} output {i}: NaN"
    rtol, atol = TOLERANCES[dtype]
    assert_matches(levels, rtol, max(atol, min_atol))


def instance_norm(shape: Sequence[int], fmt: str = "ND") -> Callable[[Graph], list[SSAValue]]:
    def build(g: Graph) -> list[SSAValue]:
        channels = [shape[1]]
        x = g.input(shape, fmt)
        scale, bias = g.const(channels, low=0.5), g.const(channels)
        return [g.op("instance_norm", x, scale, bias, epsilon=1e-5)]

    return build


def instance_norm_after_conv(height: int, width: int) -> Callable[[Graph], list[SSAValue]]:
    """After a convolution the input is NC1HWC0 (20 channels: 4 padding lanes of C0)."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input([2, 3, height, width], "NCHW")
        y = g.op("conv2d", x, g.const([20, 3, 3, 3]), pads=[1, 1, 1, 1])
        return [g.op("instance_norm", y, g.const([20], low=0.5), g.const([20]), epsilon=1e-5)]

    return build


CASES: dict[str, tuple[Callable[[Graph], list[SSAValue]], bool]] = {
    # (build, chunked): whole spatial axes per tile, 37 channels in tiles of a few
    "wav2vec2_like_1d": (instance_norm([2, 37, 79]), False),
    "nchw_2d": (instance_norm([2, 13, 7, 9], "NCHW"), False),
    # 1500 x 4 B per (n, c) does not fit the test preset's tiles: chunked, ragged last chunk
    "long_1d_chunked": (instance_norm([1, 3, 1500]), True),
    "long_2d_chunked": (instance_norm([2, 2, 30, 45], "NCHW"), True),
    "after_conv_5hd": (instance_norm_after_conv(3, 4), False),
    "after_conv_5hd_chunked": (instance_norm_after_conv(9, 11), True),
}


def _norm_kernels(module) -> list[func.FuncOp]:
    return [
        fn
        for fn in module.ops
        if isinstance(fn, func.FuncOp)
        and KERNEL_ATTR in fn.attributes
        and "graph.instance_norm" in getattr(fn.attributes.get("tile.ops"), "data", "")
    ]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_instance_norm_every_level_agrees(name: str, dtype: str):
    build, chunked = CASES[name]
    g = Graph(padded=True, dtype=dtype)
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    units = {"graph.instance_norm": VECTOR}
    if name.startswith("after_conv"):
        units["graph.conv2d"] = CUBE
    _check(levels, units, dtype)
    (kernel,) = _norm_kernels(levels.module)
    accumulates = any(op.name == "tile.vdup" for op in kernel.walk())
    assert accumulates == chunked, "chunked kernels start their accumulators with vdup"


def test_instance_norm_after_a_convolution_runs_on_nc1hwc0():
    g = Graph(padded=True)
    module = g.b.build(*instance_norm_after_conv(3, 4)(g))
    run_levels(module, g.arrays, "test", pad_value=NAN)
    (kernel,) = _norm_kernels(module)
    loads = [op for op in kernel.walk() if op.name == "tile.copy"]
    assert any(len(memref_shape(op.operands[0])) == 5 for op in loads)


def test_instance_norm_cost_grows_with_the_spatial_size():
    """The cycle model costs the kernel from its tile ops: > 0, more for more elements."""
    small = estimated_cycles(instance_norm([1, 32, 100]))
    assert 0 < small < estimated_cycles(instance_norm([1, 32, 1600]))


def group_norm(
    shape: Sequence[int], groups: int, per_group: bool = False
) -> Callable[[Graph], list[SSAValue]]:
    def build(g: Graph) -> list[SSAValue]:
        params = [groups if per_group else shape[1]]
        x = g.input(shape, "NCHW" if len(shape) == 4 else "ND")
        scale, bias = g.const(params, low=0.5), g.const(params)
        return [g.op("group_norm", x, scale, bias, num_groups=groups, epsilon=1e-5)]

    return build


GROUP_CASES = {
    # 4 groups of 3 channels x 70 pixels (840 B): tiles of 2 groups of one image
    "groups_of_one_image": group_norm([2, 12, 7, 10], 4),
    # small groups: several whole images per tile, a ragged last one (5 images)
    "images_per_tile": group_norm([5, 6, 5, 6], 3),
    "per_group_params": group_norm([3, 8, 21], 2, per_group=True),
    "one_group_per_channel": group_norm([2, 6, 50], 6),
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(GROUP_CASES))
def test_group_norm_every_level_agrees(name: str, dtype: str):
    _check(_group_levels(GROUP_CASES[name], dtype), {"graph.group_norm": VECTOR}, dtype)


def _group_levels(build: Callable[[Graph], list[SSAValue]], dtype: str) -> Levels:
    g = Graph(padded=True, dtype=dtype)
    module = g.b.build(*build(g))
    return run_levels(module, g.arrays, "test", pad_value=NAN)


GROUPS_LARGER_THAN_UB = {
    # a group of 2 channels x 1600 pixels (12.8 KiB f32) over the `test` preset's 8 KiB UB:
    # chunks of one channel's pixels, its scale and bias per chunk
    "channels_of_a_group": group_norm([1, 4, 40, 40], 2),
    # ragged chunks of a ragged channel (1 channel x 3001 pixels); per-group parameters
    "pixels_of_a_channel": group_norm([2, 2, 3001], 2, per_group=True),
}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", list(GROUPS_LARGER_THAN_UB))
def test_a_group_larger_than_ub_runs_in_chunks(name: str, dtype: str):
    """A group over UB: layer norm's three chunked passes over a [N, G, Cg, S] GM view."""
    levels = _group_levels(GROUPS_LARGER_THAN_UB[name], dtype)
    # f32: the tiles sum a group of 3200 elements in f32 (sequential chunk sums), the
    # macro level in numpy's pairwise order: ~n·eps of the mean apart
    _check(levels, {"graph.group_norm": VECTOR}, dtype, min_atol=1e-4)
    views = [op for op in levels.module.walk() if op.name == "tile.strided_view"]
    assert len(views) == 4, "x, the output, scale and bias viewed as [N, G, Cg, S]"


def test_group_norm_cost_grows_with_the_size():
    small = estimated_cycles(group_norm([2, 8, 10], 4))
    assert 0 < small < estimated_cycles(group_norm([2, 8, 100], 4))
