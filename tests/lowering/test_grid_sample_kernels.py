"""GridSample on the AI core (:mod:`tilegraph.lowering.conversion.tiling.grid_sample`), each
level against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`):
graph -> macro kernels -> tiled loops on both executors, on the ``test`` preset (ragged
position tiles, several channel blocks), every mode x padding x align_corners; again with
the NCHW input held as NC1HWC0 with NaN in its padding lanes; and the cases that stay on
the host say why."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_single_host_kernel,
    assert_tiled,
    assert_units,
    estimated_cycles,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType

GRID_SAMPLE = {"graph.grid_sample": VECTOR}


def grid_sample_case(x_shape, out_hw, spread: float = 1.3, **attrs):
    """A GridSample of an NCHW input at a grid ``[N, Ho, Wo, 2]`` of coordinates uniform in
    ``[-spread, spread]`` (beyond 1: outside the image, where the padding modes differ)."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input(x_shape, "NCHW")
        coords = g.rng.uniform(-spread, spread, (x_shape[0], *out_hw, 2)).astype(np.float32)
        grid = g.input([x_shape[0], *out_hw, 2])
        g.arrays[-1] = coords
        return [g.op("grid_sample", x, grid, **attrs)]

    return build


MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


def _module(build, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*build(g)), g.arrays


@pytest.mark.parametrize(
    ("mode", "padding", "align"), list(itertools.product(MODES, PADDINGS, (0, 1)))
)
def test_grid_sample_kernel(mode: str, padding: str, align: int):
    """Every level agrees, the sample runs on the vector unit, in several tiles (a ragged
    last one of 7 x 9 = 63 positions)."""
    build = grid_sample_case([2, 3, 5, 6], (7, 9), mode=mode, padding_mode=padding,
                             align_corners=align)  # fmt: skip
    module, inputs = _module(build)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=1e-5, atol=1e-5)
    assert_tiled(levels.module)
    assert_units(levels.tiled_kernels, GRID_SAMPLE, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the sample into tiles"


@pytest.mark.parametrize("mode", MODES)
def test_grid_sample_kernel_nan_padding(mode: str):
    """The NCHW input held as NC1HWC0 with NaN in its padding lanes: no NaN may leak."""
    build = grid_sample_case([2, 3, 5, 6], (4, 5), mode=mode, padding_mode="border")
    module, inputs = _module(build, padded=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=1e-5, atol=1e-5)
    assert_units(levels.tiled_kernels, GRID_SAMPLE, "tile-kernels{platform=test}")


EDGE_CASES = {
    # 7 planes of 3 x 4: 5 channels per plane load on the `test` preset (8 KiB of UB), the
    # last block ragged (2); positions far outside the image
    "channel_blocks": grid_sample_case(
        [1, 7, 3, 4], (3, 11), spread=2.5, mode="bilinear", padding_mode="reflection"
    ),  # fmt: skip
    # an axis of one pixel: with align_corners its borders coincide (reflection: span 0)
    "one_row_align_corners": grid_sample_case(
        [2, 2, 1, 6], (2, 3), spread=3.0, mode="bicubic", padding_mode="reflection", align_corners=1
    ),  # fmt: skip
    "one_row_nearest": grid_sample_case(
        [1, 2, 1, 5], (3, 3), mode="nearest", padding_mode="reflection"
    ),  # fmt: skip
    # the STN export's sample (bilinear, zeros, align_corners = 0, an output as large as
    # X) on ascend910b: tiles of 128 positions over the vector cores
    "stn_like_910b": grid_sample_case([2, 1, 28, 28], (28, 28), spread=1.1, mode="bilinear"),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_grid_sample_kernel_edges(name: str):
    platform = "ascend910b" if name.endswith("_910b") else "test"
    module, inputs = _module(EDGE_CASES[name])
    levels = run_levels(module, inputs, platform)
    assert_matches(levels, rtol=1e-5, atol=1e-5)
    assert_units(levels.tiled_kernels, GRID_SAMPLE, f"tile-kernels{{platform={platform}}}")
    if name in ("channel_blocks", "stn_like_910b"):
        assert levels.splits(), "several position tiles or channel blocks"


def _int_nearest(g: Graph) -> list[SSAValue]:
    x_type = TensorType([2, 3, 4, 5], element_type_of(np.dtype(np.int32)), "NCHW")
    x = g.b.block.insert_arg(x_type, 0)
    g.arrays.insert(0, g.rng.integers(-100, 100, (2, 3, 4, 5)).astype(np.int32))
    grid = g.input([2, 3, 7, 2])
    g.arrays[-1] = g.rng.uniform(-1.2, 1.2, (2, 3, 7, 2)).astype(np.float32)
    return [g.op("grid_sample", x, grid, mode="nearest", padding_mode="zeros")]


def test_a_nearest_grid_sample_copies_integers_exactly():
    module, inputs = _module(_int_nearest)
    levels = run_levels(module, inputs, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, GRID_SAMPLE, "tile-kernels{platform=test}")


@pytest.mark.parametrize("padding", PADDINGS)
def test_nan_in_the_grid_reads_inside_the_plane(padding: str):
    """A NaN coordinate gives an in-bounds position (no gather outside the plane), and
    under zeros padding the graph level's 0."""

    def build(g: Graph) -> list[SSAValue]:
        (out,) = grid_sample_case([1, 2, 4, 5], (3, 4), mode="bilinear", padding_mode=padding)(g)
        g.arrays[-1][0, 1, 2, 0] = np.nan
        g.arrays[-1][0, 2, 0, 1] = np.nan
        return [out]

    module, inputs = _module(build)
    levels = run_levels(module, inputs, "test")
    assert_units(levels.tiled_kernels, GRID_SAMPLE, "tile-kernels{platform=test}")
    if padding == "zeros":
        assert_matches(levels, rtol=1e-5, atol=1e-5)
        assert levels.outputs["fast"][0][0, :, 1, 2].tolist() == [0.0, 0.0]


def _volumetric(g: Graph) -> SSAValue:
    x = g.input([1, 2, 3, 4, 5], "NCDHW")
    grid = g.input([1, 2, 2, 2, 3])
    return g.op("grid_sample", x, grid)


def _large_plane(g: Graph) -> SSAValue:
    x = g.input([1, 1, 40, 60], "NCHW")  # 9.6 KB: more than the `test` preset's UB
    grid = g.input([1, 2, 2, 2])
    return g.op("grid_sample", x, grid)


def _int64_nearest(g: Graph) -> SSAValue:
    x_type = TensorType([1, 2, 3, 4], element_type_of(np.dtype(np.int64)), "NCHW")
    x = g.b.block.insert_arg(x_type, 0)
    g.arrays.insert(0, np.arange(24, dtype=np.int64).reshape(1, 2, 3, 4))
    grid = g.input([1, 2, 2, 2])
    return g.op("grid_sample", x, grid, mode="nearest")


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (_volumetric, "volumetric"),
        (_int64_nearest, "a grid_sample of i64 (the vector gather takes 2- and 4-byte"),
        (_large_plane, "input plane of 40 x 60 that does not fit UB"),
    ],
)
def test_grid_samples_without_a_kernel_stay_on_the_host_with_their_reason(build, reason):
    assert_single_host_kernel(build, reason)


