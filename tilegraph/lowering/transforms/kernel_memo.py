"""A per-kernel transform run once per distinct kernel of a module.

A model repeats its layers: piper's tashkeel has a dozen GRU kernels that differ only in
their names, their locations and the weights they are passed. ``inject-sync`` on one of
them takes seconds (the implication check walks the kernel once per flag), and gives each
the same flags. :class:`KernelMemo` keys a kernel by its structure (:func:`kernel_key`:
what its IR prints but its name, its values' name hints and its locations) and by the other
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
from xdsl.ir import Block, Operation, SSAValue

T = TypeVar("T")


def kernel_key(fn: func.FuncOp, *extra: Hashable) -> tuple[Hashable, ...]:
    """``fn``'s structure without its name, its values' name hints and its ops' locations
    (a kernel's arguments are named after the tensors it is passed), with ``extra``: equal
    keys, equal kernels.

    The structure is what the printer shows of the kernel, as attribute values rather than
    text: each op's name, its operands as the positions of their definitions, its result
    types, properties and attributes (in their order), and its regions' blocks (argument
    types, ops, successors). Building it costs a walk; printing the kernel cost ~20x that
    (bert's 34 kernels: ~1 s of a 10 s ``tilegraph-run``)."""
    numbers: dict[SSAValue, int] = {}
    blocks: dict[Block, int] = {}
    props = tuple((k, v) for k, v in fn.properties.items() if k != "sym_name")
    return (fn.name, props, tuple(fn.attributes.items()), _regions(fn, numbers, blocks), *extra)


def _regions(op: Operation, numbers: dict[SSAValue, int], blocks: dict[Block, int]) -> Hashable:
    """``op``'s regions as nested tuples (see :func:`kernel_key`); numbers values and
    blocks in walk order."""
    for region in op.regions:
        for block in region.blocks:
            blocks[block] = len(blocks)
    out: list[Hashable] = []
    for region in op.regions:
        region_out: list[Hashable] = []
        for block in region.blocks:
            for arg in block.args:
                numbers.setdefault(arg, len(numbers))
            region_out.append((tuple(a.type for a in block.args), _ops(block, numbers, blocks)))
        out.append(tuple(region_out))
    return tuple(out)


def _ops(block: Block, numbers: dict[SSAValue, int], blocks: dict[Block, int]) -> Hashable:
    out: list[Hashable] = []
    for op in block.ops:
        # a value is numbered where the walk first meets it (its definition, or a use
        # before it in a graph region): equal numbers, equal use-def edges
        operands = tuple(numbers.setdefault(v, len(numbers)) for v in op.operands)
        for result in op.results:
            numbers.setdefault(result, len(numbers))
        out.append(
            (
                op.name,
                operands,
                tuple(r.type for r in op.results),
                tuple(op.properties.items()),
                tuple(op.attributes.items()),
                tuple(blocks[s] for s in op.successors),
                _regions(op, numbers, blocks),
            )
        )
    return tuple(out)


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
