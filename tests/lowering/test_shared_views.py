"""GPT-2's layer shapes: a split read as offset views, epilogues across row reshapes.

GPT-2 runs its projections as 2-D addmm (``[B·S, N] x [N, 3N] + b``) between reshapes, and
cuts Q, K, V out of c_attn's ``[B, S, 3N]`` result with one split. Built here with the graph
builder: the split is copied into each matmul that reads it and becomes offset views
(``tile.strided_view`` with ``strided<[..], offset: N>``), and the residual adds and the
tanh GELU chain after each gemm's ``[B·S, N] -> [B, S, N]`` reshape run in that gemm's
epilogue (:mod:`tilegraph.lowering.analysis.shared_views`). Checked: no split kernel and no
elementwise kernel of their own, both executors against the graph with NaN in the padding
lanes (ragged S, N not a multiple of 16) on the ``test`` and ``ascend910b`` presets, the
re-indexing rules, and the DMA bursts of an offset view of stride 3N.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f16

from tests.dialects.test_tile_ops import buf, idx
from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.tile import Nd2NzOp, StridedViewOp, scoped_memref
from tilegraph.dialects.tile.workspace import strided_memref, view_offset
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.lowering.analysis.shared_views import rows_operand
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def _gpt2_layer(batch: int, seq: int, heads: int, dim: int):
    """(module, inputs): GPT-2's attention and MLP without the LayerNorms: addmm
    projections between reshapes, a split into Q, K, V, the tanh GELU as its 9-op chain,
    residual adds after c_proj and the MLP's projection."""
    rng = np.random.default_rng(0)
    hidden = heads * dim
    b = GraphBuilder()
    x = b.input("x", [batch, seq, hidden])

    def shape(*dims: int):
        return b.constant(np.array(dims, np.int64))

    def addmm(value, n_in: int, n_out: int):
        """Conv1D as exported: reshape to rows, Gemm with bias, reshape back."""
        rows = b.op("reshape", value, shape(batch * seq, n_in))
        w, bias = b.constant(_weights(rng, n_in, n_out)), b.constant(_weights(rng, n_out))
        return b.op("reshape", b.op("gemm", rows, w, bias), shape(batch, seq, n_out))

    qkv = addmm(x, hidden, 3 * hidden)
    q, k, v = b.op_results("split", qkv, shape(hidden, hidden, hidden), axis=2)
    q, k, v = (b.op("reshape", t, shape(batch, seq, heads, dim)) for t in (q, k, v))
    q = b.op("transpose", q, perm=[0, 2, 1, 3])
    k = b.op("transpose", k, perm=[0, 2, 3, 1])
    v = b.op("transpose", v, perm=[0, 2, 1, 3])
    scores = b.op("div", b.op("matmul", q, k), b.constant(np.float32(np.sqrt(dim))))
    att = b.op("matmul", b.op("softmax", scores, axis=-1), v)
    merged = b.op("reshape", b.op("transpose", att, perm=[0, 2, 1, 3]), shape(batch, seq, hidden))
    h = b.op("add", x, addmm(merged, hidden, hidden))
    f = addmm(h, hidden, 4 * hidden)

    def scalar(value: float):
        return b.constant(np.float32(value))

    cube = b.op("mul", b.op("mul", f, f), f)
    inner = b.op("mul", b.op("add", f, b.op("mul", cube, scalar(0.044715))), scalar(0.7978846))
    gelu = b.op("mul", b.op("mul", f, scalar(0.5)), b.op("add", b.op("tanh", inner), scalar(1.0)))
    out = b.op("add", h, addmm(gelu, 4 * hidden, hidden))
    module = b.build(out)
    return module, {"x": rng.standard_normal((batch, seq, hidden)).astype(np.float32)}


