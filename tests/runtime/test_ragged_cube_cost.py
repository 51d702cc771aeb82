"""The cycle model charges a ragged last M block's ``mmad`` and its L1 -> L0 loads by the
fractals that remain, its GM -> L1 window and its fixpipe by the rows that remain.

ViT-B/16's 197 tokens are 13 fractals; on ascend910b the matmul's M blocks are 8 fractals,
so the second block holds 5. GE (and Ascend C's ``MmadParams``) multiplies 13 fractals'
rows, not the 16 of two whole blocks.
"""

from __future__ import annotations

from math import ceil

from tests.runtime.test_cycle_model import _cube_kernel, _lowered, _matmul_model
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.cost_model.cycles.report import KernelCycles
from tilegraph.cost_model.tile_costs import dma_head_cycles
from tilegraph.dialects.tile import FixpipeOp, Load2dOp, MmadOp, Nd2NzOp
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
    mmad = records[0].op
    assert isinstance(mmad, MmadOp)
    m1, n1 = mmad.valid_fractals()
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
    load = into_a[0].op
    assert isinstance(load, Load2dOp)
    m1 = load.ragged_fractals()
    assert len(into_a) == m1 > 1 and len(into_b) == 1
    whole = into_a[-1].moved_bytes
    for fractals, record in enumerate(into_a, start=1):
        assert record.moved_bytes * m1 == whole * fractals
    assert [r.cost for r in into_a] == sorted(r.cost for r in into_a)
    assert into_a[0].cost < into_a[-1].cost


def _records(rows: int, op_class: type) -> list:
    """The compiled ascend910b program's records of ``op_class`` for a (rows x K) @ (K x N)
    fp16 matmul."""
    hw = hardware_preset("ascend910b")
    module = _lowered(_matmul_model(rows, K, N), "platform=ascend910b")
    program = compile_kernel(_cube_kernel(module), hw)
    return [r for r in program.records if isinstance(r.op, op_class)]


def test_ragged_gm_to_l1_window_moves_the_valid_rows():
    """The 197-row matmul's GM -> L1 window of A (``nd2nz ... rows``) has one record per
    row count (the DMA moves nValue rows, not whole fractals of rows); each moves that many
    rows' bytes, in pipe time the model's GM -> L1 rate gives them (its head plus bytes /
    rate at the runs' efficiency) and GM traffic of those bytes; B's window (N whole) has
    one record."""
    hw = hardware_preset("ascend910b")
    windows = _records(197, Nd2NzOp)
    of_a = [r for r in windows if r.op.valid_rows is not None]
    of_b = [r for r in windows if r.op.valid_rows is None and r.op.valid_cols is None]
    r1, c1 = of_a[0].op.whole_fractals()
    assert len(of_a) == 16 * r1 > 1 and len(of_b) == 1
    whole = of_a[-1]
    rate = hw.dma_bytes_per_cycle["GM->L1"]
    for rows, record in enumerate(of_a, start=1):
        assert record.moved_bytes * 16 * r1 == whole.moved_bytes * rows
        burst = record.op.gm_burst_bytes((rows, c1))
        pipe = hw.dma_issue_cycles + ceil(record.moved_bytes / (rate * hw.gm_efficiency(burst)))
        assert record.cost == pipe
        assert record.gm_bytes == ceil(record.moved_bytes / hw.gm_efficiency(burst))
    assert of_a[0].cost < whole.cost


def test_ragged_fixpipe_writes_the_valid_rows():
    """The 197-row matmul's fixpipe (``m``) has one record per row count: FIX moves
    ``mSize`` rows exactly, each of ``ceil(nSize / 16)`` 16-column (C0) blocks (pypto's
    A2/A3 model, ``CalcFixL0cOut``). A record of ``r`` rows reads ``r`` rows of the fp32
    accumulator and writes them as fp16, in the cycles of the model's FIX read and write
    rates; its GM runs are the rows' (one run per row, or the rows together when the block
    spans the output's width)."""
    hw = hardware_preset("ascend910b")
    fixpipes = _records(197, FixpipeOp)
    m1, n1 = fixpipes[0].op.valid_fractals()
    assert len(fixpipes) == 16 * m1 > 16 and all(r.op.n is None for r in fixpipes)
    head = dma_head_cycles(hw, fixpipes[0].path)
    for rows, record in enumerate(fixpipes, start=1):
        elements = rows * n1 * 16
        assert record.moved_bytes == elements * 4  # the fp32 accumulator read
        written = elements * 2  # fp16 out
        burst = rows * N * 2 if n1 * 16 == N else n1 * 16 * 2
        write_rate = hw.fix_write_bytes_per_cycle * hw.gm_efficiency(burst)
        read = ceil(elements * 4 / hw.fix_l0c_read_bytes_per_cycle)
        assert record.cost == head + read + ceil(written / write_rate)
        assert record.gm_bytes == ceil(written / hw.gm_efficiency(burst))
    # the 69-row tail (197 = 128 + 69) is charged 69 rows, not the 80 of its 5 fractals
    assert fixpipes[68].moved_bytes * 80 == fixpipes[79].moved_bytes * 69


