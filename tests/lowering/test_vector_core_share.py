"""Vector tiles shared over the cores (``tiling/elementwise.py``: ``share_over_cores``).

CANN's elementwise tiling divides an output over the cores before it loops over UB-sized
pieces; the vector strategies' tile choice does the same: a plan that would leave cores
idle gets smaller tiles, down to :data:`MIN_CORE_SHARE` elements a tile.
"""

from __future__ import annotations

from math import prod

import pytest

from tilegraph.hardware import hardware_preset
from tilegraph.lowering.conversion.tiling.elementwise import (
    MIN_CORE_SHARE,
    TilePlan,
    choose_tile,
    share_over_cores,
)


def fp32_bytes(tile: list[int]) -> int:
    return 4 * prod(tile)


def test_a_plan_with_enough_tiles_is_kept():
    plan = TilePlan((64, 256), 0, 8)  # 8 tiles
    assert share_over_cores(plan, 8, 2) is plan


def test_rows_shrink_to_one_cores_share():
    # 1 MiB fits a 4 MiB budget whole: one tile; 48 cores take 22 rows each (ceil(1024/48))
    plan = choose_tile((1024, 256), fp32_bytes, 4 << 20, cores=48)
    assert plan is not None and (plan.axis, plan.size) == (0, 22)
    assert plan.count() == 47
    assert choose_tile((1024, 256), fp32_bytes, 4 << 20) == TilePlan((1024, 256), 0, 1024)


def test_a_tile_keeps_the_least_share():
    # 7 rows of 50: a share of 2 rows (100 elements) is under 128, so 3 rows a tile
    plan = choose_tile((7, 50), fp32_bytes, 4 << 20, cores=4)
    assert plan is not None and plan.size == 3 and plan.count() == 3
    assert plan.size * 50 >= MIN_CORE_SHARE


def test_the_split_moves_deeper_when_one_row_a_tile_is_too_few():
    # 2 planes of 64 x 64: 2 tiles at axis 0; the share moves to axis 1, 16 rows a tile
    plan = choose_tile((2, 64, 64), fp32_bytes, 4 << 20, cores=8)
    assert plan is not None and (plan.axis, plan.size) == (1, 16)
    assert plan.count() == 8


def test_reduced_axes_are_never_split():
    plan = choose_tile((3, 4096), fp32_bytes, 4 << 20, whole_from=1, cores=8)
    assert plan is not None and plan.axis == 0 and plan.count() == 3


def test_a_small_tensor_stays_whole():
    plan = choose_tile((4, 16), fp32_bytes, 4 << 20, cores=48)
    assert plan == TilePlan((4, 16), 0, 4)


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_every_vector_core_gets_work(platform: str):
    cores = hardware_preset(platform).vector_cores
    plan = choose_tile((1, 16, 56, 56, 16), fp32_bytes, 96 << 10, cores=cores)
    assert plan is not None and plan.count() >= cores
