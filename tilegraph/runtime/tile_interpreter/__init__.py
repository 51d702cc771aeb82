"""xDSL interpreter functions for the ``tile`` dialect: the reference of the tile level.

Every tile op runs the numpy semantics registered for its class (:mod:`.kernels`; one
module per op group: :mod:`.host`, :mod:`.dma`, :mod:`.fractal`, :mod:`.cube`,
:mod:`.vector`, :mod:`.vector_layout`, :mod:`.sync`, :mod:`.cores`, :mod:`.workspace`,
:mod:`.cross_core`), built once per op and cached; buffers are numpy arrays (GM buffers hold
storage layout; the on-chip buffers of a planned module are views into one byte arena per
scope of the running block, at the addresses ``plan-local-memory`` gave them: :mod:`.arena`),
indices are ints. ``tile.launch`` (every block, with its index and count; a mix launch's
parts as coroutines, :mod:`.cross_core`) and the block queries are implemented here.
``scf`` and ``func`` run on xDSL's own implementations (``scf.for`` counting its
iterations, for the multi-buffer slots), ``arith`` on index values on
:class:`IndexArithFunctions` (plain ints; xDSL's for other types), so every loop iteration
and every tile is executed as the IR says. Kernel bodies that are still macro (host kernels,
or kernels before ``tile-kernels``) run their graph ops through :class:`GraphFunctions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, StringAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.ir import SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import InterpretationError

from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import (
    TILE_OPS,
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    LaunchOp,
    LoopLaunchesOp,
    SubBlockIdxOp,
    SyncAllOp,
    TileOp,
)
from tilegraph.dialects.tile.barrier import KERNEL_FUNCTION_ATTR, zero_filled
from tilegraph.runtime.tile_interpreter import (  # noqa: F401 - each registers its kernels
    cores,
    cross_core,
    cube,
    dma,
    fractal,
    host,
    scalar,
    sync,
    vector,
    vector_axis,
    vector_layout,
    workspace,
)
from tilegraph.runtime.tile_interpreter.arena import (
    SlottedOperand,
    arena_sizes,
    placed,
    slot_views,
    slotted_operands,
)
from tilegraph.runtime.tile_interpreter.gm_races import launch_races
from tilegraph.runtime.tile_interpreter.host import run_device_loop
from tilegraph.runtime.tile_interpreter.kernels import Kernel, kernel_of


def _callee(launch: LaunchOp, name: str) -> func.FuncOp | None:
    found = SymbolTable.lookup_symbol(launch, name)
    return found if isinstance(found, func.FuncOp) else None


def _has_barrier(launch: LaunchOp, name: str) -> bool:
    """Whether the launched kernel holds an all-core barrier (its blocks run in lockstep)."""
    fn = _callee(launch, name)
    return fn is not None and any(isinstance(o, SyncAllOp) for o in fn.walk())


def _kernel_unit(launch: LaunchOp, name: str) -> str | None:
    fn = _callee(launch, name)
    unit = None if fn is None else fn.attributes.get(KERNEL_FUNCTION_ATTR)
    return unit.data if isinstance(unit, StringAttr) else None


class TileCounters:
    """What ran: launches and executed tile ops, by kernel and by op name."""

    def __init__(self) -> None:
        self.launches: dict[str, int] = {}
        self.ops: dict[str, int] = {}

    def launch(self, name: str) -> None:
        self.launches[name] = self.launches.get(name, 0) + 1


@register_impls
class TileFunctions(InterpreterFunctions):
    """One implementation for every tile op (its registered kernel, cached), for
    ``tile.launch`` (its blocks one after the other) and for the block queries of the
    running block."""

    def __init__(self, counters: TileCounters | None = None) -> None:
        self._kernels: dict[int, Kernel] = {}
        self.counters = counters
        self.block = (0, 1)
        """(index, count) of the block being run (a mix launch's AIV: of its group)."""
        self.checks_races = False
        """A launch whose core groups exchange GM data runs: every tile op is checked
        (:mod:`.gm_races`)."""
        self.sub_block = 0
        """The running AIV's sub-block in its group (``tile.sub_block_idx``)."""
        self.iterations: dict[int, int] = {}
        """The iteration each running loop is in (:class:`.arena.LoopCountingFunctions`)."""
        self._arenas: dict[int, dict[str, np.ndarray]] = {}
        """Per kernel function (by identity), the running block's arena of each scope."""
        self._arena_sizes: dict[int, dict[str, int]] = {}
        self._slot_views: dict[SSAValue, list[np.ndarray]] = {}
        """Each planned buffer's view per slot, in the running block's arenas."""
        self._slotted: dict[int, tuple[SlottedOperand, ...]] = {}

    def cached_kernel(self, op: TileOp) -> Kernel:
        # keyed by identity: an op's hash is a Python method, and the module's ops outlive
        # the run (one TileFunctions per run)
        found = self._kernels.get(id(op))
        if found is None:
            found = self._kernels[id(op)] = kernel_of(op)
        return found

    @impl(LaunchOp)
    def run_launch(self, interpreter: Interpreter, op: LaunchOp, args: tuple[Any, ...]):
        name = op.callee.string_value()
        if self.counters is not None:
            self.counters.launch(name)
        for position in zero_filled(op):  # the runtime's memset before the launch
            args[position][...] = 0
        blocks = op.block_count
        if op.is_mix:
            self._run_mix(interpreter, op, args)
            return ()
        if blocks > 1 and _has_barrier(op, name):
            self._run_lockstep(interpreter, op, args)
            return ()
        for index in range(blocks):
            self.block = (index, blocks)
            self._arenas.clear()  # every block runs on a core of its own: fresh memory
            interpreter.call_op(name, args)
        self.block = (0, 1)
        return ()

    @impl(LoopLaunchesOp)
    def run_loop_launches(
        self, interpreter: Interpreter, op: LoopLaunchesOp, args: tuple[Any, ...]
    ):
        """A device loop: its region's launches per iteration (:func:`.host.run_device_loop`)."""
        run_device_loop(
            op,
            args,
            lambda buffers: interpreter.run_ssacfg_region(op.body, tuple(buffers), op.name),
        )
        return ()

    @impl(AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: AllocOp, args: tuple[Any, ...]):
        """A planned on-chip buffer: its views into the running block's arenas (slot 0
        first); anything else: its own array."""
        plan = placed(op)
        fn = op.parent_op()
        if plan is None or not isinstance(fn, func.FuncOp):
            return self.cached_kernel(op)()
        arenas = self._arenas.get(id(fn))
        if arenas is None:
            sizes = self._arena_sizes.get(id(fn))
            if sizes is None:
                sizes = self._arena_sizes[id(fn)] = arena_sizes(fn)
            arenas = self._arenas[id(fn)] = {s: np.zeros(n, np.uint8) for s, n in sizes.items()}
        views = self._slot_views[op.result] = slot_views(op, plan, arenas)
        return (views[0],)

    def in_slots(self, op: TileOp, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """``args`` with each multi-buffered planned buffer replaced by the view of the
        slot the current iteration of its slot loop uses."""
        slotted = self._slotted.get(id(op))
        if slotted is None:
            slotted = self._slotted[id(op)] = slotted_operands(op)
        if not slotted:
            return args
        values = list(args)
        for s in slotted:
            views = self._slot_views.get(s.buffer)
            if views is not None:
                values[s.position] = views[self.iterations.get(id(s.loop), 0) % s.slots]
        return tuple(values)

    def _save_state(self, interpreter: Interpreter) -> Callable[[], None]:
        """What restores the running part's state (its scope of values, its block, its
        on-chip memory, its loops' iterations) when it goes on after a switch."""
        scope, block, sub = interpreter._ctx, self.block, self.sub_block  # pyright: ignore[reportPrivateUsage]
        arenas, views, iterations = self._arenas, self._slot_views, dict(self.iterations)

        def restore() -> None:
            interpreter._ctx = scope  # pyright: ignore[reportPrivateUsage]
            self.block, self.sub_block = block, sub
            self._arenas, self._slot_views = arenas, views
            self.iterations.clear()  # shared with the loop counter: restored in place
            self.iterations.update(iterations)

        return restore

    def _run_lockstep(self, interpreter: Interpreter, op: LaunchOp, args: tuple[Any, ...]):
        """A launch of a kernel with an all-core barrier (``tile.sync_all``): its blocks as
        coroutines (:class:`.cross_core.MixRun`), each running until it reaches a barrier,
        which lets it on once every block has reached it."""
        name, blocks = op.callee.string_value(), op.block_count
        core = "aiv" if _kernel_unit(op, name) == "vector" else "aic"

        def part(index: int) -> Callable[[], Any]:
            def run() -> None:
                self.block, self.sub_block = (index, blocks), 0
                self._arenas, self._slot_views = {}, {}
                interpreter.call_op(name, args)

            return run

        parts = [(name, core, part(b), 0, b) for b in range(blocks)]
        fn = _callee(op, name)
        races = launch_races([fn], [f"block {b}" for b in range(blocks)], False) if fn else None
        self.checks_races = races is not None
        try:
            cross_core.MixRun(parts, lambda: self._save_state(interpreter), races).run()
        finally:
            self.checks_races = False
        self.block = (0, 1)
        self._arenas, self._slot_views = {}, {}

    def _run_mix(self, interpreter: Interpreter, op: LaunchOp, args: tuple[Any, ...]) -> None:
        """A mix launch: per core group, its AIC part and its AIVs' parts as coroutines
        (:mod:`.cross_core`), each answering the block queries with the group and
        ``tile.sub_block_idx`` with its sub-block; every part has on-chip memory of its own
        (the two AIVs of a group run the same function, each in its own UB)."""
        names = op.callees()
        blocks = op.block_count
        sub_blocks = cross_core.sub_blocks_of(blocks, op.aiv_block_count, names[0])

        def part(group: int, core: str, sub: int) -> Callable[[], Any]:
            def run() -> None:
                self.block, self.sub_block = (group, blocks), sub
                self._arenas, self._slot_views = {}, {}
                interpreter.call_op(names[0] if core == "aic" else names[1], args)

            return run

        def save_state() -> Callable[[], None]:
            return self._save_state(interpreter)

        functions = [f for n in names if (f := _callee(op, n)) is not None]
        labels = [
            f"group {group} {key}"
            for group in range(blocks)
            for key in ("AIC", *(f"AIV{s}" for s in range(sub_blocks)))
        ]
        races = launch_races(functions, labels, True) if len(functions) == 2 else None
        self.checks_races = races is not None
        try:
            cross_core.run_mix_groups(
                blocks, part, (names[0], names[1]), save_state, sub_blocks, races
            )
        finally:
            self.checks_races = False
        self.block, self.sub_block = (0, 1), 0
        self._arenas, self._slot_views = {}, {}

    @impl(BlockIdxOp)
    def run_block_idx(self, interpreter: Interpreter, op: BlockIdxOp, args: tuple[Any, ...]):
        return (self.block[0],)

    @impl(BlockNumOp)
    def run_block_num(self, interpreter: Interpreter, op: BlockNumOp, args: tuple[Any, ...]):
        return (self.block[1],)

    @impl(SubBlockIdxOp)
    def run_sub_block_idx(self, interpreter: Interpreter, op: SubBlockIdxOp, args: tuple[Any, ...]):
        return (self.sub_block,)


_XDSL_IMPLS = dict(ArithFunctions._impls())  # pyright: ignore[reportPrivateUsage]
"""xDSL's implementation of each ``arith`` op, for types other than index."""

_UNDECIDED: Any = object()
"""Not yet looked at (None is a decision: xDSL's implementation)."""


@register_impls
class IndexArithFunctions(InterpreterFunctions):
    """``arith`` on ``index`` values — the loop bounds, offsets and slot numbers of the
    tile level — as plain Python ints, computed by the one evaluator
    (:mod:`tilegraph.dialects.index_arith`: every op of its ``INDEX_OPS``), looked up once
    per op; other integer types go to xDSL's own implementations where xDSL has one. Tiled
    kernels run one such op per few tile ops, and xDSL's generic ones check types and bit
    widths on every call."""

    def __init__(self) -> None:
        self._generic = ArithFunctions()
        """xDSL's implementations, for arith on types other than index."""
        # keyed by op identity, as TileFunctions' kernels: one instance per run
        self._constants: dict[int, tuple[Any, ...]] = {}
        self._evaluators: dict[int, Callable[..., Any] | None] = {}

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: tuple[Any, ...]):
        found = self._constants.get(id(op))
        if found is None:
            value = op.value
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise InterpretationError(f"arith.constant of {value} has no interpretation")
            known = index_arith.constant(op)
            found = self._constants[id(op)] = (value.value.data if known is None else known,)
        return found

    def _evaluate(self, interpreter: Interpreter, op: Any, args: tuple[Any, ...]):
        fn = self._evaluators.get(id(op), _UNDECIDED)
        if fn is _UNDECIDED:
            # index values, and ops xDSL has no implementation of (minsi, maxsi, ...): ints
            # of any width are Python ints here
            index = any(isinstance(v.type, IndexType) for v in (*op.operands, *op.results))
            if index or type(op) not in _XDSL_IMPLS:
                fn = index_arith.evaluator(op)
            else:
                fn = None
            self._evaluators[id(op)] = fn
        if fn is None:
            return _XDSL_IMPLS[type(op)](self._generic, interpreter, op, args).values
        return (fn(*args),)


for _op in index_arith.INDEX_OPS:  # one implementation: index_arith's evaluator of the op
    _run = impl(_op)(IndexArithFunctions._evaluate)  # pyright: ignore[reportPrivateUsage]
    setattr(IndexArithFunctions, f"run_{_op.name.removeprefix('arith.')}", _run)
register_impls(IndexArithFunctions)


def _make_impl(op_cls: type[TileOp]) -> Any:
    def run(self: TileFunctions, interpreter: Interpreter, op: TileOp, args: tuple[Any, ...]):
        if self.counters is not None:
            self.counters.ops[op.name] = self.counters.ops.get(op.name, 0) + 1
        if self.checks_races:  # a launch whose groups exchange GM data (.gm_races)
            cross_core.note_access(op, args)
        return self.cached_kernel(op)(*self.in_slots(op, args))

    run.__name__ = f"run_{op_cls.name.replace('.', '_')}"
    return impl(op_cls)(run)


for _cls in TILE_OPS:
    if _cls not in (LaunchOp, LoopLaunchesOp, BlockIdxOp, BlockNumOp, SubBlockIdxOp, AllocOp):
        setattr(TileFunctions, f"run_{_cls.name.replace('.', '_')}", _make_impl(_cls))
register_impls(TileFunctions)
