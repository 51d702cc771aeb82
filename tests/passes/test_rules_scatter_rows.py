"""``scatter-elements-as-scatter-nd``: torchvision's RoI merge (a ScatterElements along
axis 0 by an index expanded along each row) is a ScatterND of whole rows, bit for bit —
negative and repeated indices (the later row wins), a reduction combining rows in order —
and runs on the AI core, where the element scatter of rows too long for UB stayed on the
host."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tests.passes.test_rules_arith import _check_bitwise
from tilegraph.builder import GraphBuilder

RNG = np.random.default_rng(11)
RULE = "algebraic-simplify{only=scatter-elements-as-scatter-nd}"


def _merge(
    rows: int = 5, shape: tuple[int, ...] = (8, 3, 2, 2), reduction: str = "none"
) -> tuple[ModuleOp, dict[str, np.ndarray]]:
    """res [shape] takes pooled [rows, *shape[1:]] at idx (one per row, -2 and a repeat
    among them) expanded along each row, as ``res.scatter(0, idx.view(-1, 1, 1, 1)
    .expand(...), pooled)`` exports."""
    b = GraphBuilder()
    res = b.input("res", list(shape))
    idx = b.input("idx", [rows] + [1] * (len(shape) - 1), dtype="int64")
    pooled = b.input("pooled", [rows, *shape[1:]])
    at = b.op("expand", idx, b.constant(np.array([rows, *shape[1:]], np.int64)))
    module = b.build(b.op("scatter_elements", res, at, pooled, axis=0, reduction=reduction))
    picks = RNG.integers(-shape[0], shape[0], rows)
    picks[1], picks[-1] = -2, picks[0]  # negative, and the last row repeating the first
    return module, {
        "res": RNG.standard_normal(shape).astype(np.float32),
        "idx": picks.reshape(rows, *[1] * (len(shape) - 1)).astype(np.int64),
        "pooled": RNG.standard_normal((rows, *shape[1:])).astype(np.float32),
    }


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_a_row_index_scatter_is_a_scatter_nd_bit_exact(reduction: str):
    module, inputs = _merge(reduction=reduction)
    _check_bitwise(module, RULE, inputs)
    ops = _ops(module)
    assert ops["graph.scatter_elements"] == 0 and ops["graph.scatter_nd"] == 1


def test_an_index_broadcast_over_rows_stays():
    """One index for every row (the Expand repeats it down the rows too): not a row scatter."""
    b = GraphBuilder()
    res, idx = b.input("res", [6, 4]), b.input("idx", [1, 1], dtype="int64")
    at = b.op("expand", idx, b.constant(np.array([3, 4], np.int64)))
    module = b.build(b.op("scatter_elements", res, at, b.input("v", [3, 4]), axis=0))
    inputs = {
        "res": RNG.standard_normal((6, 4)).astype(np.float32),
        "idx": np.array([[2]], np.int64),
        "v": RNG.standard_normal((3, 4)).astype(np.float32),
    }
    _check_bitwise(module, RULE, inputs)
    assert _ops(module)["graph.scatter_elements"] == 1


def test_the_roi_merge_runs_on_the_ai_core():
    """Rows of 12544 elements (256 channels of 7 x 7, as the detector's) whose element
    scatter did not fit UB: after the rule every level agrees and nothing is on the host."""
    module, inputs = _merge(rows=3, shape=(6, 256, 7, 7))
    levels = run_levels(module, list(inputs.values()), "ascend910b")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit != "host" for k in levels.tiled_kernels), levels.tiled_kernels
