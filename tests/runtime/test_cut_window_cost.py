"""The cycle model charges a cube-path ``tile.copy`` cut at its GM tensor's end by what it
moves (:mod:`tilegraph.cost_model.cycles.cut_window`).

A (197 x 768) @ (768 x 768) fp16 matmul: 197 rows are 13 fractals, and the last M block
of the tiling is ragged. With A already FRACTAL_NZ in GM (ascend910b), A's L1 window is a
``tile.copy`` of whole fractals; on the 310P (no L0C -> GM) the output tile leaves UB by a
``tile.copy`` to GM. Both move only the part of the window inside the tensor.
"""

from __future__ import annotations

from math import ceil

from tests.lowering.test_matmul_ragged import _matmul
from tests.lowering.tile_specs import split_target
from tests.runtime.test_cycle_model import _cube_kernel, _lowered, _matmul_model
from tests.runtime.test_l2_ragged import _replayed
from tilegraph.cost_model.cycles import CycleModelOptions, simulate_module
from tilegraph.cost_model.cycles.program import OpRecord, compile_kernel
from tilegraph.cost_model.cycles.report import KernelCycles
from tilegraph.cost_model.cycles.simulate import plan_launch
from tilegraph.dialects.tile import CopyOp
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.hardware import hardware_preset
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

K, N = 768, 768
FRACTAL_BYTES = 16 * 16 * 2  # fp16


def _nz_a_module(rows: int):
    module, _ = _matmul([rows, K], [K, N], "float16", nz_a=True)
    target = split_target("platform=ascend910b")
    run_pipeline(
        "{},O1,lower-graph-to-kernels,{},split-cores,inject-sync".format(*target),
        make_context(),
        module,
    )
    return module


def _cube(module) -> KernelCycles:
    (kernel,) = [k for k in simulate_module(module).kernels if k.cube_flops]
    return kernel


def _copies(module, platform: str, path: str) -> list[OpRecord]:
    program = compile_kernel(_cube_kernel(module), hardware_preset(platform))
    return [r for r in program.records if isinstance(r.op, CopyOp) and r.path == path]


def test_nz_operand_window_moves_the_fractals_it_covers():
    """A's NZ window (K1, M1 fractals) cut at M's 13th fractal: one record per M fractal
    count, each moving that many fractals per K fractal of the window."""
    records = _copies(_nz_a_module(197), "ascend910b", "GM->L1")
    copy = records[0].op
    assert isinstance(copy, CopyOp)
    window = memref_shape(copy.dst)  # (K1, M1, 16, 16)
    assert len(records) == window[1] > 1
    for m_fractals, record in enumerate(records, start=1):
        assert record.moved_bytes == window[0] * m_fractals * FRACTAL_BYTES
        assert record.gm_bytes >= record.moved_bytes
    assert records[0].cost < records[-1].cost


def test_nz_operand_197_rows_read_as_208():
    """Charged by the fractals it covers, the 197-row NZ operand is read as the 208-row one
    (13 whole fractals, nothing cut); charged whole it read 256 rows' (two whole blocks)."""
    ragged, exact = _cube(_nz_a_module(197)), _cube(_nz_a_module(13 * 16))
    padded = _cube(_nz_a_module(16 * 16))
    assert ragged.bytes_per_path["GM->L1"] == exact.bytes_per_path["GM->L1"]
    assert ragged.bytes_per_path["GM->L1"] < padded.bytes_per_path["GM->L1"]


def test_310p_store_after_fixpipe_moves_the_valid_rows():
    """On the 310P the output leaves UB by MTE3: 197 x 768 fp16 (rows whole 32 B blocks)
    stores exactly the tensor's bytes, not the whole blocks' 256 rows."""
    module = _lowered(_matmul_model(197, K, N), "platform=ascend310p")
    assert _cube(module).bytes_per_path["UB->GM"] == 197 * N * 2


def test_310p_store_records_by_rows_and_blocks():
    """A store cut along rows and along its contiguous columns (70 x 200 output): one
    record per (rows, 32 B blocks) and the bytes of that many rows of those blocks."""
    module = _lowered(_matmul_model(70, K, 200), "platform=ascend310p")
    records = _copies(module, "ascend310p", "UB->GM")
    copy = records[0].op
    assert isinstance(copy, CopyOp)
    rows, cols = memref_shape(copy.src)
    cut_rows, cut_cols = 70 % rows != 0 or rows > 70, 200 % cols != 0 or cols > 200
    blocks = ceil(cols / 16)
    assert len(records) == (rows if cut_rows else 1) * (blocks if cut_cols else 1) > 1
    if cut_rows and cut_cols:  # the first axis major
        for i, record in enumerate(records):
            r, b = divmod(i, blocks)
            assert record.moved_bytes == (r + 1) * min(cols, (b + 1) * 16) * 2
    store = _cube(module).bytes_per_path["UB->GM"]
    assert store == 70 * ceil(200 * 2 / 32) * 32  # each row's run in whole 32 B blocks


def test_the_l2_replay_sees_the_cut_windows_bytes():
    """The NZ operand's cut windows are replayed with the bytes the launch charges."""
    hw = hardware_preset("ascend910b")
    program = compile_kernel(_cube_kernel(_nz_a_module(197)), hw)
    assert program.ragged
    plan = plan_launch(program, hw, 4, CycleModelOptions())
    assert _replayed(program, 4) == (plan.traffic.read, plan.traffic.write)
