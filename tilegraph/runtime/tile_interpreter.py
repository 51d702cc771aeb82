"""xDSL interpreter functions for the ``tile`` dialect: the reference of the tile level.

Every tile op runs its own numpy semantics (:meth:`TileOp.kernel`, built once per op and
cached); buffers are numpy arrays (GM buffers hold storage layout), indices are ints.
``scf``, ``arith`` and ``func`` run on xDSL's own implementations (plus ``arith.minsi`` /
``maxsi``, which xDSL lacks), so every loop iteration and every tile is executed as the IR
says. Kernel bodies that are still macro (host kernels,
or kernels before ``tile-kernels``) run their graph ops through :class:`GraphFunctions`.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import arith
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

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
        self._kernels: dict[TileOp, Kernel] = {}
        self.counters = counters
        self.block = (0, 1)
        """(index, count) of the block being run."""

    def kernel_of(self, op: TileOp) -> Kernel:
        found = self._kernels.get(op)
        if found is None:
            found = self._kernels[op] = op.kernel()
        return found

    @impl(arith.MinSIOp)
    def run_minsi(self, interpreter: Interpreter, op: arith.MinSIOp, args: tuple[Any, ...]):
        return (min(args[0], args[1]),)

    @impl(arith.MaxSIOp)
    def run_maxsi(self, interpreter: Interpreter, op: arith.MaxSIOp, args: tuple[Any, ...]):
        return (max(args[0], args[1]),)

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
