"""A QDQ attention block whose Q·Kᵀ and P·V have asymmetric int8 operands on both sides
(onnxruntime's ``quantize_static`` default: zero points other than 0; P's is -128, uint8's
0 re-centred), through ``fold-qdq``'s int32 epilogue: the cube's raw int32 sum, the zero
points' row / column sums as one-column / one-row int8 products, the int32 subtractions and
the dequantisation on the vector unit, then the softmax and P's quantisation as before.

Q·Kᵀ's K is the head size (20: below 258) and P·V's the sequence (270: above 258, where a
float epilogue of the partial sums is no longer exact); S = 270 and D = 20 are ragged on
every fractal. Each level (graph reference, macro kernels, both tiled executors) agrees
with the one above it exactly, on the ``test`` preset (whose small UB splits the epilogue
from the product: the int32 goes through GM) and on 910B (one mix kernel a product).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering import test_tile_differential as harness
from tests.lowering.test_tile_differential import Graph

HEADS, SEQ, HEAD = 2, 270, 20
# (scale, zero point) of Q, Kᵀ, P and V: every zero point other than 0
Q_PARAMS, K_PARAMS, P_PARAMS, V_PARAMS = (0.03, 13), (0.04, 2), (1 / 255, -128), (0.05, 6)


def _quantised(g: Graph, x: SSAValue, params: tuple[float, int]) -> SSAValue:
    """``DequantizeLinear(QuantizeLinear(x))`` of one per-tensor int8 quantisation."""
    scale = g.b.constant(np.array(params[0], np.float32))
    zero = g.b.constant(np.array(params[1], np.int8))
    return g.op("dequantize_linear", g.op("quantize_linear", x, scale, zero), scale, zero)


def qdq_attention(g: Graph) -> list[SSAValue]:
    """softmax(DQ(Q(q)) · DQ(Q(kᵀ))) quantised, times DQ(Q(v)), per head."""
    q = _quantised(g, g.input([1, HEADS, SEQ, HEAD]), Q_PARAMS)
    k = _quantised(g, g.input([1, HEADS, HEAD, SEQ]), K_PARAMS)
    v = _quantised(g, g.input([1, HEADS, SEQ, HEAD]), V_PARAMS)
    p = _quantised(g, g.op("softmax", g.op("matmul", q, k), axis=-1), P_PARAMS)
    return [g.op("matmul", p, v)]


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_qdq_attention_int32_epilogue(platform: str):
    """Both products on the int8 cube with their zero points in int32 epilogues: no float
    matmul, no K-lengthening concat; every level exact."""
    g = Graph()
    module = g.b.build(*qdq_attention(g))
    levels = harness.run_levels(module, g.arrays, platform, precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    kernels = levels.tiled_kernels
    assert not [k for k in kernels if k.unit == "host"]
    assert not [k for k in kernels if "graph.matmul" in k.ops or "graph.concat" in k.ops]
    on_vector = {op for k in kernels if k.unit in ("vector", "mix") for op in k.ops}
    assert {"graph.sub", "graph.cast"} <= on_vector
    if platform == "ascend910b":  # the AIC part writes int32, the AIV part finishes it
        epilogues = [k for k in kernels if "graph.sub" in k.ops]
        assert len(epilogues) == 2, [k.ops for k in kernels]
        for k in epilogues:
            assert k.unit == "mix"
            assert {"graph.quant_matmul", "graph.cast", "graph.mul"} <= set(k.ops)
            assert k.ops.count("graph.sub") == 2  # the row and the column corrections
