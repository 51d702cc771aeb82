"""A per-kernel transform run once per distinct kernel of a module.

A model repeats its layers: piper's tashkeel has a dozen GRU kernels that differ only in
their names, their locations and the weights they are passed. ``inject-sync`` on one of
them takes seconds (the implication check walks the kernel once per flag), and gives each
the same flags. :class:`KernelMemo` keys a kernel by its IR printed under a fixed name
and without its values' name hints (the printer leaves locations out) and by the other
inputs of the transform (a launch's blocks), transforms the first of each key, and gives
every later kernel of that key a copy of the first one's transformed body: the ops the
kernels had keep their own locations and name hints (matched by walk order, which the
transform leaves in place: it only inserts and removes ops of its own), the ops the
transform added get the kernel's location.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, SSAValue

T = TypeVar("T")

_NAME = StringAttr("kernel")


def kernel_key(fn: func.FuncOp, *extra: Hashable) -> tuple[Hashable, ...]:
    """``fn``'s IR under a fixed name and without its values' name hints (a kernel's
    arguments are named after the tensors it is passed), with ``extra``: equal keys,
    equal kernels."""
    hinted: list[tuple[SSAValue, str]] = []
    for op in fn.walk():
        values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
        hinted += [(v, v.name_hint) for v in values if v.name_hint is not None]
    name = fn.sym_name
    fn.sym_name = _NAME
    for value, _ in hinted:
        value.name_hint = None
    try:
        text = str(fn)
    finally:
        fn.sym_name = name
        for value, hint in hinted:
            value.name_hint = hint
    return (text, *extra)


@dataclass
class _Done(Generic[T]):
    fn: func.FuncOp
    """The first kernel of the key, transformed."""
    positions: list[int]
    """Where each op it had before (in walk order) is in its walk order after."""
    result: T


@dataclass
class KernelMemo(Generic[T]):
    """Transforms once per key (see the module docstring); one per pass run."""

    done: dict[tuple[Hashable, ...], _Done[T]] = field(default_factory=dict)

    def apply(self, fn: func.FuncOp, transform: Callable[..., T], *extra: Hashable) -> T:
        """``transform(fn, *extra)`` (in place), or the copy of the transformed body of a
        kernel equal to ``fn`` with equal ``extra``, and that transform's result."""
        key = kernel_key(fn, *extra)
        found = self.done.get(key)
        if found is None:
            before = list(fn.walk())
            result = transform(fn, *extra)
            after = {op: n for n, op in enumerate(fn.walk())}
            self.done[key] = _Done(fn, [after[op] for op in before], result)
            return result
        copy = found.fn.clone()
        ops = list(copy.walk())
        added = set(range(len(ops))) - set(found.positions)
        for op, position in zip(fn.walk(), found.positions, strict=True):
            _take_names(op, ops[position])
        for n in added:
            ops[n].location = fn.location
        old = fn.body.block
        fn.body.detach_block(old)
        old.erase()
        copy.body.move_blocks(fn.body)
        return found.result


def _take_names(op: Operation, twin: Operation) -> None:
    """``twin`` (``op``'s place in the copy) gets ``op``'s location and the name hints of
    its results and of its blocks' arguments (a kernel's arguments are named after the
    tensors it is passed)."""
    twin.location = op.location
    for mine, theirs in zip(op.results, twin.results, strict=True):
        theirs.name_hint = mine.name_hint
    for region, copied in zip(op.regions, twin.regions, strict=True):
        for block, twin_block in zip(region.blocks, copied.blocks, strict=True):
            for mine, theirs in zip(block.args, twin_block.args, strict=True):
                theirs.name_hint = mine.name_hint