def test_the_cost_grows_with_the_taps_and_the_positions():
    """Cubic reads 16 elements per output, linear 4, nearest 1; twice the positions cost
    more."""

    def cost(mode: str, out_hw=(8, 8)) -> float:
        return estimated_cycles(grid_sample_case([1, 2, 6, 6], out_hw, mode=mode))

    nearest, linear, cubic = (cost(m) for m in MODES[1::-1] + MODES[2:])
    assert 0 < nearest < linear < cubic
    assert cost("bilinear", (16, 8)) > linear


def _grid_sample_node_cases():
    from tests.conformance.node_suite import case_op, node_cases

    return [c for c in node_cases() if case_op(c) == "GridSample"]


@pytest.mark.parametrize("case", _grid_sample_node_cases(), ids=lambda c: c.name)
def test_onnx_node_cases_on_tiles(case):
    """ONNX's GridSample node cases (opsets 16 and 20: every mode, padding and
    align_corners, 4-D and volumetric) compiled for ascend910b: a 4-D sample runs on the
    vector unit, both tile executors give the expected outputs."""
    import tilegraph
    from tests.conformance.node_suite import case_model, compare_outputs

    model = case_model(case)
    volumetric = len(model.graph.input[0].type.tensor_type.shape.dim) == 5
    for executor in ("fast", "interpret"):
        compiled = tilegraph.compile(model, platform="ascend910b", executor=executor)
        for inputs, expected in case.data_sets or ():
            outputs = compiled(*inputs)
            problem = compare_outputs(outputs, expected, rtol=case.rtol, atol=case.atol)
            assert not problem, f"{executor}: {problem}"
        (kernel,) = [k for k in compiled.kernels if "graph.grid_sample" in k.ops]
        assert kernel.unit == ("host" if volumetric else "vector"), kernel.reason
