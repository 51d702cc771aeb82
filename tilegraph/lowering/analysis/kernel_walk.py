"""The tile ops one block of a kernel issues, in program order, without touching data.

:class:`KernelWalk` runs a tiled kernel's control flow — ``scf.for`` loops, index
arithmetic, ``tile.block_idx`` / ``tile.block_num`` bound to one block,
``tile.sub_block_idx`` to one sub-block of a mix kernel's core group, a value read from
data (``tile.get_value``) as :class:`~tilegraph.dialects.index_arith.DataDependent` — and
yields every tile op instance it reaches. Models of the hardware that need the order of
instructions but not their numbers (the pipe-queue checker, the cycle model) walk kernels
with it; during the walk :meth:`KernelWalk.value` gives an index operand's current value
and :meth:`KernelWalk.slot` the slot a multi-buffered buffer is in.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from xdsl.dialects import arith, func, scf
from xdsl.ir import Block, Operation, SSAValue

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import BlockIdxOp, BlockNumOp, SubBlockIdxOp, TileOp
from tilegraph.lowering.analysis.buffers import buffer_slots, slot_loop


class KernelWalkError(ValueError):
    """The kernel has control flow the walk cannot follow (the message names the op)."""


_TILE, _BLOCK, _BLOCKS, _SUB_BLOCK, _CONST, _EVAL, _FOR, _YIELD, _CANNOT = range(9)


class WalkPlan:
    """What a walk does at each op of a kernel, worked out once per block of IR (the op's
    kind, its operands, its evaluator, a loop's bounds and arguments): reading an op's
    operands and testing its class cost microseconds, and a walk meets each op once per
    iteration of its loops, for every block of the launch. Share one plan between the
    walks of one kernel (:func:`~tilegraph.lowering.analysis.sync_check.check_kernel`
    walks every block); it holds while the kernel is unchanged."""

    def __init__(self) -> None:
        self._steps: dict[Block, list[tuple[Any, ...]]] = {}
        self.blocks_planned = 0
        """Blocks of IR planned so far (each once)."""
        self.op_facts: dict[Operation, Any] = {}
        """What a client of the walks reads of each tile op it meets, kept here to read it
        once per op (:func:`~tilegraph.lowering.analysis.sync_check.trace_kernel`: a
        flag's event, the buffers an op accesses)."""

    def steps(self, block: Block) -> list[tuple[Any, ...]]:
        found = self._steps.get(block)
        if found is None:
            found = self._steps[block] = [_step(op) for op in block.ops]
            self.blocks_planned += 1
        return found


def _step(op: Operation) -> tuple[Any, ...]:
    """(kind, what the walk needs of ``op``) — see :meth:`KernelWalk._block`."""
    if isinstance(op, TileOp):
        if isinstance(op, BlockIdxOp):
            return (_BLOCK, op.result)
        if isinstance(op, BlockNumOp):
            return (_BLOCKS, op.result)
        if isinstance(op, SubBlockIdxOp):
            return (_SUB_BLOCK, op.result)
        return (_TILE, op, tuple(op.results))
    if isinstance(op, arith.ConstantOp):
        known = index_arith.constant(op)
        return (_CONST, op.result, op.value if known is None else known)
    if (evaluate := index_arith.evaluator(op)) is not None:
        return (_EVAL, op.results[0], evaluate, tuple(op.operands))
    if isinstance(op, scf.ForOp):
        body = op.body.block
        return (
            _FOR,
            op,
            (op.lb, op.ub, op.step),
            body,
            tuple(op.iter_args),
            tuple(body.args),
            tuple(op.results),
        )
    if isinstance(op, scf.YieldOp | func.ReturnOp):
        return (_YIELD, tuple(op.operands))
    return (_CANNOT, op.name)


class KernelWalk:
    """Iterate over the tile ops block ``block`` of ``blocks`` issues running ``fn`` (as
    sub-block ``sub_block`` of its group: a mix kernel's AIV part).

    ``max_trips``: run at most that many iterations of every loop — a short walk that still
    shows every pattern of the loop body (first iteration, steady state, slot reuse).
    ``plan``: the kernel's :class:`WalkPlan`, shared with other walks of it (default: one
    of this walk's own)."""

    def __init__(
        self,
        fn: func.FuncOp,
        block: int = 0,
        blocks: int = 1,
        max_trips: int | None = None,
        sub_block: int = 0,
        plan: WalkPlan | None = None,
    ):
        self.fn = fn
        self.block = block
        self.sub_block = sub_block
        self.blocks = blocks
        self.max_trips = max_trips
        self.plan = plan if plan is not None else WalkPlan()
        self.values: dict[SSAValue, Any] = {}
        self.iteration: dict[scf.ForOp, int] = {}
        """Iterations of each open loop done so far (0 in the first)."""
        self._slot_loops: dict[SSAValue, tuple[scf.ForOp | None, int]] = {}
        self._yielded: list[Any] = []

    def value(self, v: SSAValue) -> Any:
        return self.values[v]

    def slot(self, buffer: SSAValue) -> int:
        """The slot ``buffer`` is in now (0 unless it is multi-buffered)."""
        found = self._slot_loops.get(buffer)
        if found is None:
            slots = buffer_slots(buffer)
            found = self._slot_loops[buffer] = (slot_loop(buffer) if slots > 1 else None, slots)
        loop, slots = found
        if loop is None:
            return 0
        return self.iteration.get(loop, 0) % slots

    def __iter__(self) -> Iterator[TileOp]:
        return self._block(self.fn.body.block)

    def _block(self, block: Block) -> Iterator[TileOp]:
        values = self.values
        for step in self.plan.steps(block):
            kind = step[0]
            if kind == _TILE:
                for result in step[2]:  # read from data (tile.get_value)
                    values[result] = index_arith.DataDependent()
                yield step[1]
            elif kind == _EVAL:
                values[step[1]] = step[2](*(values[v] for v in step[3]))
            elif kind == _CONST:
                values[step[1]] = step[2]
            elif kind == _FOR:
                yield from self._loop(*step[1:])
            elif kind == _YIELD:
                self._yielded = [values[v] for v in step[1]]
            elif kind == _BLOCK:
                values[step[1]] = self.block
            elif kind == _BLOCKS:
                values[step[1]] = self.blocks
            elif kind == _SUB_BLOCK:
                values[step[1]] = self.sub_block
            else:
                raise KernelWalkError(
                    f"@{self.fn.sym_name.data}: cannot walk '{step[1]}' (not a tile op, loop "
                    "or index arithmetic)"
                )

    def _loop(
        self,
        loop: scf.ForOp,
        bounds: tuple[SSAValue, SSAValue, SSAValue],
        body: Block,
        iter_args: tuple[SSAValue, ...],
        args: tuple[SSAValue, ...],
        results: tuple[SSAValue, ...],
    ) -> Iterator[TileOp]:
        values = self.values
        lb, ub, step = (values[v] for v in bounds)
        carried = [values[v] for v in iter_args]
        trips = range(lb, ub, step)
        if self.max_trips is not None:
            trips = trips[: self.max_trips]
        iv, carried_args = args[0], args[1:]
        for n, index in enumerate(trips):
            self.iteration[loop] = n
            values[iv] = index
            for arg, value in zip(carried_args, carried, strict=True):
                values[arg] = value
            yield from self._block(body)
            if carried:
                carried = self._yielded
        self.iteration.pop(loop, None)
        for result, value in zip(results, carried, strict=True):
            values[result] = value
