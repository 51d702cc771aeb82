"""Phi-3's and Falcon's attention inputs: q and k cut out of the fused ``[q | k | v]``
projection by a split and rotated, then scaled by ``head_dim ** -0.25``.

Each reader of the split takes its own copy (``splits-cloned``): the rotary kernels read
q's and k's rows through the split's and the head split's strided view, V's matmul its
columns, and no kernel runs the split (:mod:`tilegraph.lowering.analysis.rotary_views`).
The scale after the rotation (a multiply or division by a one-element constant, after
reshapes that keep the row order: Phi-3's unsqueeze of K) is the rotary kernel's tail.
Checked on the ``test`` preset (8 KiB UB: ragged row tiles, d / 2 odd) and 910B, fp32 and
fp16, NaN in the padding lanes: the rotated, scaled q and k bit-exact on both executors
and at the graph level against numpy; and the near misses that keep their kernels."""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import NAN, assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.rotary import rotate_half
from tilegraph.passes.statistics import collecting_statistics

BATCH, SEQ, HEADS, DIM = 1, 70, 3, 10
HIDDEN = HEADS * DIM


def _arrays(rng: np.random.Generator, dtype: str, *shapes: list[int]) -> list[np.ndarray]:
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _heads(b: GraphBuilder, piece):
    shape = b.constant(np.array([BATCH, SEQ, HEADS, DIM], np.int64))
    return b.op("transpose", b.op("reshape", piece, shape), perm=[0, 2, 1, 3])


def _split(b: GraphBuilder, qkv):
    sizes = b.constant(np.array([HIDDEN] * 3, np.int64))
    return b.op_results("split", qkv, sizes, axis=2)


def _rotary_expected(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, part: int) -> np.ndarray:
    rotated = x[..., :part] * cos + rotate_half(x[..., :part]) * sin
    return np.concatenate([rotated, x[..., part:]], axis=-1)


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("tail", ["mul", "div"])
@pytest.mark.parametrize("part", [DIM, 6])
def test_rotated_pieces_of_the_projection_are_views_with_their_scale(
    platform: str, dtype: str, tail: str, part: int
):
    """q: rotary then scale; k: rotary, unsqueeze, scale (Phi-3's spelling); v: a
    matmul. Three kernels, none of them the split, the scales inside the rotary kernels;
    a partial rotary (``part`` < d) scales its passed-through columns too."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    qkv = b.input("qkv", [BATCH, SEQ, 3 * HIDDEN], dtype)
    cos, sin = (b.input(n, [BATCH, 1, SEQ, part], dtype) for n in ("cos", "sin"))
    w = b.constant(rng.standard_normal((DIM, DIM)).astype(dtype))
    q, k, v = (_heads(b, piece) for piece in _split(b, qkv))
    scale = np.array(DIM**-0.25, dtype)
    partial = part if part < DIM else None  # (None: no attribute)
    q = b.op(
        tail, b.op("apply_rotary", q, cos, sin, rotary_dim=partial), b.constant(scale.reshape(1))
    )
    k = b.op("apply_rotary", k, cos, sin, rotary_dim=partial)
    k = b.op(tail, b.op("unsqueeze", k, b.constant(np.array([2], np.int64))), b.constant(scale))
    module = b.build(q, k, b.op("matmul", v, w))
    names = ("qkv", "cos", "sin")
    arrays = _arrays(rng, dtype, [BATCH, SEQ, 3 * HIDDEN], *[[BATCH, 1, SEQ, part]] * 2)
    with collecting_statistics() as stats:
        levels = run_levels(module, dict(zip(names, arrays, strict=True)), platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert len(kernels) == 3, [(k.ops, k.reason) for k in kernels]
    assert all("graph.split" in k.ops and k.unit != "host" for k in kernels)
    rotary = [k.ops for k in kernels if "graph.apply_rotary" in k.ops]
    assert len(rotary) == 2 and all(ops[-1] == f"graph.{tail}" for ops in rotary), rotary
    fused = stats.as_dict()["fuse-ops"]
    assert fused["splits-cloned"] == 2 and fused["rotary-tails-claimed"] == 2
    x, table_cos, table_sin = arrays
    pieces = x.reshape(BATCH, SEQ, 3, HEADS, DIM).transpose(2, 0, 3, 1, 4)
    op = np.multiply if tail == "mul" else np.divide
    expected = [op(_rotary_expected(p, table_cos, table_sin, part), scale) for p in pieces[:2]]
    expected[1] = expected[1][:, :, None]
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        for got, want in zip(outputs[:2], expected, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=level)
    if platform == "test":
        assert levels.splits(), "the test preset should split the kernels into row tiles"


def _near_miss(build, scale_input: bool = False) -> tuple[dict, list]:
    """Build ``build(b, qkv, cos, sin)``'s outputs (with a ``[1]`` input ``s`` when
    ``scale_input``), run it on 910B against the graph; fuse-ops' statistics and the
    kernels' op lists."""
    rng = np.random.default_rng(4)
    b = GraphBuilder()
    shapes = {"qkv": [BATCH, SEQ, 3 * HIDDEN], "cos": [BATCH, 1, SEQ, DIM]}
    shapes |= {"sin": shapes["cos"], **({"s": [1]} if scale_input else {})}
    values = {n: b.input(n, s) for n, s in shapes.items()}
    module = b.build(*build(b, *(values[n] for n in ("qkv", "cos", "sin")), values.get("s")))
    inputs = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    return stats.as_dict()["fuse-ops"], [k.ops for k in levels.tiled_kernels]


def test_a_split_with_a_piece_read_whole_stays_one_kernel():
    """q also feeds a ReLU (read whole, not as a view): the split is not copied and runs
    once; the rotary kernels read their pieces from its outputs through the head split."""

    def build(b: GraphBuilder, qkv, cos, sin, _):
        q, k, v = _split(b, qkv)
        rotated = [b.op("apply_rotary", _heads(b, p), cos, sin) for p in (q, k)]
        return [*rotated, b.op("relu", q), v]

    fused, kernels = _near_miss(build)
    assert "splits-cloned" not in fused
    assert fused["rotary-views-claimed"] == 2
    assert sum("graph.split" in ops for ops in kernels) == 1, kernels


@pytest.mark.parametrize("scale", ["per_column", "computed"])
def test_a_scale_that_is_not_a_one_element_constant_stays_out(scale: str):
    """A multiply by a ``[d]`` vector (a broadcast operand, no scale) or by a one-element
    tensor computed in the graph (not a constant) is no tail: it runs as a kernel of its
    own, the rotary kernel keeps its view."""

    def build(b: GraphBuilder, qkv, cos, sin, s):
        q, k, _ = _split(b, qkv)
        if scale == "per_column":
            factor = b.constant(np.linspace(0.5, 1.5, DIM, dtype=np.float32))
        else:
            factor = b.op("exp", s)
        rotated = [b.op("apply_rotary", _heads(b, p), cos, sin) for p in (q, k)]
        return [b.op("mul", rotated[0], factor), rotated[1]]

    fused, kernels = _near_miss(build, scale == "computed")
    assert "rotary-tails-claimed" not in fused
    assert fused["rotary-views-claimed"] == 2
    assert any(ops[-1] == "graph.mul" and "graph.apply_rotary" not in ops for ops in kernels)
