"""The cycle model charges a ragged last M block's ``mmad`` by the fractals that remain.

ViT-B/16's 197 tokens are 13 fractals; on ascend910b the matmul's M blocks are 8 fractals,
so the second block holds 5. GE (and Ascend C's ``MmadParams``) multiplies 13 fractals'
rows, not the 16 of two whole blocks.
"""

from __future__ import annotations

from tests.runtime.test_cycle_model import _cube_kernel, _lowered, _matmul_model
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.cost_model.cycles.report import KernelCycles
from tilegraph.dialects.tile import Load2dOp, MmadOp
from tilegraph.hardware import hardware_preset

K, N = 768, 768


def _cube(rows: int) -> tuple[KernelCycles, list[MmadOp]]:
    module = _lowered(_matmul_model(rows, K, N), "platform=ascend910b")
    (kernel,) = [k for k in simulate_module(module).kernels if k.cube_flops]
    mmads = [op for op in _cube_kernel(module).walk() if isinstance(op, MmadOp)]
    return kernel, mmads


def test_197_rows_cost_13_fractals_of_cube_work():
    ragged, ragged_mmads = _cube(197)
    exact, _ = _cube(13 * 16)  # 208 rows: 13 whole fractals (GE's padding of 197)
    padded, padded_mmads = _cube(16 * 16)  # 256 rows: two whole blocks
    assert all(op.m is not None for op in ragged_mmads)
    assert all(op.m is None for op in padded_mmads)
    assert ragged.blocks > 1, "the launch should spread the blocks over cores"
    # every block charged by its own records (a whole block's and a ragged one's differ)
    assert ragged.cube_flops == exact.cube_flops
    assert padded.cube_flops * 13 == ragged.cube_flops * 16


def test_ragged_records_cost_the_valid_fractals():
    """A ragged ``mmad`` has one record per valid fractal count; each record's cube cycles
    are its fractal count times the whole block's per-fractal cycles."""
    hw = hardware_preset("ascend910b")
    module = _lowered(_matmul_model(197, K, N), "platform=ascend910b")
    program = compile_kernel(_cube_kernel(module), hw)
    records = [r for r in program.records if isinstance(r.op, MmadOp)]
    m1, n1 = records[0].op.valid_fractals()
    assert len(records) == m1 and program.ragged
    whole = records[-1].mac_cycles
    for fractals, record in enumerate(records, start=1):
        assert record.mac_cycles * m1 == whole * fractals


def test_ragged_l1_to_l0a_loads_move_the_valid_fractals():
    """The 197-row matmul's L1 -> L0A loads have one record per M fractal count, moving that
    many fractals' bytes; the L1 -> L0B loads (N whole) have one."""
    hw = hardware_preset("ascend910b")
    module = _lowered(_matmul_model(197, K, N), "platform=ascend910b")
    program = compile_kernel(_cube_kernel(module), hw)
    loads = [r for r in program.records if isinstance(r.op, Load2dOp)]
    into_a = [r for r in loads if r.path == "L1->L0A"]
    into_b = [r for r in loads if r.path == "L1->L0B"]
    m1 = into_a[0].op.ragged_fractals()
    assert len(into_a) == m1 > 1 and len(into_b) == 1
    whole = into_a[-1].moved_bytes
    for fractals, record in enumerate(into_a, start=1):
        assert record.moved_bytes * m1 == whole * fractals
    assert [r.cost for r in into_a] == sorted(r.cost for r in into_a)
    assert into_a[0].cost < into_a[-1].cost
