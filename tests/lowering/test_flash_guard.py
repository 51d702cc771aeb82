"""torch's SDPA NaN guard ``where(isnan(p), 0, p)`` between the softmax and ·V (every
Hugging Face export): part of the flash kernel on every preset (the mix kernel of
:mod:`tilegraph.lowering.conversion.tiling.attention` on a decoupled one, the in-core
kernel of :mod:`~tilegraph.lowering.conversion.tiling.attention_coupled` on a coupled
one), and the softmax kernel's elementwise tail where no attention is claimed
(:mod:`tilegraph.lowering.conversion.tiling.norm_tail`).

Each level against the graph with the guard, both executors, NaN in every padding lane:
rows masked to -inf in full (the graph's softmax is NaN there, the guard makes P 0 and O
``0·V``), a row masked in its first K block only, ``inf`` in V under masked and unmasked
keys (``0·inf`` is NaN in the graph's ·V and must be in the kernel's), fp32 and fp16, and
ragged K blocks on the ``test`` preset and the coupled one with its buffers (16 x 16
blocks).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_flash_attention import (
    F16_ATOL,
    F16_RTOL,
    NAN,
    _attention,
    _flash_kernels,
)
from tests.lowering.test_flash_attention_coupled import COUPLED_ALWAYS, SMALL_COUPLED
from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.passes.pipelines import option_value
from tilegraph.passes.statistics import collecting_statistics

GUARD_OPS = ("graph.softmax", "graph.is_nan", "graph.where")
F16 = {"rtol": F16_RTOL, "atol": F16_ATOL}
"""fp16 against its graph, as the unguarded flash kernel's tests."""


def _masked(batch: int, sq: int, sk: int, heads: int, dim: int, dtype=np.float32, seed=0):
    """A guarded attention with an additive mask [B, 1, 1, Sk] of 0 / -inf: the last batch
    entry masked in full (every row of it is fully masked)."""
    module, inputs = _attention(batch, sq, sk, heads, dim, "additive", seed, dtype, guard=True)
    mask = np.asarray(inputs["mask"], np.float64)
    inputs["mask"] = np.where(mask < 0, -np.inf, 0).astype(dtype)
    inputs["mask"][-1] = -np.inf
    return module, inputs


def _levels(module, inputs, platform: str):
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN, o2_options=COUPLED_ALWAYS)
    return levels, stats.as_dict()["fuse-ops"]


def _first_block_masked(dtype=np.float32):
    """Cross attention (Sq 9, Sk 37: two full 16-key blocks and a ragged one on ``test``),
    batch 3: entry 0 masked in its first 16 keys only, entry 1 in full, entry 2 not at
    all; V holds +inf under a masked key of entry 0 (column 1) and -inf under an
    unmasked key of entry 2 (column 5)."""
    module, inputs = _attention(3, 9, 37, 2, 12, "additive", 1, dtype, guard=True)
    mask = np.zeros((3, 1, 1, 37), dtype)
    mask[0, ..., :16] = -np.inf
    mask[1] = -np.inf
    inputs["mask"] = mask
    inputs["v"][0, 3, 1] = np.inf
    inputs["v"][2, 20, 5] = -np.inf
    return module, inputs


FLASH_UNITS = {"test": "mix", "ascend910b": "mix", "ascend310p": "cube", SMALL_COUPLED: "cube"}
"""The flash kernel's unit by preset: the mix kernel on decoupled presets, the in-core
(cube) kernel on coupled ones."""


