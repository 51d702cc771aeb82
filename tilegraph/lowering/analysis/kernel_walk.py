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
from xdsl.ir import Block, SSAValue

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import BlockIdxOp, BlockNumOp, SubBlockIdxOp, TileOp
from tilegraph.lowering.analysis.buffers import buffer_slots, slot_loop


class KernelWalkError(ValueError):
    """The kernel has control flow the walk cannot follow (the message names the op)."""


class KernelWalk:
    """Iterate over the tile ops block ``block`` of ``blocks`` issues running ``fn`` (as
    sub-block ``sub_block`` of its group: a mix kernel's AIV part).

    ``max_trips``: run at most that many iterations of every loop — a short walk that still
    shows every pattern of the loop body (first iteration, steady state, slot reuse)."""

    def __init__(
        self,
        fn: func.FuncOp,
        block: int = 0,
        blocks: int = 1,
        max_trips: int | None = None,
        sub_block: int = 0,
    ):
        self.fn = fn
        self.block = block
        self.sub_block = sub_block
        self.blocks = blocks
        self.max_trips = max_trips
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
        for op in block.ops:
            if isinstance(op, TileOp):
                if isinstance(op, BlockIdxOp):
                    values[op.result] = self.block
                elif isinstance(op, BlockNumOp):
                    values[op.result] = self.blocks
                elif isinstance(op, SubBlockIdxOp):
                    values[op.result] = self.sub_block
                else:
                    for result in op.results:  # read from data (tile.get_value)
                        values[result] = index_arith.DataDependent()
                    yield op
            elif isinstance(op, arith.ConstantOp):
                known = index_arith.constant(op)
                values[op.result] = op.value if known is None else known
            elif (evaluate := index_arith.evaluator(op)) is not None:
                values[op.results[0]] = evaluate(*(values[v] for v in op.operands))
            elif isinstance(op, scf.ForOp):
                yield from self._loop(op)
            elif isinstance(op, scf.YieldOp | func.ReturnOp):
                self._yielded = [values[v] for v in op.operands]
            else:
                raise KernelWalkError(
                    f"@{self.fn.sym_name.data}: cannot walk '{op.name}' (not a tile op, loop "
                    "or index arithmetic)"
                )

    def _loop(self, loop: scf.ForOp) -> Iterator[TileOp]:
        values = self.values
        lb, ub, step = (values[v] for v in (loop.lb, loop.ub, loop.step))
        body = loop.body.block
        carried = [values[v] for v in loop.iter_args]
        trips = range(lb, ub, step)
        if self.max_trips is not None:
            trips = trips[: self.max_trips]
        for n, iv in enumerate(trips):
            self.iteration[loop] = n
            values[body.args[0]] = iv
            for arg, value in zip(body.args[1:], carried, strict=True):
                values[arg] = value
            yield from self._block(body)
            if carried:
                carried = self._yielded
        self.iteration.pop(loop, None)
        for result, value in zip(loop.results, carried, strict=True):
            values[result] = value
