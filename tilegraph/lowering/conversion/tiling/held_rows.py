"""The constant rows a recurrent kernel reads in every step (bias, peephole, scale rows of
its hidden blocks' columns): held in UB across the steps, loaded once per direction, where
the plan found room for them; else loaded where used, each time, into a scratch row.

One mechanism for the float kernel (:mod:`.recurrent`: ``Wb`` / ``Rb`` and peephole rows)
and the int8 one (:mod:`.quantized_recurrent_kernel`: ``R_scale``, ``Wb + Rb``,
peepholes). A row is named by a key the kernel chooses — ``(kind, gate or offset, the
block's first column)`` — and loaded by the kernel's own ``load(key, d, dst)`` (a copy, or
the int8 kernel's ``Wb + Rb`` sum), so what a row holds stays with its kernel.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Attribute, SSAValue

from tilegraph.lowering.conversion.tiling.builder import KernelBuilder

RowKey = tuple[str, int, SSAValue]
"""(kind, gate or column offset, the hidden block's first column)."""

Loader = Callable[[RowKey, int, SSAValue], None]
"""``load(key, d, dst)``: emit the loads of row ``key`` of direction ``d`` into ``dst``."""


class HeldRows:
    """The rows of ``(1, width)`` a kernel holds (:meth:`hold`) or loads per use into the
    scratch row of their kind (``scratch``: kind -> buffer; kinds may share one)."""

    def __init__(
        self, b: KernelBuilder, width: int, element: Attribute,
        scratch: dict[str, SSAValue], load: Loader,
    ) -> None:  # fmt: skip
        self.b, self.width, self.element = b, width, element
        self.scratch, self.load = scratch, load
        self.held: dict[RowKey, SSAValue] = {}

    def hold(self, key: RowKey, name: str) -> None:
        """Give row ``key`` a UB buffer of its own (``name``), loaded by :meth:`load_held`."""
        self.held[key] = self.b.buffer([1, self.width], self.element, "UB", name)

    def load_held(self, d: int) -> None:
        """Direction ``d``'s held rows GM -> UB (before its first step)."""
        for key, row in self.held.items():
            self.load(key, d, row)

    def row(self, key: RowKey, d: int) -> SSAValue:
        """Row ``key`` of direction ``d``: held, or loaded now into its kind's scratch row."""
        held = self.held.get(key)
        if held is not None:
            return held
        scratch = self.scratch[key[0]]
        self.load(key, d, scratch)
        return scratch
