"""Chains of reshapes and transposes as one permute kernel (``tiling/view_chains.py``):
Hiera's unroll (several transposes between reshapes that split and merge axes), CLAP's
window partition (``transpose, reshape, transpose``), ESPCN's pixel shuffle after a
convolution (``trans_data, reshape, transpose, reshape``, C in one C0 block or filling
its blocks) and PaddleOCR's CRNN head in NWCH order. Each is checked at every level
(graph, both tile executors) with NaN in the padding lanes, and is one vector kernel where
it was split into several; the factorisation itself is checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_nhwc_out import assert_transdata_split_apart, assert_zoo_lowers_whole
from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.lowering.conversion.tiling.view_chains import Atoms

Step = tuple[str, tuple[int, ...]]


def _numpy_chain(x: np.ndarray, steps: list[Step]) -> np.ndarray:
    for kind, arg in steps:
        if kind == "slice":  # (axis, start, stop, step)
            axis, start, stop, step = arg
            x = x[(slice(None),) * axis + (slice(start, stop, step),)]
        else:
            x = x.reshape(arg) if kind == "reshape" else x.transpose(arg)
    return x


def _atoms_of(shape: tuple[int, ...], steps: list[Step]) -> Atoms:
    """``steps`` applied to the atoms of a row-major ``shape`` (each must be a view)."""
    atoms, x = Atoms.row_major(shape), np.zeros(shape)
    for kind, arg in steps:
        if kind == "reshape":
            assert atoms.reshape(arg) is None
        elif kind == "transpose":
            atoms.transpose(arg)
        else:
            axis, start, stop, step = arg
            length = len(range(*slice(start, stop, step).indices(x.shape[axis])))
            assert atoms.slice(axis, start, length, step) is None
        x = _numpy_chain(x, [(kind, arg)])
    return atoms


HIERA = [  # [2, 4*2, 6*2, 3] unrolled twice (Hiera's `unroll`), then flattened
    ("reshape", (2, 4, 2, 6, 2, 3)),
    ("transpose", (2, 4, 0, 1, 3, 5)),
    ("reshape", (8, 4, 6, 3)),
    ("reshape", (8, 2, 2, 3, 2, 3)),
    ("transpose", (2, 4, 0, 1, 3, 5)),
    ("reshape", (32, 2, 3, 3)),
    ("transpose", (0, 3, 1, 2)),
    ("reshape", (32, 18)),
]
CLAP = [("transpose", (0, 2, 1, 3)), ("reshape", (2, 3, 4, 5, 6)), ("transpose", (0, 2, 1, 4, 3))]
SHUFFLE = [
    ("reshape", (2, 1, 3, 3, 4, 5)),
    ("transpose", (0, 1, 4, 2, 5, 3)),
    ("reshape", (2, 1, 12, 15)),
]
CLAP_RAGGED = [  # 75 windows: tiles of 17 on the test preset, the last one 7
    ("transpose", (0, 2, 1, 3)),
    ("reshape", (5, 3, 5, 5, 6)),
    ("transpose", (0, 2, 1, 4, 3)),
]
TIMESFORMER = [  # the class token dropped, then frames and patches swapped
    ("slice", (1, 1, 13, 1)),
    ("reshape", (2, 3, 4, 5)),
    ("transpose", (0, 2, 1, 3)),
]
STRIDED = [  # a slice of a merged axis at whole inner runs, and a step on a moved axis
    ("transpose", (1, 0, 2)),
    ("reshape", (12, 5)),
    ("slice", (0, 4, 12, 1)),
    ("slice", (1, 0, 5, 2)),
]


@pytest.mark.parametrize(
    ("shape", "steps"),
    [
        ((2, 8, 12, 3), HIERA),
        ((2, 4, 3, 30), CLAP),
        ((2, 9, 4, 5), SHUFFLE),
        ((2, 13, 5), TIMESFORMER),
        ((4, 3, 5), STRIDED),
    ],
)
def test_the_factorised_permute_is_the_chain(shape, steps):
    """The permute of the coarse view, applied to an index array, reads the elements the
    chain's numpy ops give, and merges every run contiguous on both sides."""
    x = np.arange(int(np.prod(shape))).reshape(shape)
    found = _atoms_of(shape, steps).permute()
    view = np.lib.stride_tricks.as_strided(
        x.ravel()[found.source.offset :],
        found.source.shape,
        [s * x.itemsize for s in found.source.strides],
    )
    expected = _numpy_chain(x, steps)
    assert np.array_equal(view.transpose(found.perm).ravel(), expected.ravel())
    assert all(p + 1 != q for p, q in zip(found.perm, found.perm[1:], strict=False)), found


def test_a_slice_inside_the_inner_runs_of_a_merged_axis_is_refused():
    """[4, 3] transposed and merged to [12]: rows 1..11 of it start inside a run of 4."""
    atoms = _atoms_of((4, 3), [("transpose", (1, 0)), ("reshape", (12,))])
    reason = atoms.slice(0, 1, 10, 1)
    assert reason is not None and "merged axis" in reason


def test_a_reshape_cutting_a_moved_axis_is_refused():
    """[2, 6] transposed to [6, 2] and reshaped to [4, 3]: 6 is cut into 4 (no divisor),
    no view of the source; the reason names the sizes."""
    atoms = Atoms.row_major((2, 6))
    atoms.transpose((1, 0))
    reason = atoms.reshape((4, 3))
    assert reason is not None and "6" in reason and "4" in reason


