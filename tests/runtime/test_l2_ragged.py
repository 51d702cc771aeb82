"""The L2 model replays every GM access a launch charges, a ragged block's included.

A matmul's ragged last block issues one of several records per op (:mod:`tilegraph.
cost_model.cycles.ragged`). The launch's GM traffic (the denominator of its HBM share) sums
the records each instance issues; the L2 replay (:func:`~tilegraph.cost_model.cycles.
memory.hbm_traffic`) must see the same accesses, with the same bytes, or the reads it leaves
out never miss and never take L2 space: the share of the traffic that goes to DRAM falls
for no reason (issue 24: ViT-B/16 batch 16's DRAM traffic halved when the ragged windows
shrank by a tenth).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.runtime.test_cycle_model import _cube_kernel, _lowered, _matmul_model
from tilegraph.cost_model.cycles import CycleModelOptions
from tilegraph.cost_model.cycles.memory import hbm_traffic
from tilegraph.cost_model.cycles.program import KernelProgram, compile_kernel
from tilegraph.cost_model.cycles.ragged import ragged_records
from tilegraph.cost_model.cycles.simulate import plan_launch
from tilegraph.dialects.tile import Nd2NzOp
from tilegraph.hardware import hardware_preset

K, N = 768, 768


def _program(rows: int, platform: str) -> KernelProgram:
    module = _lowered(_matmul_model(rows, K, N), f"platform={platform}")
    return compile_kernel(_cube_kernel(module), hardware_preset(platform))


def _replayed(program: KernelProgram, blocks: int) -> tuple[int, int]:
    """(read, written) GM bytes of the accesses ``gm_accesses`` yields for every block."""
    read = written = 0
    for block in range(blocks):
        for index, _ in program.gm_accesses(block, blocks, 0):
            record = program.records[index]
            if record.gm_read:
                read += record.gm_bytes
            else:
                written += record.gm_bytes
    return read, written


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_the_l2_replay_sees_every_gm_byte_a_ragged_launch_charges(platform: str):
    """197 rows: the last M block is ragged (its window, mmad and fixpipe have a record
    per fractal count); the replayed accesses' bytes are the launch's GM traffic."""
    hw = hardware_preset(platform)
    program = _program(197, platform)
    assert program.ragged
    blocks = 4
    plan = plan_launch(program, hw, blocks, CycleModelOptions())
    assert _replayed(program, blocks) == (plan.traffic.read, plan.traffic.write)


def test_a_ragged_window_is_replayed_with_its_valid_bytes():
    """The ragged window of A is replayed with the record its extents pick: fewer bytes
    than a whole block's window, as the launch charges it."""
    program = _program(197, "ascend910b")
    sizes: set[int] = set()
    for block in range(2):
        for index, _ in program.gm_accesses(block, 2, 0):
            record = program.records[index]
            if isinstance(record.op, Nd2NzOp) and record.op.valid_rows is not None:
                sizes.add(record.gm_bytes)
    assert len(sizes) == 2, "a whole block's window and the ragged block's"


def test_a_ragged_window_split_into_rows_spreads_its_bytes_over_its_own_rows():
    """When the L2 model splits a window into rows (``gm_rows``: a window of at most
    ``MAX_GM_ROWS`` rows), a ragged window's bytes are spread over the rows it moves:
    replayed row by row, the launch's first reads of A miss as many bytes as when each
    window is one key. 208 rows: the ragged block's 5 fractals lie inside A, so no row is
    cut at the tensor's end."""
    hw = hardware_preset("ascend310p")
    program = _program(208, "ascend310p")
    first = next(
        i
        for i, r in enumerate(program.records)
        if isinstance(r.op, Nd2NzOp) and r.op.valid_rows is not None
    )
    op = program.records[first].op
    assert isinstance(op, Nd2NzOp)
    count = len(ragged_records(op, program.records[first], hw))
    whole = program.records[first + count - 1]
    window = op.gm_window()
    assert window is not None
    rows = (window[-2],), (208,)  # the split the model makes of windows up to 64 rows
    split = ragged_records(op, replace(whole, gm_rows=rows), hw)
    records = list(program.records)
    records[first : first + count] = split
    by_rows = replace(program, records=records)
    blocks, l2 = 2, 1 << 40  # every byte read once misses, once
    assert hbm_traffic(by_rows, blocks, l2).reads == pytest.approx(
        hbm_traffic(program, blocks, l2).reads, abs=208
    )
