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
from typing import Any

from tilegraph.dialects.tile.base import TileOp
from tilegraph.dialects.tile.registry import OpClassRegistry
from tilegraph.runtime.tile_interpreter.kernels import Kernel

BatchedForm = Callable[[Any, Sequence[bool]], Kernel | None]
NestForm = Callable[[Any, Sequence[bool], int, int | None], Kernel | None]

_BATCHED: OpClassRegistry[BatchedForm] = OpClassRegistry("a batched form")
_NEST: OpClassRegistry[NestForm] = OpClassRegistry("a nest form")

batched_kernel = _BATCHED.register
"""``@batched_kernel(*op_classes)``: register the decorated function as the batched form of
``op_classes`` (and of their subclasses that have none of their own)."""

nest_kernel = _NEST.register
"""``@nest_kernel(*op_classes)``: register the decorated function as their nest form."""


def batched_kernel_of(op: TileOp, batched: Sequence[bool]) -> Kernel | None:
    """``op``'s batched form for the mask ``batched``, or None (none registered, or the
    form does not handle the mask)."""
    form = _BATCHED.lookup(type(op))
    return None if form is None else form(op, batched)


def nest_kernel_of(
    op: TileOp, batched: Sequence[bool], rank: int, summed: int | None
) -> Kernel | None:
    """``op``'s nest form, or None; see the module docstring."""
    form = _NEST.lookup(type(op))
    return None if form is None else form(op, batched, rank, summed)
