"""``split-cores{cores=0}``: a tiled kernel's parallel loop shared out over the cores.

Ascend runs a kernel as ``n`` blocks, one per core, each computing part of the output. For
every tiled kernel this pass picks one ``tile.parallel`` loop with constant bounds — the
outermost whose trip count reaches the core count, else the one with the most trips —
among the loops nested only in parallel loops (so that every block may run the loops
around it in full), and gives block ``b`` of ``n`` its iterations ``b, b + n, b + 2n, ...``
(round robin, so that ragged tails spread)::

    %b = tile.block_idx
    %n = tile.block_num
    %first = lb + b * step
    scf.for %i = %first to %ub step (step * n) {tile.parallel}

Every launch of the kernel gets ``blocks = min(cores, trips)``: cube kernels on the preset's
cube cores, vector kernels on its vector cores (910B's AIC / AIV split; a coupled 310P core
counts once). ``cores`` overrides the preset's count (studies of scaling). A kernel with no
such loop keeps one block. Kernels already split are left alone.

Statistics: ``split-kernels``, ``single-block-kernels``, ``blocks`` (summed over kernels).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.tile import BlockIdxOp, BlockNumOp, LaunchOp
from tilegraph.dialects.tile.base import module_preset
from tilegraph.lowering.kernel_body import TILES_ATTR, kernel_unit
from tilegraph.lowering.tiling.builder import PARALLEL_ATTR
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def loop_trips(loop: scf.ForOp) -> int | None:
    """Iterations of a loop with constant bounds (None otherwise)."""
    lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return len(range(lb, ub, step))


def _parallel_loops(block_owner: Operation) -> list[tuple[scf.ForOp, int]]:
    """Parallel loops with constant bounds reachable through parallel loops only, outermost
    first, with their trip counts."""
    found: list[tuple[scf.ForOp, int]] = []
    for region in block_owner.regions:
        for block in region.blocks:
            for op in block.ops:
                if not isinstance(op, scf.ForOp) or PARALLEL_ATTR not in op.attributes:
                    continue
                trips = loop_trips(op)
                if trips is None:
                    continue
                found.append((op, trips))
                found.extend(_parallel_loops(op))
    return found


def choose_split_loop(fn: func.FuncOp, cores: int) -> tuple[scf.ForOp, int] | None:
    """The loop to share out over ``cores`` cores, with its trip count, or None."""
    candidates = [(loop, trips) for loop, trips in _parallel_loops(fn) if trips > 1]
    if not candidates:
        return None
    for loop, trips in candidates:
        if trips >= cores:
            return loop, trips
    return max(candidates, key=lambda c: c[1])


def split_loop(loop: scf.ForOp) -> None:
    """Give block ``b`` of ``n`` the iterations ``lb + b·step, lb + (b + n)·step, ...``."""
    fn = loop.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    assert isinstance(fn, func.FuncOp)
    entry = fn.body.block
    index, count = BlockIdxOp(), BlockNumOp()
    index.result.name_hint, count.result.name_hint = "block", "blocks"
    anchor = entry.first_op
    assert anchor is not None
    entry.insert_ops_before([index, count], anchor)
    new_ops: list[Operation] = []

    def emit(op: Operation, name: str) -> SSAValue:
        op.results[0].name_hint = name
        new_ops.append(op)
        return op.results[0]

    step, lb = _constant(loop.step), _constant(loop.lb)
    offset = index.result if step == 1 else emit(arith.MuliOp(index.result, loop.step), "offset")
    first = offset if lb == 0 else emit(arith.AddiOp(loop.lb, offset), "first")
    stride = count.result if step == 1 else emit(arith.MuliOp(loop.step, count.result), "stride")
    parent = loop.parent_block()
    assert parent is not None
    if new_ops:
        parent.insert_ops_before(new_ops, loop)
    loop.operands = [first, loop.ub, stride, *loop.iter_args]


def _is_split(fn: func.FuncOp) -> bool:
    return any(isinstance(op, BlockIdxOp) for op in fn.walk())


@register_pass
@dataclass(frozen=True)
class SplitCoresPass(ModulePass):
    """Share each tiled kernel's parallel loop out over the preset's cores."""

    name = "split-cores"

    cores: int = 0
    """Cores to use (0: the preset's cube cores for cube kernels, vector cores for vector
    kernels)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hw = module_preset(op)
        blocks_of: dict[str, int] = {}
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            unit = kernel_unit(fn)
            if unit not in ("cube", "vector") or TILES_ATTR not in fn.attributes:
                continue
            if _is_split(fn):
                continue
            cores = self.cores or (hw.cube_cores if unit == "cube" else hw.vector_cores)
            chosen = choose_split_loop(fn, cores) if cores > 1 else None
            if chosen is None:
                stats.add("single-block-kernels")
                continue
            loop, trips = chosen
            split_loop(loop)
            blocks_of[fn.sym_name.data] = min(cores, trips)
            stats.add("split-kernels")
            stats.add("blocks", min(cores, trips))
        for launch in op.walk():
            if isinstance(launch, LaunchOp):
                blocks = blocks_of.get(launch.callee.string_value())
                if blocks is not None:
                    launch.blocks = IntegerAttr(blocks, i64)
