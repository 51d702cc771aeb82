"""GE-class fusion of a transformer layer: bias, GELU and residual in the matmuls'
epilogues, conversions in their prologues, and no group that no strategy can run.

The layer is BERT's (hidden 48, 4 heads, FFN 96, sequence 20: ragged against the 16-wide
fractals) built with the graph builder: Q projection and head split, FFN with erf GELU,
residual and LayerNorm. Checked: the kernel report on ascend910b (which ops share a
kernel), the rules' statistics, and every level against the graph on the ``test`` and
``ascend910b`` presets, with NaN in the padding lanes.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import (
    assert_matches,
    assert_no_nan,
    run_levels,
)
from tilegraph.builder import GraphBuilder
from tilegraph.cost_model.kernel_report import KernelInfo
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics

NAN = float("nan")
BATCH, SEQ, HIDDEN, HEADS, FFN = 2, 20, 48, 4, 96


def _weights(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)


def _layer():
    """(module, inputs): outputs the Q heads (B, H, S, D) and the FFN block's LayerNorm."""
    rng = np.random.default_rng(0)
    b = GraphBuilder()
    x = b.input("x", [BATCH, SEQ, HIDDEN])
    q = b.op("add", b.op("matmul", x, b.constant(_weights(rng, HIDDEN, HIDDEN))),
             b.constant(_weights(rng, HIDDEN)))  # fmt: skip
    shape = b.constant(np.array([BATCH, SEQ, HEADS, HIDDEN // HEADS], np.int64))
    heads = b.op("transpose", b.op("reshape", q, shape), perm=[0, 2, 1, 3])
    h = b.op("add", b.op("matmul", x, b.constant(_weights(rng, HIDDEN, FFN))),
             b.constant(_weights(rng, FFN)))  # fmt: skip
    h = b.op("gelu", h)
    y = b.op("add", b.op("matmul", h, b.constant(_weights(rng, FFN, HIDDEN))),
             b.constant(_weights(rng, HIDDEN)))  # fmt: skip
    y = b.op("add", y, x)
    ln = b.op(
        "layer_norm", y, b.constant(np.ones(HIDDEN, np.float32)),
        b.constant(np.zeros(HIDDEN, np.float32)), axis=-1, epsilon=1e-12,
    )  # fmt: skip
    module = b.build(heads, ln)
    inputs = {"x": rng.standard_normal((BATCH, SEQ, HIDDEN)).astype(np.float32)}
    return module, inputs


def _kernel_with(kernels: list[KernelInfo], *ops: str) -> KernelInfo | None:
    return next((k for k in kernels if all(op in k.ops for op in ops)), None)


def test_epilogues_and_prologues_on_ascend910b():
    """Each matmul's kernel holds its bias add (and GELU, residual add); no conversion
    runs as a kernel of its own; reshape and transpose share no kernel with an add."""
    module, inputs = _layer()
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, "ascend910b")
    assert_matches(levels)
    kernels = levels.tiled_kernels
    assert all(k.unit != "host" for k in kernels), [(k.name, k.reason) for k in kernels]
    matmuls = [k for k in kernels if "graph.matmul" in k.ops]
    assert len(matmuls) == 3
    assert all("graph.add" in k.ops for k in matmuls), [k.ops for k in matmuls]
    assert _kernel_with(kernels, "graph.matmul", "graph.gelu") is not None
    assert not [k for k in kernels if k.ops == ("layout.trans_data",)]
    assert not [k for k in kernels if "graph.add" in k.ops and "graph.reshape" in k.ops]
    counters = stats.as_dict()
    assert counters["fuse-ops"].get("conversions-cloned", 0) >= 1


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_transformer_layer_nan_padding(platform: str):
    """Both executors against the graph with NaN in every padding lane: none leaks."""
    module, inputs = _layer()
    levels = run_levels(module, inputs, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)


def test_gelu_sinks_below_its_conversion_into_nz():
    """cancel-trans-data's sink-below-unary: GELU on ND, the ND -> NZ conversion after it."""
    module, _ = _layer()
    ctx = make_context()
    run_pipeline("set-target{platform=ascend910b},O1,format{strategy=ge}", ctx, module)
    (fn,) = list(module.ops)
    (gelu,) = [op for op in fn.walk() if op.name == "graph.gelu"]
    assert gelu.results[0].type.storage_format.name == "ND"  # type: ignore[attr-defined]
    users = [use.operation.name for use in gelu.results[0].uses]
    assert users == ["layout.trans_data"]
