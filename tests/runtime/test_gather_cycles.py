"""The cycle model of a gather kernel (tiling/gather.py): the scalar reads of the indices
on S, the row DMAs that wait for them, and the L2 model's view of offsets read from data
(each row DMA a miss: which rows an index tensor picks is not known before it runs)."""

from __future__ import annotations

from xdsl.dialects import func

from tests.lowering.test_gather_kernels import _module
from tests.lowering.test_tile_differential import run_levels
from tilegraph.cost_model.cycles.core import run_core
from tilegraph.cost_model.cycles.memory import hbm_traffic
from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.cost_model.tile_costs import SCALAR_READ_CYCLES
from tilegraph.dialects.index_arith import DataDependent
from tilegraph.dialects.tile import CopyFlatOp
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.kernel_walk import KernelWalk
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline

TEST = hardware_preset("test")


def _gather_kernel() -> func.FuncOp:
    module, inputs = _module("embedding_int64")
    run_levels(module, inputs, "test")
    run_pipeline("inject-sync", make_context(), module)
    (fn,) = [f for f in module.ops if isinstance(f, func.FuncOp) and "gather" in f.sym_name.data]
    return fn


def test_row_dmas_start_after_the_scalar_read_of_their_index():
    program = compile_kernel(_gather_kernel(), TEST)
    names = [r.name for r in program.records]
    reads = [i for i, r in enumerate(program.records) if r.name == "get_value"]
    assert [program.records[i].cost for i in reads] == [SCALAR_READ_CYCLES]
    rows = [i for i, r in enumerate(program.records) if r.after_scalar]
    assert [names[i] for i in rows] == ["copy_flat"]  # the row DMA; not the index load
    for use_flags in (False, True):
        run = run_core(program, 0, 1, float("inf"), use_flags, trace=True)
        last_read = None
        for s in run.slices:
            if s.record in reads:
                last_read = s.end
            elif s.record in rows:
                assert last_read is not None and s.start >= last_read


def test_offsets_read_from_data_never_hit_l2():
    """Every row DMA misses, even of a row read before: its key is a DataDependent."""
    program = compile_kernel(_gather_kernel(), TEST)
    (row,) = [r for r in program.records if r.after_scalar]
    accesses = list(program.gm_accesses(0, 1))
    row_keys = [where for i, where in accesses if program.records[i] is row]
    assert len(row_keys) == 35 and all(isinstance(w[1], DataDependent) for w in row_keys)
    loads = [program.records[i] for i, _ in accesses]
    index_bytes = sum(r.gm_bytes for r in loads if r.gm_read and not r.after_scalar)
    assert hbm_traffic(program, 1, TEST.l2_bytes).reads == 35 * row.gm_bytes + index_bytes


def test_data_dependent_values_take_address_arithmetic_only():
    value = DataDependent()
    assert isinstance(value * 40 + 3 - 1, DataDependent)
    assert value * 40 != value * 40  # two reads never count as the same bytes
    try:
        range(value)  # type: ignore[call-overload]
    except TypeError:
        pass
    else:
        raise AssertionError("a loop bound cannot be a value read from data")


def test_the_kernel_walk_holds_reads_as_data_dependent():
    walk = KernelWalk(_gather_kernel())
    offsets = [
        walk.value(op.src_offset)
        for op in walk
        if isinstance(op, CopyFlatOp) and op.partial is not None
    ]
    assert len(offsets) == 35 and all(isinstance(v, DataDependent) for v in offsets)
