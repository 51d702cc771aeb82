"""Attention's head split / merge as strided views of the matmuls' operands and results.

The attention core (Q·Kᵀ, scale, softmax, ·V) between a projected ``[B, S, H·D]`` input
and the merged ``[B, S, H·D]`` output, built with the graph builder: the reshape /
transpose chains join the matmuls' kernels (``fuse-ops``) and become ``tile.strided_view``
s of the kernels' GM arguments (``tiling/matmul_views.py``). Checked: no kernel of its own
for any reshape or transpose, both executors against the graph with NaN in the padding
lanes on the ``test`` and ``ascend910b`` presets (ragged S, D not a multiple of 16, one
head) and on ``ascend310p`` (results through UB), the view algebra, and the GM runs the
cycle model costs.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f16, f32

from tests.dialects.test_tile_ops import buf, idx
from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.tile import Nd2NzOp, StridedViewOp, scoped_memref
from tilegraph.dialects.tile.base import contiguous_run
from tilegraph.dialects.tile.workspace import strided_memref
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def _attention(batch: int, seq: int, heads: int, dim: int, projections: bool = True):
    """(module, inputs): BERT's attention on ``x`` [B, S, H·D]: Q, K, V projections with
    bias (optional), head split, Q·Kᵀ / sqrt(D), softmax, ·V, head merge."""
    rng = np.random.default_rng(0)
    hidden = heads * dim
    b = GraphBuilder()
    x = b.input("x", [batch, seq, hidden]) if projections else None

    def project(name: str):
        if not projections:
            return b.input(name, [batch, seq, hidden])
        w, bias = b.constant(_weights(rng, hidden, hidden)), b.constant(_weights(rng, hidden))
        return b.op("add", b.op("matmul", x, w), bias)

    split = b.constant(np.array([batch, seq, heads, dim], np.int64))
    q, k, v = (b.op("reshape", project(n), split) for n in ("q", "k", "v"))
    q = b.op("transpose", q, perm=[0, 2, 1, 3])
    k = b.op("transpose", k, perm=[0, 2, 3, 1])
    v = b.op("transpose", v, perm=[0, 2, 1, 3])
    scores = b.op("div", b.op("matmul", q, k), b.constant(np.float32(np.sqrt(dim))))
    out = b.op("matmul", b.op("softmax", scores, axis=-1), v)
    merged = b.op("transpose", out, perm=[0, 2, 1, 3])
    merged = b.op("reshape", merged, b.constant(np.array([batch, seq, hidden], np.int64)))
    module = b.build(merged)
    names = ["x"] if projections else ["q", "k", "v"]
    inputs = {n: rng.standard_normal((batch, seq, hidden)).astype(np.float32) for n in names}
    return module, inputs


CASES = {
    "ragged": (2, 20, 4, 12),  # S and D ragged against the 16-wide fractals
    "one_head": (1, 20, 1, 24),
    "aligned": (1, 32, 2, 32),
}


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_attention_views_nan_padding(platform: str, case: str):
    """Both executors match the graph with NaN in every padding lane. No reshape or
    transpose runs as a kernel: the matmuls read Q, K, V and write the merged result
    through views (on both decoupled presets the attention core is the flash mix kernel,
    ``tiling/attention.py``, which reads them as the matmuls do)."""
    module, inputs = _attention(*CASES[case])
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    alone = [k.ops for k in kernels if set(k.ops) <= {"graph.reshape", "graph.transpose"}]
    views = [op for op in module.walk() if isinstance(op, StridedViewOp)]
    assert not alone, alone
    assert len(views) >= 4  # Q, K, V read, the merged result written
    assert any("graph.softmax" in k.ops and k.unit == "mix" for k in kernels)


def test_attention_views_through_ub_on_310p():
    """310P has no L0C -> GM path: the merged result's tiles go fixpipe -> UB, then a
    ``tile.copy`` UB -> GM into the view; NaN in the padding lanes still leaks nowhere."""
    module, inputs = _attention(*CASES["ragged"])
    levels = run_levels(module, inputs, "ascend310p", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert any(isinstance(op, StridedViewOp) for op in module.walk())


def test_attention_core_without_projections():
    """Kernel inputs viewed directly: the chains start at the function's arguments."""
    module, inputs = _attention(1, 20, 4, 12, projections=False)
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert len(levels.tiled_kernels) == 1  # Q·Kᵀ, the scale, softmax, ·V: the flash kernel
    assert stats.as_dict()["fuse-ops"]["views-absorbed"] == 8  # 3 x (reshape, transpose) + 2
    assert stats.as_dict()["fuse-ops"]["attention-claimed"] == 1