CASES = {
    "ragged": (1, 20, 2, 12),  # S ragged, N = 24 and 3N = 72 not multiples of 16
    "batch": (2, 9, 3, 8),
}


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_gpt2_layer_nan_padding(platform: str, case: str):
    """Both executors match the graph with NaN in every padding lane; the split runs no
    kernel (Q, K and V are offset views) and no elementwise op runs outside a gemm's
    epilogue on 910B. On ``test`` (8 KiB of UB) the epilogue tiles do not fit: such a
    group is peeled into the gemm and one vector kernel of its elementwise ops."""
    module, inputs = _gpt2_layer(*CASES[case])
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    # Q·Kᵀ and ·V read Q, K and V through their copies of the split (on both presets the
    # flash-attention kernel takes the two matmuls and the softmax as one group)
    assert any({"graph.split", "graph.matmul"} <= set(k.ops) for k in kernels)
    lone = [k.ops for k in kernels if k.ops == ("graph.split",)]
    assert not lone, lone
    assert stats.as_dict()["fuse-ops"]["splits-cloned"] == 1
    offsets = {view_offset(op.result) for op in module.walk() if isinstance(op, StridedViewOp)}
    hidden = CASES[case][2] * CASES[case][3]
    # K starts N and V 2N into c_attn's rows
    assert {hidden, 2 * hidden} <= offsets
    for k in kernels:
        if "graph.gemm" in k.ops:
            continue
        if platform == "ascend910b":
            assert "graph.tanh" not in k.ops and k.ops != ("graph.add",), (k.name, k.ops)
    if platform == "ascend910b":
        assert len(kernels) == 5  # c_attn, attention (flash), c_proj, c_fc, MLP projection
    else:  # the epilogues across the reshapes do not fit 8 KiB of UB: peeled off whole
        assert stats.as_dict()["lower-graph-to-kernels"]["peeled-epilogues"] >= 2


def test_rows_operand_reindexing():
    """Operands of the reshaped ``[B, S, N]`` read in the gemm's ``[B·S, N]`` rows."""
    rows, result = (2, 5, 8), (10, 8)
    assert rows_operand((2, 5, 8), rows, result) == StridedView((10, 8), (8, 1))
    assert rows_operand((8,), rows, result) == StridedView((1, 8), (8, 1))
    assert rows_operand((), rows, result) == StridedView((1, 1), (1, 1))
    assert rows_operand((1, 5, 1), rows, result) is None  # [S] repeated over B: no view
    assert rows_operand((5, 8), rows, result) is None
    assert rows_operand((2, 5, 1), rows, result) == StridedView((10, 1), (1, 1))


def test_split_views_carry_offsets():
    """A split's outputs are offset views; the offset survives reshapes and transposes."""
    qkv = StridedView.row_major((1, 20, 72))
    k = qkv.part(2, 24, 24).reshape((1, 20, 2, 12))
    assert k is not None
    heads = k.transpose((0, 2, 3, 1))
    assert heads == StridedView((1, 2, 12, 20), (1440, 12, 1, 72), 24)
    assert heads.extent() == 24 + 1 + 19 * 72 + 12 + 11


def test_dma_of_a_stride_3n_offset_view_pays_the_burst_rule():
    """V's head view of c_attn's ``[1, 128, 3·768]`` output: rows of D = 64 fp16 elements
    (128 B, not a multiple of 910B's 512 B burst) at a row stride of 3N from offset 2N.
    nd2nz moves the same bytes as from a plain buffer of that shape, in 128 B runs, so it
    costs the misaligned rate: the view's stride 3N (not N) and its offset change nothing
    of that, and cost the same as the head view of a [1, 128, 768] tensor."""
    hw = hardware_preset("ascend910b")
    source = scoped_memref([1, 128, 3 * 768], f16, "GM")
    plain = scoped_memref([1, 12, 128, 64], f16, "GM")
    strides = (3 * 128 * 768, 64, 3 * 768, 1)
    view = strided_memref(source, (1, 12, 128, 64), strides, 2 * 768)
    narrow = strided_memref(
        scoped_memref([1, 128, 768], f16, "GM"), (1, 12, 128, 64), (98304, 64, 768, 1)
    )

    def nd2nz(memref) -> Nd2NzOp:
        return Nd2NzOp(_value(memref), idx(4), buf((4, 8, 16, 16), "L1", f16))

    viewed, contiguous, head = nd2nz(view), nd2nz(plain), nd2nz(narrow)
    assert viewed.gm_burst_bytes() == 128
    assert contiguous.gm_burst_bytes() == 128 * 64 * 2
    assert cost_of(viewed, hw) > cost_of(contiguous, hw)
    assert cost_of(viewed, hw) == cost_of(head, hw)
    assert hw.gm_efficiency(viewed.gm_burst_bytes()) == hw.gm_misaligned_efficiency


def test_strided_view_offset_verifier_and_semantics():
    """The verifier counts the offset in the view's last element; the interpreter's view
    starts there, so writes through it land in the source."""
    from xdsl.utils.exceptions import VerifyException

    from tilegraph.runtime.tile_interpreter.workspace import strided_view

    src = _value(scoped_memref([2, 12], f16, "GM"))
    good = StridedViewOp(src, strided_memref(src.type, (2, 4), (12, 1), 8))
    good.verify()
    bad = StridedViewOp(src, strided_memref(src.type, (2, 4), (12, 1), 9))
    with pytest.raises(VerifyException, match="past the end"):
        bad.verify()
    data = np.arange(24, dtype=np.float16).reshape(2, 12)
    (window,) = strided_view(good)(data)
    np.testing.assert_array_equal(window, data[:, 8:12])
    window[...] = -1
    assert (data[:, 8:] == -1).all() and (data[:, :8] >= 0).all()


