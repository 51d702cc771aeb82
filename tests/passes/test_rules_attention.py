"""``attention-as-matmuls``: ONNX Attention written out as its definition computes the op's
own reference (tilegraph's, which the ONNX node suite checks) for 4-D and 3-D inputs,
grouped KV heads, boolean and additive masks (rows with every key masked give zeros), the
causal triangle aligned to a KV cache, softcap and a wider softmax; what it cannot write out
keeps the op; PyTorch's SDPA as Attention runs as one flash-attention kernel."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

RNG = np.random.default_rng(3)
RULE = "algebraic-simplify{only=attention-as-matmuls},dce"


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _attention(shapes: dict[str, list[int]], dtypes: dict[str, str] | None = None, **attrs):
    """Attention over inputs named q, k, v (and mask, past_key, past_value when given)."""
    b = GraphBuilder()
    dtypes = dtypes or {}
    values = {n: b.input(n, s, dtypes.get(n, "float32")) for n, s in shapes.items()}
    slots = [values.get(n) for n in ("q", "k", "v", "mask", "past_key", "past_value")]
    while slots[-1] is None:
        slots.pop()
    y, present_k, present_v, _ = b.op_results("attention", *slots, **attrs)
    outputs = [y] + ([present_k, present_v] if "past_key" in shapes else [])
    module = b.build(*outputs)
    arrays = {}
    for name, shape in shapes.items():
        if dtypes.get(name) == "bool":
            arrays[name] = RNG.random(shape) < 0.7
        else:
            arrays[name] = RNG.standard_normal(shape).astype(dtypes.get(name, "float32"))
    return module, arrays


CASES = {
    "mha": ({"q": [2, 4, 5, 8], "k": [2, 4, 7, 8], "v": [2, 4, 7, 6]}, {}, {}),
    "gqa_causal": ({"q": [2, 8, 6, 8], "k": [2, 2, 6, 8], "v": [2, 2, 6, 8]}, {}, {"is_causal": 1}),
    "three_d": (
        {"q": [2, 5, 32], "k": [2, 7, 16], "v": [2, 7, 16]},
        {},
        {"q_num_heads": 4, "kv_num_heads": 2},
    ),
    "bool_mask_some_rows_empty": (
        {"q": [1, 2, 4, 8], "k": [1, 2, 6, 8], "v": [1, 2, 6, 8], "mask": [4, 6]},
        {"mask": "bool"},
        {},
    ),
    "float_mask_scale_softcap": (
        {"q": [2, 2, 3, 8], "k": [2, 2, 5, 8], "v": [2, 2, 5, 8], "mask": [2, 1, 3, 5]},
        {},
        {"scale": 0.3, "softcap": 2.0},
    ),
    "causal_after_a_cache": (
        {
            "q": [1, 2, 3, 8],
            "k": [1, 2, 3, 8],
            "v": [1, 2, 3, 8],
            "past_key": [1, 2, 4, 8],
            "past_value": [1, 2, 4, 8],
        },
        {},
        {"is_causal": 1},
    ),  # fmt: skip
    "causal_more_queries_than_keys": (
        {"q": [1, 2, 5, 8], "k": [1, 2, 3, 8], "v": [1, 2, 3, 8]},
        {},
        {"is_causal": 1},
    ),
    "half_with_float_softmax": (
        {"q": [1, 2, 4, 8], "k": [1, 2, 4, 8], "v": [1, 2, 4, 8]},
        {"q": "float16", "k": "float16", "v": "float16"},
        {"softmax_precision": 1},
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_attention_written_out_computes_the_op(case):
    shapes, dtypes, attrs = case
    module, arrays = _attention(shapes, dtypes, **attrs)
    with np.errstate(all="ignore"):
        want = run_reference(module, arrays)
    run_pipeline(RULE, make_context(), module)
    module.verify()
    assert _ops(module)["graph.attention"] == 0
    with np.errstate(all="ignore"):
        got = run_reference(module, arrays)
    half = dtypes.get("q") == "float16"
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-3 if half else 1e-5, atol=2e-3 if half else 1e-6)


def test_a_sliding_window_keeps_the_op():
    module, _ = _attention(
        {"q": [1, 2, 4, 8], "k": [1, 2, 4, 8], "v": [1, 2, 4, 8]}, left_window_size=1
    )
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.attention"] == 1


def test_grouped_attention_runs_as_one_flash_kernel():
    module, arrays = _attention(
        {"q": [2, 8, 24, 16], "k": [2, 2, 24, 16], "v": [2, 2, 24, 16]}, is_causal=1
    )
    levels = run_levels(module, arrays, "ascend910b")
    assert_matches(levels)
    assert [k.unit for k in levels.tiled_kernels] == ["mix"]
