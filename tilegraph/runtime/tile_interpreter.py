"""xDSL interpreter functions for the ``tile`` dialect: the reference of the tile level.

Every tile op runs its own numpy semantics (:meth:`TileOp.kernel`, built once per op and
cached); buffers are numpy arrays (GM buffers hold storage layout), indices are ints.
``scf`` and ``func`` run on xDSL's own implementations, ``arith`` on index values on
:class:`IndexArithFunctions` (plain ints; xDSL's for other types), so every loop iteration
and every tile is executed as the IR says. Kernel bodies that are still macro (host kernels,
or kernels before ``tile-kernels``) run their graph ops through :class:`GraphFunctions`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.utils.exceptions import InterpretationError

from tilegraph.dialects.tile import TILE_OPS, BlockIdxOp, BlockNumOp, LaunchOp, TileOp
from tilegraph.dialects.tile.base import Kernel


class TileCounters:
    """What ran: launches and executed tile ops, by kernel and by op name."""

    def __init__(self) -> None:
        self.launches: dict[str, int] = {}
        self.ops: dict[str, int] = {}

    def launch(self, name: str) -> None:
        self.launches[name] = self.launches.get(name, 0) + 1


@register_impls
class TileFunctions(InterpreterFunctions):
    """One implementation for every tile op (its cached kernel), for ``tile.launch`` (its
    blocks one after the other) and for the block queries of the running block."""

    def __init__(self, counters: TileCounters | None = None) -> None:
        self._kernels: dict[int, Kernel] = {}
        self.counters = counters
        self.block = (0, 1)
        """(index, count) of the block being run."""

    def kernel_of(self, op: TileOp) -> Kernel:
        # keyed by identity: an op's hash is a Python method, and the module's ops outlive
        # the run (one TileFunctions per run)
        found = self._kernels.get(id(op))
        if found is None:
            found = self._kernels[id(op)] = op.kernel()
        return found

    @impl(LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: LaunchOp, args: tuple[Any, ...]):
        name = op.callee.string_value()
        if self.counters is not None:
            self.counters.launch(name)
        blocks = op.block_count
        for index in range(blocks):
            self.block = (index, blocks)
            interpreter.call_op(name, args)
        self.block = (0, 1)
        return ()

    @impl(BlockIdxOp)
    def run_block_idx(self, interpreter: Interpreter, op: BlockIdxOp, args: tuple[Any, ...]):
        return (self.block[0],)

    @impl(BlockNumOp)
    def run_block_num(self, interpreter: Interpreter, op: BlockNumOp, args: tuple[Any, ...]):
        return (self.block[1],)


def _remsi(a: int, b: int) -> int:
    """``arith.remsi``: the remainder takes the dividend's sign (C's ``%``)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


_INDEX_BINARY: dict[type, Callable[[int, int], int]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.FloorDivSIOp: operator.floordiv,
    arith.RemSIOp: _remsi,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}
_SIGNED_CMPI: dict[int, Callable[[int, int], bool]] = {
    0: operator.eq,
    1: operator.ne,
    2: operator.lt,
    3: operator.le,
    4: operator.gt,
    5: operator.ge,
}


_XDSL_IMPLS = {
    arith.AddiOp: "run_addi",
    arith.SubiOp: "run_subi",
    arith.MuliOp: "run_muli",
    arith.FloorDivSIOp: "run_floordivsi",
    arith.RemSIOp: "run_remsi",
    arith.CmpiOp: "run_cmpi",
}
"""xDSL's implementation of each op, for types other than index."""

_UNDECIDED: Any = object()
"""Not yet looked at (None is a decision: xDSL's implementation)."""


@register_impls
class IndexArithFunctions(InterpreterFunctions):
    """``arith`` on ``index`` values — the loop bounds, offsets and slot numbers of the
    tile level — as plain Python ints (index is as wide as the host's ints: nothing wraps),
    with what each op computes decided once per op; other types go to xDSL's own
    implementations. Tiled kernels run one such op per few tile ops, and xDSL's generic
    ones check types and bit widths on every call."""

    def __init__(self) -> None:
        self._generic = ArithFunctions()
        """xDSL's implementations, for arith on types other than index."""
        # keyed by op identity, as TileFunctions' kernels: one instance per run
        self._constants: dict[int, tuple[Any, ...]] = {}
        self._binary: dict[int, Callable[[int, int], Any] | None] = {}

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: tuple[Any, ...]):
        found = self._constants.get(id(op))
        if found is None:
            value = op.value
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise InterpretationError(f"arith.constant of {value} has no interpretation")
            found = self._constants[id(op)] = (value.value.data,)
        return found

    def _index_binary(self, interpreter: Interpreter, op: Any, args: tuple[Any, ...]):
        fn = self._binary.get(id(op), _UNDECIDED)
        if fn is _UNDECIDED:
            # minsi / maxsi: xDSL has none; ints of any width are Python ints here
            index = isinstance(op.operands[0].type, IndexType) or isinstance(
                op, arith.MinSIOp | arith.MaxSIOp
            )
            if isinstance(op, arith.CmpiOp):
                fn = _SIGNED_CMPI.get(op.predicate.value.data) if index else None
            else:
                fn = _INDEX_BINARY[type(op)] if index else None
            self._binary[id(op)] = fn
        if fn is None:
            generic = getattr(ArithFunctions, _XDSL_IMPLS[type(op)])
            return generic(self._generic, interpreter, op, args).values
        return (fn(args[0], args[1]),)

    run_addi = impl(arith.AddiOp)(_index_binary)
    run_subi = impl(arith.SubiOp)(_index_binary)
    run_muli = impl(arith.MuliOp)(_index_binary)
    run_floordivsi = impl(arith.FloorDivSIOp)(_index_binary)
    run_remsi = impl(arith.RemSIOp)(_index_binary)
    run_cmpi = impl(arith.CmpiOp)(_index_binary)
    run_minsi = impl(arith.MinSIOp)(_index_binary)
    run_maxsi = impl(arith.MaxSIOp)(_index_binary)


def _make_impl(op_cls: type[TileOp]) -> Any:
    def run(self: TileFunctions, interpreter: Interpreter, op: TileOp, args: tuple[Any, ...]):
        if self.counters is not None:
            self.counters.ops[op.name] = self.counters.ops.get(op.name, 0) + 1
        return self.kernel_of(op)(*args)

    run.__name__ = f"run_{op_cls.name.replace('.', '_')}"
    return impl(op_cls)(run)


for _cls in TILE_OPS:
    if _cls not in (LaunchOp, BlockIdxOp, BlockNumOp):
        setattr(TileFunctions, f"run_{_cls.name.replace('.', '_')}", _make_impl(_cls))
register_impls(TileFunctions)