@pytest.mark.parametrize("platform", sorted(FLASH_UNITS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("case", ["full_rows", "first_block"])
def test_guarded_flash_kernel_matches_the_graph(platform: str, dtype, case: str):
    """The guarded attention is one flash kernel (the guard claimed with the softmax),
    and both executors give the graph's values: zeros for fully masked rows,
    NaN exactly where the graph's ``0·inf`` / ``p·inf`` puts it, nothing from the NaN
    padding lanes."""
    if case == "full_rows":
        module, inputs = _masked(2, 20, 20, 4, 12, dtype)
    else:
        module, inputs = _first_block_masked(dtype)
    levels, fuse = _levels(module, inputs, option_value(platform))
    tolerance = F16 if dtype == np.float16 else {}
    assert_matches(levels, **tolerance)
    kernels = levels.tiled_kernels
    flash = _flash_kernels(levels)
    unit = FLASH_UNITS[platform]
    assert len(kernels) == 1 and flash and flash[0].unit == unit, [k.ops for k in kernels]
    assert set(GUARD_OPS) <= set(flash[0].ops)
    assert fuse["attention-claimed"] == 1
    out = levels.reference[0]
    hidden = out.shape[-1]
    if case == "full_rows":  # the fully masked batch entry: P = 0, O = 0·V = 0
        assert (out[-1] == 0).all() and not np.isnan(out).any()
    else:  # 0·inf: NaN in entry 0's column 1; p·(-inf) = -inf in entry 2's column 5
        nan = np.isnan(out)
        assert nan[0, :, 1].all() and nan.sum() == out.shape[1], "NaN in that column only"
        assert (out[2, :, 5] == -np.inf).all()
        assert (out[1] == 0).all() and hidden == 24


@pytest.mark.parametrize("width", [72, 3000], ids=["rows", "chunks"])
def test_guard_tail_of_a_lone_softmax(width: int):
    """A softmax with the guard and no attention around it, on ``test``: one vector
    kernel in the whole-row form and in the chunked one (a row of 3000 is longer than
    ``test``'s UB), rows of -inf giving the guard's zeros, NaN in the padding lanes."""
    from tests.lowering.test_tile_differential import Graph

    g = Graph()
    x = g.input([2, 37, width])
    p = g.op("softmax", x, axis=-1)
    zero = g.b.constant(np.float32(0))
    module = g.b.build(g.op("where", g.op("is_nan", p), zero, p))
    g.arrays[0][1, :5] = -np.inf  # five fully masked rows
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_matches(levels)
    assert [k.ops for k in levels.tiled_kernels] == [GUARD_OPS]
    assert (levels.reference[0][1, :5] == 0).all()


def test_the_cycle_model_costs_the_guard_steps():
    """The guard's steps in the flash kernel (``vcmp``, ``vsel``, ``vdup`` on row tiles)
    are costed by their op classes: the guarded kernel's estimate is above the unguarded
    one's, and not by much (nothing on the scores' tile)."""
    from tilegraph.cost_model.cycles import simulate_module

    times = {}
    for guard in (False, True):
        module, inputs = _attention(2, 20, 70, 4, 12, "additive", guard=guard)
        run_levels(module, inputs, "ascend910b")
        (kernel,) = simulate_module(module).kernels
        times[guard] = kernel.us
    assert times[False] < times[True] < 1.1 * times[False], times


def test_a_guard_filling_a_runtime_value_is_not_claimed():
    """``where(isnan(p), c, p)`` with ``c`` a one-element graph input, not the constant 0:
    no flash claim on 910B (the kernel's guard is the 0 one), and no softmax tail (its
    operands are constants); fully masked rows get ``c``'s products, as the graph's."""
    module, inputs = _attention(2, 20, 20, 2, 12, "additive", guard="input")
    inputs["mask"][-1] = -np.inf
    levels, fuse = _levels(module, inputs, "ascend910b")
    assert_matches(levels)
    assert "attention-claimed" not in fuse
    assert not _flash_kernels(levels)
    assert ("graph.is_nan", "graph.where") in [k.ops for k in levels.tiled_kernels]
    v = inputs["v"][-1].reshape(20, 2, 12).transpose(1, 0, 2)  # [heads, keys, D]
    want = (0.25 * v.sum(axis=1)).reshape(1, 24)  # every row: c times V's column sums
    np.testing.assert_allclose(levels.reference[0][-1], np.broadcast_to(want, (20, 24)), 1e-5)
