"""The executable semantics of ``tile`` ops, registered per op class.

A *kernel factory* takes one op and returns its *kernel*: a closure over the op's
attributes, called with the runtime values of the op's operands (numpy arrays for memrefs,
ints for indices) and returning the tuple of its results. Buffers are written in place;
most ops return ``()``. The xDSL interpreter (:class:`~tilegraph.runtime.tile_interpreter.
TileFunctions`) and the fast executor call the same kernels, tile by tile.

A factory is registered for one or more op classes with :func:`tile_kernel`, in the module
of its op group (:mod:`.dma`, :mod:`.vector`, ...), xDSL ``@impl`` style::

    @tile_kernel(CopyFlatOp)
    def copy_flat(op: CopyFlatOp) -> Kernel:
        count = op.count.value.data
        def run(src, i, dst, j): ...
        return run

:func:`kernel_of` finds the factory through the op's class hierarchy (the most derived
registered class wins), so a family of ops sharing a base class may share one factory. A
plugin that adds a tile op registers its kernel the same way, from a module its package
imports.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilegraph.dialects.tile.base import TileOp
from tilegraph.dialects.tile.registry import OpClassRegistry

Kernel = Callable[..., Any]
"""Executable semantics of one op: runtime operand values in, tuple of result values out."""

KernelFactory = Callable[[Any], Kernel]
"""Builds an op's kernel from the op (its attributes and operand types)."""

_FACTORIES: OpClassRegistry[KernelFactory] = OpClassRegistry("a kernel")


class NoKernelError(NotImplementedError):
    """No semantics is registered for an op's class or any of its bases."""


tile_kernel = _FACTORIES.register
"""``@tile_kernel(*op_classes)``: register the decorated factory as the semantics of
``op_classes`` (and of their subclasses that have none of their own)."""


def kernel_factory(op_class: type[TileOp]) -> KernelFactory | None:
    """The factory registered for ``op_class`` or its nearest base, else None."""
    return _FACTORIES.lookup(op_class)


def kernel_of(op: TileOp) -> Kernel:
    """``op``'s kernel, built now; raises :class:`NoKernelError` naming the op when no
    semantics is registered for its class."""
    factory = kernel_factory(type(op))
    if factory is None:
        raise NoKernelError(
            f"'{op.name}' ({type(op).__name__}) has no executable semantics: register one "
            "with @tile_kernel (tilegraph.runtime.tile_interpreter.kernels)"
        )
    return factory(op)
