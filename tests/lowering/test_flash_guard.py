"""torch's SDPA NaN guard ``where(isnan(p), 0, p)`` between the softmax and ·V (every
Hugging Face export): the softmax kernel's elementwise tail on a coupled preset
(:mod:`tilegraph.lowering.conversion.tiling.norm_tail`), and part of the flash kernel on a
decoupled one (:mod:`tilegraph.lowering.conversion.tiling.attention`).

Each level against the graph with the guard, both executors, NaN in every padding lane:
rows masked to -inf in full (the graph's softmax is NaN there, the guard makes P 0 and O
``0·V``), a row masked in its first K block only, ``inf`` in V under masked and unmasked
keys (``0·inf`` is NaN in the graph's ·V and must be in the kernel's), fp32 and fp16, and
ragged K blocks on the ``test`` preset (16 x 16 blocks).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_flash_attention import NAN, _attention, _flash_kernels
from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.passes.statistics import collecting_statistics

GUARD_OPS = ("graph.softmax", "graph.is_nan", "graph.where")


def _masked(batch: int, sq: int, sk: int, heads: int, dim: int, dtype=np.float32, seed=0):
    """A guarded attention with an additive mask [B, 1, 1, Sk] of 0 / -inf: the last batch
    entry masked in full (every row of it is fully masked)."""
    module, inputs = _attention(batch, sq, sk, heads, dim, "additive", seed, dtype, guard=True)
    mask = inputs["mask"]
    inputs["mask"] = np.where(mask < 0, -np.inf, 0).astype(dtype)
    inputs["mask"][-1] = -np.inf
    return module, inputs


def _levels(module, inputs, platform: str):
    with collecting_statistics() as stats:
        levels = run_levels(module, inputs, platform, pad_value=NAN)
    return levels, stats.as_dict()["fuse-ops"]


def test_coupled_preset_runs_the_guard_in_the_softmax_kernel():
    """310P (no flash claim): Q·Kᵀ, the softmax with the guard as its tail, ·V — three
    kernels, not four; fully masked rows give the graph's zeros."""
    module, inputs = _masked(2, 20, 20, 2, 12)
    levels, _ = _levels(module, inputs, "ascend310p")
    assert_matches(levels)
    ops = [k.ops for k in levels.tiled_kernels]
    assert GUARD_OPS in ops and len(ops) == 3, ops
    assert not np.isnan(levels.reference[0]).any()
    assert (levels.reference[0][-1] == 0).all()  # the masked batch entry: O = 0·V