def test_197_rows_move_the_gm_bytes_of_their_rows():
    """Charged by valid rows, the 197-row matmul reads A's 197 rows (B as the 208-row one
    does), and its fixpipe reads 197 rows of the accumulator (FIX moves rows; 208 rows
    were charged while it was charged by fractals), where charging whole blocks would move
    those of 256 rows."""
    ragged, _ = _cube(197)
    exact, _ = _cube(13 * 16)
    padded, _ = _cube(16 * 16)
    assert ragged.bytes_per_path["L0C->GM"] == 197 * N * 4  # the fp32 accumulator's rows
    assert exact.bytes_per_path["L0C->GM"] == 208 * N * 4
    # A is read once per N block: 11 rows fewer each time, B's reads unchanged
    a_rows_less = exact.bytes_per_path["GM->L1"] - ragged.bytes_per_path["GM->L1"]
    reads, rest = divmod(a_rows_less, (208 - 197) * K * 2)
    assert rest == 0 and reads >= 1 and (N // 16) % reads == 0
    assert ragged.bytes_per_path["GM->L1"] < padded.bytes_per_path["GM->L1"]


def test_ragged_k_step_charges_the_valid_k_fractals():
    """(128 x 200) @ (200 x 128) on ascend910b: K's 13 fractals in base K steps of 8 leave
    5 in the last step. Its ``mmad`` has one record per K fractal count, each charged that
    many fractals' cube cycles (the whole step's per fractal); its L1 -> L0A loads move
    that many fractals' bytes."""
    hw = hardware_preset("ascend910b")
    module = _lowered(_matmul_model(128, 200, 128), "platform=ascend910b")
    program = compile_kernel(_cube_kernel(module), hw)
    mmads = [r for r in program.records if isinstance(r.op, MmadOp)]
    mmad = mmads[0].op
    assert isinstance(mmad, MmadOp)
    k1 = mmad.k_fractals()
    assert mmad.k is not None and len(mmads) == k1 > 5
    for fractals, record in enumerate(mmads, start=1):
        assert record.mac_cycles * k1 == mmads[-1].mac_cycles * fractals
        assert record.flops * k1 == mmads[-1].flops * fractals
    into_a = [r for r in program.records if isinstance(r.op, Load2dOp) and r.path == "L1->L0A"]
    assert len(into_a) == k1
    for fractals, record in enumerate(into_a, start=1):
        assert record.moved_bytes * k1 == into_a[-1].moved_bytes * fractals
    (kernel,) = [k for k in simulate_module(module).kernels if k.cube_flops]
    assert kernel.cube_flops == 2 * 128 * (13 * 16) * 128  # 13 fractals of K, not 16


def test_a_ragged_window_reads_its_facts_once(monkeypatch):
    """A ragged nd2nz has a record per row count (hundreds): its window's facts are read
    from its types once for all of them (reading an operand's type costs microseconds;
    2112 records of a fully ragged 999 x 1000 matmul took ~1 ms each), and the records are
    those the op's own methods give."""
    hw = hardware_preset("ascend910b")
    module = _lowered(_matmul_model(197, K, N), "platform=ascend910b")
    kernel = _cube_kernel(module)
    reads: list[Nd2NzOp] = []
    facts = Nd2NzOp.window_facts

    def counted(op: Nd2NzOp):  # noqa: ANN202
        reads.append(op)
        return facts(op)

    monkeypatch.setattr(Nd2NzOp, "window_facts", counted)
    program = compile_kernel(kernel, hw)
    ragged = [
        (r, r.op)
        for r in program.records
        if isinstance(r.op, Nd2NzOp) and r.op.valid_rows is not None
    ]
    assert len(ragged) > 100
    assert len(reads) < len(ragged) // 10  # the whole ops' few, none per record
    monkeypatch.undo()
    _, c1 = ragged[0][1].whole_fractals()
    for rows, (record, op) in enumerate(ragged, start=1):
        assert record.moved_bytes == op.moved_bytes((rows, c1))