def _value(memref):
    from xdsl.dialects.test import TestOp

    return TestOp(result_types=[memref]).results[0]


def test_a_split_with_an_output_elsewhere_stays_one_kernel():
    """Q and K feed Q·Kᵀ through views, but V goes to an elementwise op: the split is not
    copied (its third output must be written), it runs once, and the matmul reads Q and K
    from its outputs as before."""
    rng = np.random.default_rng(1)
    b = GraphBuilder()
    x = b.input("x", [1, 20, 72])

    def shape(*dims: int):
        return b.constant(np.array(dims, np.int64))

    q, k, v = b.op_results("split", x, shape(24, 24, 24), axis=2)
    q = b.op("transpose", b.op("reshape", q, shape(1, 20, 2, 12)), perm=[0, 2, 1, 3])
    k = b.op("transpose", b.op("reshape", k, shape(1, 20, 2, 12)), perm=[0, 2, 3, 1])
    module = b.build(b.op("matmul", q, k), b.op("relu", v))
    inputs = {"x": rng.standard_normal((1, 20, 72)).astype(np.float32)}
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert "splits-cloned" not in stats.as_dict()["fuse-ops"]
    assert sum("graph.split" in k.ops for k in levels.tiled_kernels) == 1


def _split_attention(b: GraphBuilder, qkv, seq: int) -> object:
    """Attention over the Q, K, V thirds of ``qkv`` [1, seq, 72] (two heads of 12)."""

    def shape(*dims: int):
        return b.constant(np.array(dims, np.int64))

    q, k, v = b.op_results("split", qkv, shape(24, 24, 24), axis=2)
    q, k, v = (b.op("reshape", t, shape(1, seq, 2, 12)) for t in (q, k, v))
    q = b.op("transpose", q, perm=[0, 2, 1, 3])
    k = b.op("transpose", k, perm=[0, 2, 3, 1])
    v = b.op("transpose", v, perm=[0, 2, 1, 3])
    return b.op("matmul", b.op("softmax", b.op("matmul", q, k), axis=-1), v)


def test_a_split_straight_after_a_matmul_is_views():
    """A split straight after a matmul's result (T5's and LLaMA's merged Q, K, V
    projection, no bias add between) reads the matmul's FRACTAL_NZ -> ND conversion, which
    is that matmul's (fixpipe): the split is views of the attention's operands, no kernel."""
    rng = np.random.default_rng(2)
    b = GraphBuilder()
    x = b.input("x", [1, 20, 24])
    qkv = b.op("matmul", x, b.constant(_weights(rng, 24, 72)))
    module = b.build(_split_attention(b, qkv, 20))
    inputs = {"x": rng.standard_normal((1, 20, 24)).astype(np.float32)}
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert stats.as_dict()["fuse-ops"].get("splits-cloned") == 1
    assert not any("graph.split" in k.ops and len(k.ops) == 1 for k in levels.tiled_kernels)
    assert len(levels.tiled_kernels) == 2, [k.ops for k in levels.tiled_kernels]


def test_copies_of_a_split_that_no_view_claims_are_undone():
    """A split of a convolution's output (its channels, converted NC1HWC0 -> NCHW) reads a
    layout conversion that view chains do not start from (fuse-ops keeps such chains with their
    conversion): its copies would not be claimed, so they are undone and the split runs
    once, as before."""
    rng = np.random.default_rng(2)
    b = GraphBuilder()
    x = b.input("x", [1, 8, 4, 5])
    flat = b.op("conv2d", x, b.constant(_weights(rng, 72, 8, 1, 1), "NCHW"))
    split = b.constant(np.array([24, 24, 24], np.int64))
    heads = b.constant(np.array([1, 2, 12, 20], np.int64))
    q, k, v = (b.op("reshape", t, heads) for t in b.op_results("split", flat, split, axis=1))
    q, v = (b.op("transpose", t, perm=[0, 1, 3, 2]) for t in (q, v))
    module = b.build(b.op("matmul", b.op("softmax", b.op("matmul", q, k), axis=-1), v))
    inputs = {"x": rng.standard_normal((1, 8, 4, 5)).astype(np.float32)}
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert "splits-cloned" not in stats.as_dict()["fuse-ops"]
    assert sum("graph.split" in k.ops for k in levels.tiled_kernels) == 1
