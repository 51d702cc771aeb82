"""The fast executor's batched forms of ``tile`` ops, registered per op class.

When the fast executor runs the iterations of a nest of loops as one batch
(:mod:`.batching`), it calls, per tile op, the first of:

1. the op's *nest form* (``@nest_kernel(OpClass)``: ``form(op, batched, rank, summed)``):
   operand ``i`` carries ``rank`` leading batch dims when ``batched[i]`` (size 1 along the
   axes it does not vary on; they broadcast), else none; ``summed``: the accumulation axis,
   for an op that sums along it (``tile.mmad`` in a K loop);
2. its *batched form* (``@batched_kernel(OpClass)``: ``form(op, batched)``) on the batch
   flattened to one leading dim: ``batched[i]`` says that operand ``i`` carries it (a
   buffer) or is an array of per-iteration values (an index);
3. its kernel (:func:`~tilegraph.runtime.tile_interpreter.kernels.kernel_of`) once per
   point of the batch, in order.

A form may return None for a mask it does not handle (the next one is tried). A batched
form must compute what the kernel computes tile by tile (tests/runtime/test_batching.py
holds each to that). Lookups follow the op's class hierarchy, as kernels' do; the forms
themselves are in :mod:`.dma`, :mod:`.fractal`, :mod:`.cube`, :mod:`.vector` and
:mod:`.sync`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tilegraph.dialects.tile.base import TileOp
from tilegraph.runtime.tile_interpreter.kernels import Kernel

BatchedForm = Callable[[Any, Sequence[bool]], Kernel | None]
NestForm = Callable[[Any, Sequence[bool], int, int | None], Kernel | None]

_BATCHED: dict[type[TileOp], BatchedForm] = {}
_NEST: dict[type[TileOp], NestForm] = {}

B = TypeVar("B", bound=BatchedForm)
N = TypeVar("N", bound=NestForm)


def _lookup(table: dict[type[TileOp], Any], op: TileOp) -> Any:
    for cls in type(op).__mro__:
        found = table.get(cls)  # pyright: ignore[reportArgumentType]
        if found is not None:
            return found
    return None


def _register(table: dict[type[TileOp], Any], op_classes: tuple[type[TileOp], ...], form: Any):
    for cls in op_classes:
        if cls in table:
            raise ValueError(f"'{cls.name}' ({cls.__name__}) already has this form")
        table[cls] = form
    return form


def batched_kernel(*op_classes: type[TileOp]) -> Callable[[B], B]:
    """Register the decorated function as the batched form of ``op_classes`` (and of
    their subclasses that have none of their own)."""
    return lambda form: _register(_BATCHED, op_classes, form)


def nest_kernel(*op_classes: type[TileOp]) -> Callable[[N], N]:
    """Register the decorated function as the nest form of ``op_classes``."""
    return lambda form: _register(_NEST, op_classes, form)


def batched_kernel_of(op: TileOp, batched: Sequence[bool]) -> Kernel | None:
    """``op``'s batched form for the mask ``batched``, or None (none registered, or the
    form does not handle the mask)."""
    form = _lookup(_BATCHED, op)
    return None if form is None else form(op, batched)


def nest_kernel_of(
    op: TileOp, batched: Sequence[bool], rank: int, summed: int | None
) -> Kernel | None:
    """``op``'s nest form, or None; see the module docstring."""
    form = _lookup(_NEST, op)
    return None if form is None else form(op, batched, rank, summed)
