"""Building a kernel's loop IR from Python: hoisted constants and buffers, ``scf.for`` nests.

Strategies emit ops through a :class:`KernelBuilder`; index constants and scoped buffers go
to the kernel's entry (allocated once, reused by every tile), loops nest with a context
manager, and a loop of one iteration is not emitted at all (its index is the constant 0).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from math import prod

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, UnitAttr, bf16, f16
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tilegraph.dialects.tile import AllocOp, scoped_memref
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.kernel_attrs import PARALLEL_ATTR
from tilegraph.lowering.analysis.tuning_params import (
    ParamValue,
    TilingParam,
    checked_choice,
)
from tilegraph.target import precision_mode

SPLIT_DEPTHS = (0, 1, 2, 3)
"""Values of ``vector.split_depth`` (:meth:`KernelBuilder.split_depth`)."""
UB_FRACTIONS = ("1/8", "1/4", "1/2", "3/4")
"""The legal values of ``vector.ub_fraction`` (:meth:`KernelBuilder.ub_budget`); a whole
UB is not one: the tile functions count the tile's buffers, not the scalars beside them."""


class KernelBuilder:
    """Appends ops to the innermost open block; constants and allocations go to the entry."""

    def __init__(
        self,
        entry: Block,
        hw: HardwareModel,
        dry_run: bool = False,
        precision: str = "origin",
        params: Mapping[str, ParamValue] | None = None,
        where: str = "kernel",
    ):
        self.entry = entry
        self.dry_run = dry_run
        """Strategies return after their checks, before emitting (classification)."""
        self.precision = precision
        """The target's precision value (its cube rounding: :meth:`cube_element`)."""
        self.hw = hw
        self._prologue: list[Operation] = []
        self._stack: list[Block] = [entry]
        self._constants: dict[int, SSAValue] = {}
        self._bool: dict[bool, SSAValue] = {}
        self.tiles = 1
        """Output tiles the kernel computes (set by the strategy, for reports)."""
        self.blocks = 1
        """Blocks the strategy shares the kernel over itself (``tile.block_idx`` selecting
        each one's work): its launches get that many (``split-cores`` leaves it alone)."""
        self.buffers: list[SSAValue] = []
        self.params: Mapping[str, ParamValue] = params or {}
        """The chosen tiling parameters (``tile.params``); absent ones take the default."""
        self.space: dict[str, TilingParam] = {}
        """Every parameter the strategy declared while lowering, by name."""
        self._where = where

    def choose(
        self, name: str, values: Sequence[ParamValue], default: ParamValue, doc: str = ""
    ) -> ParamValue:
        """Declare the tiling parameter ``name`` (its legal ``values``, the heuristic's
        ``default``) and return the value chosen for this kernel: ``params[name]`` when
        given (:class:`~tilegraph.lowering.analysis.tuning_params.TilingParamError` when it
        is not one of ``values``), else ``default``."""
        param = TilingParam(name, tuple(values), default, doc)
        self.space.setdefault(name, param)
        return checked_choice(param, self.params, self._where)

    def choose_int(self, name: str, values: Sequence[int], default: int, doc: str = "") -> int:
        """:meth:`choose` for a size or a count."""
        value = self.choose(name, values, default, doc)
        assert isinstance(value, int) and not isinstance(value, bool)
        return value

    def ub_budget(self) -> int:
        """The UB bytes one tile of a vector kernel may take, as the parameter
        ``vector.ub_fraction`` (:data:`UB_FRACTIONS` of UB, default half: the other half is
        room for ``multi-buffer``'s second slots). Every vector strategy sizes its tiles
        through this one call, so they share the parameter's name and values."""
        fraction = self.choose(
            "vector.ub_fraction",
            UB_FRACTIONS,
            "1/2",
            "share of UB one vector tile may take (the rest: multi-buffer slots)",
        )
        numerator, denominator = (int(part) for part in str(fraction).split("/"))
        return self.hw.ub_bytes * numerator // denominator

    def split_depth(self) -> int:
        """How many axes deeper than the outermost one at which a tile fits a vector
        kernel splits its output (the parameter ``vector.split_depth``, default 0; clipped
        to the innermost axis it may split): deeper means smaller tiles, more of them to
        share over the cores. Every vector strategy that tiles with ``choose_tile`` asks
        through this one call."""
        return self.choose_int(
            "vector.split_depth",
            SPLIT_DEPTHS,
            0,
            "axes deeper than the outermost fitting one at which vector tiles split",
        )

    def cube_element(self, element: Attribute) -> Attribute:
        """The element type the cube's L1/L0A/L0B buffers hold for a tensor of ``element``:
        float inputs are rounded to fp16/bf16 on the way in when the precision asks so."""
        cube = precision_mode(self.precision).cube
        if cube not in ("fp16", "bf16") or str(element) not in ("f32", "f16", "bf16"):
            return element
        return f16 if cube == "fp16" else bf16

    # ---- hoisted values ----------------------------------------------------------------
    def index(self, value: int) -> SSAValue:
        found = self._constants.get(value)
        if found is None:
            op = arith.ConstantOp(IntegerAttr(value, IndexType()))
            op.result.name_hint = f"c{value}" if value >= 0 else f"cm{-value}"
            self._prologue.append(op)
            found = self._constants[value] = op.result
        return found

    def flag(self, value: bool) -> SSAValue:
        found = self._bool.get(value)
        if found is None:
            op = arith.ConstantOp.from_int_and_width(int(value), 1)
            op.result.name_hint = "true" if value else "false"
            self._prologue.append(op)
            found = self._bool[value] = op.result
        return found

    def buffer(self, shape: Sequence[int], element: Attribute, scope: str, name: str) -> SSAValue:
        op = AllocOp(scoped_memref(list(shape), element, scope))
        op.result.name_hint = name
        self._prologue.append(op)
        self.buffers.append(op.result)
        return op.result

    def hoist(self, op: Operation) -> Operation:
        """Put ``op`` (an address computation every tile uses, e.g. a GM view of an
        argument) at the kernel's entry with the constants and buffers."""
        self._prologue.append(op)
        return op

    # ---- emission ----------------------------------------------------------------------
    def add(self, op: Operation) -> Operation:
        self._stack[-1].add_op(op)
        return op

    def affine(self, value: SSAValue, scale: int = 1, offset: int = 0) -> SSAValue:
        """``value * scale + offset`` as index arithmetic (folded when trivial)."""
        if value is self._constants.get(0) or scale == 0:
            return self.index(offset)
        if scale != 1:
            value = self.add(arith.MuliOp(value, self.index(scale))).results[0]
        if offset:
            value = self.add(arith.AddiOp(value, self.index(offset))).results[0]
        return value

    def add_index(self, a: SSAValue, b: SSAValue) -> SSAValue:
        if a is self._constants.get(0):
            return b
        if b is self._constants.get(0):
            return a
        return self.add(arith.AddiOp(a, b)).results[0]

    def accumulation(
        self, upper: int, step: int, name: str, body: Callable[[SSAValue, SSAValue], None]
    ) -> None:
        """A reduction loop ``for iv in range(0, upper, step)`` whose first iteration starts
        the accumulator: ``body(iv, first)`` with ``first`` = ``iv == 0``. Not peeled: every
        K step's loads sit in the one loop, so ``multi-buffer`` can ping-pong L0A / L0B along
        K (a peeled first step would make the output-tile loop their slot loop)."""
        if upper <= step:
            body(self.index(0), self.flag(True))
            return
        with self.loop(upper, step, name) as iv:
            first = self.add(arith.CmpiOp(iv, self.index(0), "eq")).results[0]
            first.name_hint = "first"
            body(iv, first)

    @contextmanager
    def loop(
        self,
        upper: int,
        step: int = 1,
        name: str = "i",
        parallel: bool = False,
        lower: int = 0,
    ) -> Iterator[SSAValue]:
        """``for iv in range(lower, upper, step)``; one iteration emits no loop.

        ``parallel``: the iterations write disjoint parts of GM and share no on-chip state
        (marked ``tile.parallel``: executors may run them together; multi-core splits
        them)."""
        if upper - lower <= step:
            yield self.index(lower)
            return
        with self.loop_over(
            self.index(lower), self.index(upper), self.index(step), name, parallel
        ) as iv:
            yield iv

    @contextmanager
    def loop_over(
        self,
        lower: SSAValue,
        upper: SSAValue,
        step: SSAValue,
        name: str = "i",
        parallel: bool = False,
    ) -> Iterator[SSAValue]:
        """``for iv in range(lower, upper, step)``, always emitted, with bounds that may be
        computed in the kernel (a guard of zero or one trip: :mod:`.sub_blocks`)."""
        body = Block(arg_types=[IndexType()])
        body.args[0].name_hint = name
        loop = scf.ForOp(lower, upper, step, [], body)
        if parallel:
            loop.attributes[PARALLEL_ATTR] = UnitAttr()
        self.add(loop)
        self._stack.append(body)
        try:
            yield body.args[0]
        finally:
            body.add_op(scf.YieldOp())
            self._stack.pop()

    def finish(self) -> None:
        """Put the hoisted constants and buffers at the start of the entry block."""
        first = self.entry.first_op
        for op in self._prologue:
            if first is None:
                self.entry.add_op(op)
            else:
                self.entry.insert_op_before(op, first)


def bytes_of(shape: Sequence[int], element: Attribute) -> int:
    return prod(shape) * element_bytes(element)


def memref_type(value: SSAValue) -> MemRefType:
    t = value.type
    assert isinstance(t, MemRefType)
    return t
