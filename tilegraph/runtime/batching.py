"""Running the iterations of a parallel loop together (the fast executor's batching).

A loop marked ``tile.parallel`` writes disjoint parts of GM per iteration and keeps no
on-chip state across iterations. Its ``T`` iterations can then run as one: the induction
variable becomes the array of its ``T`` values, every index computed from it an array, and
every on-chip buffer written from varying data gets a leading batch dim of ``T`` (one slot
per iteration). An op whose operands do not vary runs once — what every iteration would
compute alike. A tile op runs its :meth:`~tilegraph.dialects.tile.TileOp.batched_kernel`
when it has one (``mmad`` as one batched matrix product, ``load3d`` as one gather, vector
ops on the whole batch), else its ordinary kernel once per iteration, in order.

The tiling is untouched: the same tiles, the same ops, the same order of accumulation per
tile; a tile-size bug shows up exactly as in the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.tile import (
    BlockIdxOp,
    BlockNumOp,
    LaunchOp,
    ReadOp,
    TileOp,
    WriteOp,
    scope_of,
)
from tilegraph.lowering.tiling.builder import PARALLEL_ATTR

_INDEX_OPS = (
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.FloorDivSIOp,
    arith.RemSIOp,
    arith.CmpiOp,
    arith.MinSIOp,
    arith.MaxSIOp,
)


_BATCHABLE = (TileOp, scf.ForOp, scf.YieldOp, arith.ConstantOp, arith.SelectOp, *_INDEX_OPS)


@dataclass(frozen=True)
class BatchPlan:
    trips: tuple[int, int, int]
    """(lower, upper, step) of the loop."""
    varying: frozenset[SSAValue]
    """Index values that differ per iteration (the induction variable and what it feeds)."""
    batched: tuple[SSAValue, ...]
    """On-chip buffers defined outside the loop that get one slot per iteration."""


_FOLDABLE = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
}


def _constant(value: SSAValue) -> int | None:
    """The value of an index known before the loop runs: a constant, a block query (the
    fast executor runs a launch's blocks as block 0 of 1), or +, -, * of such."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    if isinstance(op, BlockIdxOp | BlockNumOp):
        return 0 if isinstance(op, BlockIdxOp) else 1
    fold = _FOLDABLE.get(type(op))
    if fold is not None and isinstance(op, Operation):
        lhs, rhs = (_constant(v) for v in op.operands)
        if lhs is not None and rhs is not None:
            return fold(lhs, rhs)
    return None


def plan_batch(loop: scf.ForOp) -> BatchPlan | None:
    """How to run a parallel loop's iterations together, or None when it cannot."""
    if PARALLEL_ATTR not in loop.attributes or loop.iter_args:
        return None
    bounds = [_constant(v) for v in (loop.lb, loop.ub, loop.step)]
    if any(b is None for b in bounds):
        return None
    lb, ub, step = (int(b) for b in bounds)  # type: ignore[arg-type]
    body = [op for op in loop.body.block.walk() if op is not loop]
    inside = set(body)
    varying: set[SSAValue] = {loop.body.block.args[0]}
    batched: list[SSAValue] = []
    for op in body:
        if isinstance(op, LaunchOp | ReadOp | WriteOp) or not isinstance(op, _BATCHABLE):
            return None
    changed = True
    while changed:
        changed = False
        for op in body:
            if isinstance(op, _INDEX_OPS):
                if any(v in varying for v in op.operands) and op.results[0] not in varying:
                    varying.add(op.results[0])
                    changed = True
            elif isinstance(op, TileOp):
                written = op.written()
                if written is None or written in batched or scope_of(written) == "GM":
                    continue
                if written.owner in inside:
                    return None  # buffers are allocated at the kernel's entry
                if any(v in varying or v in batched for v in op.operands if v is not written):
                    batched.append(written)
                    changed = True
    for op in body:
        if isinstance(op, scf.ForOp) and any(v in varying for v in (op.lb, op.ub, op.step)):
            return None
    return BatchPlan((lb, ub, step), frozenset(varying), tuple(batched))


def one_by_one(kernel: Callable[..., Any], mask: Sequence[bool]) -> Callable[..., Any]:
    """A tile op's kernel run once per iteration of a batch, in order: operand ``i`` is
    sliced per iteration where ``mask[i]``."""

    def run(*args: Any) -> tuple[()]:
        count = next(len(a) for a, m in zip(args, mask, strict=True) if m)
        for t in range(count):
            kernel(*[a[t] if m else a for a, m in zip(args, mask, strict=True)])
        return ()

    return run