def test_view_algebra():
    x = StridedView.row_major((2, 5, 12))
    split = x.reshape((2, 5, 3, 4))
    assert split is not None and split == StridedView((2, 5, 3, 4), (60, 12, 4, 1))
    heads = split.transpose((0, 2, 1, 3))
    assert heads.strides == (60, 4, 12, 1)
    assert heads.transpose((0, 1, 3, 2)).swap_last() == heads
    assert heads.reshape((6, 5, 4)) is None  # (batch, head) do not merge without a copy
    assert x.reshape((10, 12)) == StridedView((10, 12), (12, 1))
    merged = StridedView.row_major((2, 5, 12)).reshape((2, 5, 3, 4))
    assert merged is not None and merged.transpose((0, 2, 1, 3)).extent() == 120


def test_gm_runs_of_a_head_view_are_head_rows():
    """A (rows, D) window of the head view ``X[b, s, h·D + d]`` is made of D-element runs:
    a D = 64 fp16 row is a 128 B burst, misaligned against 910B's 512 B, and nd2nz costs
    more through the view than from a row-major buffer of the same shape."""
    assert contiguous_run((16, 64), (1, 12, 128, 64), 2, (98304, 64, 768, 1)) == 128
    assert contiguous_run((16, 64), (1, 12, 128, 64), 2) == 16 * 64 * 2
    assert contiguous_run((16, 16), (4, 8), 4, (1, 4)) == 4  # column-major: one element
    hw = hardware_preset("ascend910b")
    source = scoped_memref([1, 128, 768], f16, "GM")
    plain = scoped_memref([1, 12, 128, 64], f16, "GM")
    view = strided_memref(source, (1, 12, 128, 64), (98304, 64, 768, 1))

    def nd2nz(memref) -> Nd2NzOp:
        return Nd2NzOp(_value(memref), idx(4), buf((4, 8, 16, 16), "L1", f16))

    viewed, contiguous = nd2nz(view), nd2nz(plain)
    assert viewed.gm_burst_bytes() == 128 and contiguous.gm_burst_bytes() == 128 * 64 * 2
    assert cost_of(viewed, hw) > cost_of(contiguous, hw)


def _value(memref):
    from xdsl.dialects.test import TestOp

    return TestOp(result_types=[memref]).results[0]


def test_strided_view_verifier_rejects_a_view_past_the_end():
    from xdsl.utils.exceptions import VerifyException

    src = _value(scoped_memref([1, 8, 64], f32, "GM"))
    good = StridedViewOp(src, strided_memref(src.type, (1, 4, 8, 16), (512, 16, 64, 1)))
    good.verify()
    bad = StridedViewOp(src, strided_memref(src.type, (1, 4, 8, 16), (512, 16, 65, 1)))
    with pytest.raises(VerifyException, match="past the end"):
        bad.verify()


def test_a_flatten_after_a_layout_conversion_stays_with_it():
    """A CNN's head: conv (NC1HWC0) -> Flatten -> Gemm. The flatten is a view of the gemm's
    operand, but its source is the NC1HWC0 -> NCHW conversion: it fuses with that
    conversion (one vector kernel), and the gemm keeps its own conversions, as without
    views — not five kernels of one op each."""
    import onnx.helper as oh
    from onnx import TensorProto
    from onnx import numpy_helper as nh

    import tilegraph

    rng = np.random.default_rng(0)
    nodes = [
        oh.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        oh.make_node("Flatten", ["c"], ["f"]),
        oh.make_node("Gemm", ["f", "fc"], ["y"], transB=1),
    ]
    weights = [
        nh.from_array(_weights(rng, 16, 16, 3, 3), "w"),
        nh.from_array(_weights(rng, 32, 256), "fc"),
    ]
    graph = oh.make_graph(
        nodes,
        "head",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 4, 4])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])],
        weights,
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    compiled = tilegraph.compile(model, platform="ascend910b")
    names = [k.name for k in compiled.kernels]
    assert len(names) == 3, names
    assert any("flatten" in n and "trans_data" in n for n in names), names
    x = rng.standard_normal((1, 16, 4, 4)).astype(np.float32)
    reference = tilegraph.compile(model, target="reference")
    np.testing.assert_allclose(compiled(x)[0], reference(x)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("platform", ["test", "ascend910b", "ascend310p"])
@pytest.mark.parametrize(("channels", "steps"), [(160, 20), (64, 33)])
def test_transposed_left_operand_view_covers_all_of_k(platform: str, channels: int, steps: int):
    """``[B, C, T] -> Transpose(0, 2, 1) -> MatMul(W[C, N])`` (PaddleOCR's SVTR neck): the
    transpose becomes A's view, held as (K, M) in GM, and the K loop must still run over
    all C. Regression: K was read from the view's flipped shape (T), so a K wider than one
    L1 window summed only its first window (PP-OCRv6 tiny rec: 0.89 off onnxruntime)."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    x = b.input("x", [2, channels, steps])
    w = b.constant(_weights(rng, channels, 48))
    out = b.op("matmul", b.op("transpose", x, perm=[0, 2, 1]), w)
    module = b.build(out)
    inputs = {"x": rng.standard_normal((2, channels, steps)).astype(np.float32)}
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert [k.unit for k in levels.tiled_kernels] == ["cube"]