def _slice(b: GraphBuilder, y, axis: int, start: int, stop: int, step: int = 1):
    bounds = [b.constant(np.array([v], np.int64)) for v in (start, stop, axis, step)]
    return b.op("slice", y, *bounds)


def _plain_chain(shape: list[int], steps: list[Step]):
    b = GraphBuilder("main")
    x = b.input("x", shape)
    y = x
    for kind, arg in steps:
        if kind == "reshape":
            y = b.op("reshape", y, b.constant(np.array(arg, np.int64)))
        elif kind == "slice":
            y = _slice(b, y, *arg)
        else:
            y = b.op("transpose", y, perm=list(arg))
    module = b.build(y)
    data = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    return module, {"x": data}


def _one_chain_kernel(module, inputs, platform: str, first: str, op="graph.transpose") -> None:
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    chains = [k for k in levels.tiled_kernels if op in k.ops]
    assert len(chains) == 1, [(k.ops, k.reason) for k in levels.tiled_kernels]
    assert chains[0].ops[0] == first and chains[0].unit == "vector", chains
    assert not [k for k in levels.tiled_kernels if k.unit == "host"]


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize(
    ("shape", "steps"),
    [
        ([2, 8, 12, 3], HIERA),
        ([2, 4, 3, 30], CLAP),
        ([5, 5, 3, 30], CLAP_RAGGED),
        ([2, 13, 5], TIMESFORMER),
    ],
    ids=["hiera", "clap", "clap-ragged", "timesformer"],
)
def test_reshape_transpose_chains_are_one_kernel(shape, steps, platform):
    module, inputs = _plain_chain(shape, steps)
    _one_chain_kernel(module, inputs, platform, steps[0][0].join(["graph.", ""]))


def _conv_then(kind: str, channels: int, height: int, width: int):
    """conv (1x1, 8 -> ``channels``) -> relu, then ``kind``: a pixel shuffle (by 3 when
    ``channels`` is a multiple of 9, else by 4), a trim of the last frame or
    CRNN's NWCH ``transpose(0, 3, 1, 2), reshape [N, W, C·H]``."""
    rng = np.random.default_rng(31)
    batch = 2
    b = GraphBuilder("main")
    x = b.input("x", [batch, 8, height, width], "float32", "NCHW")
    w = (rng.standard_normal((channels, 8, 1, 1)) / 3).astype(np.float32)
    feature = b.op("relu", b.op("conv2d", x, b.constant(w, "NCHW")))
    if kind == "shuffle":
        r = 3 if channels % 9 == 0 else 4
        c = channels // (r * r)
        split = [batch, c, r, r, height, width]
        y = b.op("reshape", feature, b.constant(np.array(split, np.int64)))
        y = b.op("transpose", y, perm=[0, 1, 4, 2, 5, 3])
        shape = [batch, c, height * r, width * r]
        y = b.op("reshape", y, b.constant(np.array(shape, np.int64)))
    elif kind == "trim":  # SEW's feature extractor: squeeze(2), the last frame dropped
        y = b.op("squeeze", feature, b.constant(np.array([2], np.int64)))
        y = _slice(b, y, 2, 0, width - 1)
    else:
        y = b.op("transpose", feature, perm=[0, 3, 1, 2])
        shape = [batch, width, channels * height]
        y = b.op("reshape", y, b.constant(np.array(shape, np.int64)))
    # a trim is the output (an elementwise consumer would read it as its input view)
    module = b.build(y if kind == "trim" else b.op("exp", y))
    return module, {"x": rng.standard_normal((batch, 8, height, width)).astype(np.float32)}


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize(
    ("kind", "channels", "height", "width"),
    [
        ("shuffle", 9, 5, 7),  # ESPCN: 9 channels in one block, padding lanes never read
        ("shuffle", 32, 3, 4),  # r = 4, C fills its C0 blocks: C1 and C0 are atoms
        ("shuffle", 9, 30, 41),  # more than one UB tile on the test preset: ragged
        ("crnn", 32, 2, 13),  # NWCH, H > 1: not channels-last
        ("trim", 9, 1, 37),
        ("trim", 32, 1, 37),
    ],
)
def test_chains_after_a_transdata_are_one_kernel(kind, channels, height, width, platform):
    module, inputs = _conv_then(kind, channels, height, width)
    last = "graph.slice" if kind == "trim" else "graph.transpose"
    _one_chain_kernel(module, inputs, platform, "layout.trans_data", last)


def test_channels_ending_inside_a_later_block_split_as_before():
    """20 channels in two C0 blocks of 16 (the second half padding) are no strided axis:
    the chain is refused and split (the TransData apart); the outputs still agree."""
    module, inputs = _conv_then("crnn", 20, 2, 13)
    assert_transdata_split_apart(module, inputs, "ascend910b")


@pytest.mark.parametrize(
    ("model", "shape"), [("espcn", "image=1,1,24,30"), ("pd_crnn", "x=1,3,16,40")]
)
def test_zoo_lowering_section_has_no_view_chain_split(model, shape, tmp_path):
    """The zoo's ESPCN (its pixel shuffle after the last convolution) and PaddleOCR's CRNN
    (its NWCH head) lower every fused group whole: their one split group was that chain
    (tilegraph-run's ``lowering`` section), and the outputs still match onnxruntime."""
    assert_zoo_lowers_whole(model, shape, tmp_path)
