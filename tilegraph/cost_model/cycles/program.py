"""A tiled kernel compiled into Python that issues its op instances to a core model.

The cycle model needs, per block of a launch, every tile-op instance the kernel issues, in
program order, with the buffer slots it touches — but no data. Walking the xDSL IR for each
of the hundreds of thousands of instances of a large matmul is too slow, so
:func:`compile_kernel` turns the kernel's control flow into Python source once: ``scf.for``
becomes ``for``, index arithmetic becomes Python expressions, ``tile.block_idx`` /
``tile.block_num`` become the function's arguments, and every tile op becomes a call
``issue(i, read_keys, write_keys, event_offset)`` where ``i`` indexes a static
:class:`OpRecord` (pipe, cost, bytes...). A buffer key is one slot of one buffer: a
buffer marked ``multi_buffer = n`` has ``n`` keys, picked by the iteration count of its slot
loop (:mod:`tilegraph.lowering.analysis.buffers`).

Two functions are generated per kernel: ``data`` (no sync ops; the keys carry the data
dependences) and ``flags`` (every op, sync ops included, with no keys: the flags order the
pipes). A third, ``gm_accesses``, is a generator of the kernel's GM accesses only, each as
``(record index, (GM buffer number, *the op's gm_offsets values))``: two accesses with equal
tuples touch the same GM bytes, which is what the L2 model (:mod:`.memory`) needs; loops
without GM accesses are left out of it. An offset read from data (``tile.get_value``: a
gather's rows) is a :class:`~tilegraph.dialects.index_arith.DataDependent`, equal to no
other: such an access never hits L2 within its launch (its buffer may still be resident
from an earlier one), as the rows an index tensor picks are not known before it runs.

:meth:`KernelProgram.shape` evaluates, without running the loops, each loop's trip count
for one block; blocks with the same trip counts issue the same instruction sequence, so the
model simulates one of them (see :mod:`.simulate`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from math import ceil, prod
from typing import Any

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tilegraph.cost_model.cycles.ragged import ragged_axes, ragged_records, record_index
from tilegraph.cost_model.tile_costs import (
    cost_of,
    fixpipe_out_bytes,
    gm_latency_cycles,
    vector_latency_cycles,
)
from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import (
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    FixpipeOp,
    MmadOp,
    PipeBarrierOp,
    SetFlagOp,
    StridedViewOp,
    SubBlockIdxOp,
    TileOp,
    ViewOp,
    memref_shape,
    scope_of,
)
from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.cross_core import CrossCoreOp, SyncBlockSetOp
from tilegraph.dialects.tile.scalar import SCALAR_UNIT_OPS
from tilegraph.dialects.tile.sync import EVENTS_PER_PAIR, PIPES, FlagOp
from tilegraph.dialects.tile.vector import VectorOp
from tilegraph.dialects.tile.workspace import gm_base
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.buffers import (
    accesses,
    buffer_slots,
    enclosing_loops,
    may_alias,
    slot_loop,
)
from tilegraph.lowering.transforms.inject_sync import is_iteration_slot

NORMAL, SET, WAIT, BARRIER, FENCE, CROSS_SET, CROSS_WAIT = range(7)
"""Kinds of issued ops: an instruction, ``set_flag``, ``wait_flag``, ``pipe_barrier`` on one
pipe, ``pipe_barrier`` across all pipes, ``sync_block_set``, ``sync_block_wait`` (a mix
kernel's cross-core flags: one cycle on their pipe for a core simulated alone; the
co-simulation of :mod:`.mix` makes the waits stall)."""

DMA_PIPES = frozenset({"MTE1", "MTE2", "MTE3", "FIX"})
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}

Issue = Callable[[int, tuple[int, ...], tuple[int, ...], int], Any]
"""``issue(op_index, read_keys, write_keys, event_offset)``; the stepping functions of a mix
kernel's part (:attr:`KernelProgram.data_steps`) retry a ``sync_block_wait`` for which it
returns true (the flag is not raised yet) after yielding."""
GmAccess = tuple[int, tuple[int, ...]]
"""``(record index, (GM buffer number, *GM offsets))`` of one GM access instance."""


class CycleModelError(ValueError):
    """The cycle model cannot run a kernel (the message names the kernel and the op)."""


@dataclass(frozen=True)
class OpRecord:
    """The static facts of one tile op of a kernel (every instance shares them)."""

    op: TileOp
    kind: int
    pipe: int
    """Index into :data:`~tilegraph.dialects.tile.sync.PIPES`."""
    cost: int
    """Cycles on its pipe (:func:`~tilegraph.cost_model.tile_costs.cost_of`)."""
    path: str
    """"GM->L1", "L0C->GM", ... for data movement on MTE1/MTE2/MTE3/FIX, else ""."""
    moved_bytes: int
    gm_bytes: int
    """Bytes it moves between GM and the core (through the core's share of GM bandwidth)."""
    gm_read: bool
    """Moves GM -> core (else core -> GM), when ``gm_bytes``."""
    mac_cycles: int
    """Cycles of cube work (an ``mmad``'s cost less its head), else 0."""
    flops: int = 0
    """An ``mmad``'s 2 * M * K * N as tiled (padding included), else 0."""
    flag: int = -1
    """``set_flag`` / ``wait_flag``: the event's key (pipe pair x event id); a cross-core
    flag op: its flag id; before the slot offset."""
    alias_keys: tuple[int, ...] = ()
    """Keys (every slot) of other buffers planned at overlapping addresses: accesses that
    this op must also be ordered with in the data-dependence mode."""
    gm_rows: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    """How the L2 model (:mod:`.memory`) splits the op's GM window into rows: (the extent
    of each outer dim of the window, the GM buffer's size along them), then the rows are
    keyed apart; None: the access is one key."""
    after_scalar: bool = False
    """An operand is a value the scalar unit read from data (``tile.get_value``): the op
    is issued once the read is done, so it starts no earlier than the S pipe is free."""
    latency: int = 0
    """A GM transfer's round trip after its pipe time (:func:`~tilegraph.cost_model.
    tile_costs.gm_latency_cycles`), a vector op's result latency (:func:`~tilegraph.
    cost_model.tile_costs.vector_latency_cycles`): its data is there ``latency`` cycles
    after the pipe is done with it."""

    @property
    def name(self) -> str:
        return self.op.name.removeprefix("tile.")


def _path(op: TileOp) -> str:
    if op.pipe() not in DMA_PIPES:
        return ""
    written = op.written()
    sources = [v for v in op.operands if isinstance(v.type, MemRefType) and v is not written]
    if written is None or not sources:
        return ""
    return f"{scope_of(sources[0])}->{scope_of(written)}"


def _flag_key(op: FlagOp) -> int:
    src, dst = op.pair
    return (PIPE_INDEX[src] * len(PIPES) + PIPE_INDEX[dst]) * EVENTS_PER_PAIR + op.event_id


MAX_GM_ROWS = 64
"""At most this many rows per GM access in the L2 model (more outer dims are kept whole)."""


def _gm_rows(op: TileOp, gm: SSAValue) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(outer extents, dims of ``gm``, the GM buffer) of the op's GM window split into at
    most :data:`MAX_GM_ROWS` rows, the outer dims of the window being the rows."""
    window = op.gm_window()
    if window is None or len(window) != len(op.gm_offsets()):
        return None
    outer, rows = 0, 1
    while outer < len(window) - 1 and rows * window[outer] <= MAX_GM_ROWS:
        rows *= window[outer]
        outer += 1
    return (window[:outer], memref_shape(gm)[:outer]) if outer else None


def _record(
    op: TileOp, hw: HardwareModel, alias_keys: tuple[int, ...], gm: SSAValue | None
) -> OpRecord:
    """The static facts of ``op``; ``gm``: the GM buffer it reads or writes, if any."""
    pipe, cost = PIPE_INDEX[op.pipe()], cost_of(op, hw)
    if isinstance(op, FlagOp):
        kind = SET if isinstance(op, SetFlagOp) else WAIT
        return OpRecord(op, kind, pipe, cost, "", 0, 0, False, 0, flag=_flag_key(op))
    if isinstance(op, CrossCoreOp):
        kind = CROSS_SET if isinstance(op, SyncBlockSetOp) else CROSS_WAIT
        return OpRecord(op, kind, pipe, cost, "", 0, 0, False, 0, flag=op.flag_id)
    path = _path(op)
    moved = op.moved_bytes() if path else 0
    # FIX reads fp32 from L0C but writes the output type: GM sees the written bytes
    to_gm = fixpipe_out_bytes(op) if isinstance(op, FixpipeOp) else op.gm_moved_bytes()
    return OpRecord(
        op,
        _kind(op),
        pipe,
        cost,
        path,
        moved,
        gm_bytes=ceil(to_gm / hw.gm_efficiency(op.gm_burst_bytes())) if "GM" in path else 0,
        gm_read=path.startswith("GM"),
        mac_cycles=cost - hw.mmad_head_cycles if isinstance(op, MmadOp) else 0,
        flops=2 * prod(op.dims()) if isinstance(op, MmadOp) else 0,
        alias_keys=alias_keys,
        gm_rows=_gm_rows(op, gm) if "GM" in path and gm is not None else None,
        after_scalar=any(_read_from_data(v) for v in op.operands),
        latency=_latency(op, hw, path, to_gm),
    )


def _kind(op: TileOp) -> int:
    if isinstance(op, SyncAllOp):  # every pipe drained first, as pipe_barrier ALL
        return FENCE
    if isinstance(op, PipeBarrierOp):
        return FENCE if op.all_pipes else BARRIER
    return NORMAL


def _latency(op: TileOp, hw: HardwareModel, path: str, to_gm: int) -> int:
    """How long after its pipe time the op's result is in place: a GM transfer's round
    trip, a vector op's result latency, else 0."""
    if "GM" in path:
        return gm_latency_cycles(hw, path, to_gm)
    if isinstance(op, VectorOp):
        return vector_latency_cycles(op, hw)
    return 0


def _read_from_data(value: SSAValue) -> bool:
    """Whether an index is (computed from) a value a tile op read on the scalar unit."""
    owner = value.owner
    if isinstance(owner, SCALAR_UNIT_OPS):
        return True
    if isinstance(owner, Operation) and index_arith.semantics(owner) is not None:
        return any(_read_from_data(v) for v in owner.operands)
    return False


@dataclass
class KernelProgram:
    """A kernel compiled for the cycle model; see the module docstring."""

    fn: func.FuncOp
    records: list[OpRecord]
    keys: int
    """How many buffer keys (slots of buffers) the kernel has."""
    data: Callable[..., None]
    """``data(block, blocks, issue, sub_block=0)``."""
    flags: Callable[..., None]
    """``flags(block, blocks, issue, sub_block=0)``."""
    has_sync: bool
    """The kernel holds ``set_flag`` / ``wait_flag`` ops."""
    uniform_blocks: bool
    """Blocks with equal loop trip counts issue identical sequences (see :meth:`shape`)."""
    source: str
    gm_accesses: Callable[..., Iterator[GmAccess]]
    """``gm_accesses(block, blocks, sub_block)``: the block's GM accesses in program order
    (see the module docstring)."""
    gm_buffers: dict[SSAValue, tuple[bool, bool]] = field(default_factory=dict)
    """GM buffers the kernel touches: (read, written)."""
    gm_args: tuple[int, ...] = ()
    """For each GM buffer number of :attr:`gm_accesses`, the index of the kernel argument
    it is (-1: not an argument), so that the launch's operands say which host buffer."""
    data_steps: Callable[..., Iterator[None]] | None = None
    """A mix kernel's part (it has cross-core flag ops): ``data`` as a generator that yields
    where a ``sync_block_wait`` cannot go on yet (:mod:`.mix` runs the parts in lock-step);
    None for other kernels."""
    flags_steps: Callable[..., Iterator[None]] | None = None
    """``flags`` as such a generator."""
    ragged: bool = False
    """Some op's instances issue one of several records by their extents (a ragged
    ``mmad``): blocks with equal trip counts may differ in which (:meth:`shape` does not
    say; :func:`~.simulate.plan_launch` counts them)."""
    called: str = ""
    """The name of the kernel this program stands for when it is not :attr:`fn`'s: a
    kernel equal to the one compiled shares its program (:mod:`.memo`)."""

    @property
    def name(self) -> str:
        return self.called or self.fn.sym_name.data

    def shape(self, block: int, blocks: int) -> tuple[tuple[int, ...] | None, list[int] | None]:
        """(trip count of every loop, instances of every record) for one block, evaluated
        from the index arithmetic without running the loops; (None, None) when a loop's
        bounds depend on a loop's induction variable."""
        values: dict[SSAValue, int | None] = {}
        trips: list[int] = []
        counts = [0] * len(self.records)
        index: dict[int, int] = {}
        for i, r in enumerate(self.records):  # a ragged op's instances: its first record
            index.setdefault(id(r.op), i)

        def visit(ops: Block, times: int) -> bool:
            for op in ops.ops:
                if isinstance(op, BlockIdxOp):
                    values[op.result] = block
                elif isinstance(op, BlockNumOp):
                    values[op.result] = blocks
                elif isinstance(op, SubBlockIdxOp):
                    values[op.result] = 0  # a mix kernel's AIV: sub-block 0 (see function)
                elif isinstance(op, TileOp):
                    found = index.get(id(op))
                    if found is not None:
                        counts[found] += times
                elif isinstance(op, arith.ConstantOp):
                    values[op.result] = index_arith.constant(op)
                elif (evaluate := index_arith.evaluator(op)) is not None:
                    args = [values.get(v) for v in op.operands]
                    known = all(a is not None for a in args)
                    values[op.results[0]] = evaluate(*args) if known else None
                elif isinstance(op, scf.ForOp):
                    lb, ub, step = (values.get(v) for v in (op.lb, op.ub, op.step))
                    if lb is None or ub is None or step is None:
                        return False
                    n = len(range(lb, ub, step))
                    trips.append(n)
                    if not visit(op.body.block, times * n):
                        return False
            return True

        if not visit(self.fn.body.block, 1):
            return None, None
        return tuple(trips), counts


class _Codegen:
    """Writes the two issuing functions of one kernel."""

    def __init__(self, fn: func.FuncOp, hw: HardwareModel):
        self.fn = fn
        self.hw = hw
        self.names: dict[SSAValue, str] = {}
        self.records: list[OpRecord] = []
        self.record_of: dict[Operation, int] = {}
        self.key_base: dict[SSAValue, int] = {}
        self.slot_loops: dict[SSAValue, tuple[scf.ForOp | None, int]] = {}
        self.counters: dict[scf.ForOp, str] = {}
        self.keys = 0
        self.uniform = True
        self.gm_buffers: dict[SSAValue, tuple[bool, bool]] = {}
        self.gm_numbers: dict[SSAValue, int] = {}
        self.gm_operand: dict[int, SSAValue] = {}
        """Record index -> the GM buffer its access touches."""
        self.gm_loops: set[scf.ForOp] = set()
        """Loops around a GM access (the only ones ``gm_accesses`` keeps)."""
        self.ragged: set[Operation] = set()
        """Ragged ops (:mod:`.ragged`): their records follow the first."""
        self.stepping = False

    def fail(self, op: Operation, why: str) -> CycleModelError:
        return CycleModelError(f"@{self.fn.sym_name.data}: cannot model '{op.name}': {why}")

    def name(self, value: SSAValue) -> str:
        found = self.names.get(value)
        if found is None:
            found = self.names[value] = f"v{len(self.names)}"
        return found

    # ---- static facts ------------------------------------------------------------------
    def prepare(self) -> None:
        declarations = (AllocOp, ViewOp, StridedViewOp, BlockIdxOp, BlockNumOp, SubBlockIdxOp)
        issued = [
            op
            for op in self.fn.walk()
            if isinstance(op, TileOp) and not isinstance(op, declarations)
        ]
        buffers: list[SSAValue] = []
        for op in issued:
            reads, writes = accesses(op)
            for b in (*reads, *writes):
                if b not in self.key_base:
                    slots = buffer_slots(b)
                    self.key_base[b] = self.keys
                    self.slot_loops[b] = (slot_loop(b) if slots > 1 else None, slots)
                    self.keys += slots
                    buffers.append(b)
                if scope_of(b) == "GM":
                    read, written = self.gm_buffers.get(b, (False, False))
                    self.gm_buffers[b] = (read or b in reads, written or b in writes)
        aliases = {
            b: tuple(
                self.key_base[o] + s
                for o in buffers
                if o is not b and may_alias(b, o)
                for s in range(self.slot_loops[o][1])
            )
            for b in buffers
        }
        for op in issued:
            reads, writes = accesses(op)
            alias_keys = tuple(k for b in (*reads, *writes) for k in aliases[b])
            gm = next((b for b in (*reads, *writes) if scope_of(b) == "GM"), None)
            self.record_of[op] = len(self.records)
            self.records.append(_record(op, self.hw, tuple(dict.fromkeys(alias_keys)), gm))
            if ragged_axes(op):
                self.records[-1:] = ragged_records(op, self.records[-1], self.hw)
                self.ragged.add(op)
            if self.records[-1].gm_bytes and gm is not None:
                self.gm_numbers.setdefault(gm, len(self.gm_numbers))
                # keyed by the op's first record, as tile_op looks it up (a ragged op's
                # records follow it)
                self.gm_operand[self.record_of[op]] = gm
                self.gm_loops.update(enclosing_loops(op))
            if isinstance(op, FlagOp) and op.slot is not None and not is_iteration_slot(op.slot):
                self.uniform = False

    # ---- code --------------------------------------------------------------------------
    def key(self, buffer: SSAValue) -> str:
        base = self.key_base[buffer]
        loop, slots = self.slot_loops[buffer]
        if loop is None:
            return str(base)
        return f"{base} + {self.counters[loop]} % {slots}"

    def keys_tuple(self, buffers: tuple[SSAValue, ...]) -> str:
        inner = ", ".join(self.key(b) for b in buffers)
        return f"({inner},)" if buffers else "()"

    def record_index(self, op: TileOp, index: int) -> str:
        """Python source of the record an instance of ``op`` issues: ``index``, or for a
        ragged op the one of its valid fractals (:func:`.ragged.record_index`)."""
        return record_index(op, index, self.name) if op in self.ragged else str(index)

    def expression(self, op: Operation) -> str | None:
        """Python source of the index arithmetic ``op`` computes, or None."""
        return index_arith.expression(op, [self.name(v) for v in op.operands])

    def block(self, block: Block, indent: str, mode: str, lines: list[str]) -> None:
        """Python source of ``block``'s ops; ``mode`` is "data", "flags" or "gm" (see the
        module docstring)."""
        for op in block.ops:
            if isinstance(op, BlockIdxOp):
                lines.append(f"{indent}{self.name(op.result)} = block")
            elif isinstance(op, BlockNumOp):
                lines.append(f"{indent}{self.name(op.result)} = blocks")
            elif isinstance(op, SubBlockIdxOp):
                lines.append(f"{indent}{self.name(op.result)} = sub_block")
            elif isinstance(op, TileOp):
                self.tile_op(op, indent, mode, lines)
            elif isinstance(op, arith.ConstantOp):
                value = index_arith.constant(op)
                lines.append(f"{indent}{self.name(op.result)} = {value!r}")
            elif (
                expr := index_arith.expression(op, [self.name(v) for v in op.operands])
            ) is not None:
                lines.append(f"{indent}{self.name(op.results[0])} = {expr}")
            elif isinstance(op, scf.ForOp):
                if mode != "gm" or op in self.gm_loops:
                    self.loop(op, indent, mode, lines)
            elif isinstance(op, scf.YieldOp | func.ReturnOp):
                if isinstance(op, scf.YieldOp) and op.operands:
                    raise self.fail(op, "loop-carried values are not supported")
            else:
                raise self.fail(op, "not a tile op, loop or index arithmetic")

    def loop(self, op: scf.ForOp, indent: str, mode: str, lines: list[str]) -> None:
        if op.iter_args:
            raise self.fail(op, "loop-carried values are not supported")
        lb, ub, step = (self.name(v) for v in (op.lb, op.ub, op.step))
        iv = self.name(op.body.block.args[0])
        counter = self.counters.setdefault(op, f"it{len(self.counters)}")
        lines.append(f"{indent}for {counter}, {iv} in enumerate(range({lb}, {ub}, {step})):")
        before = len(lines)
        self.block(op.body.block, indent + "    ", mode, lines)
        if len(lines) == before:
            lines.append(f"{indent}    pass")

    def tile_op(self, op: TileOp, indent: str, mode: str, lines: list[str]) -> None:
        index = self.record_of.get(op)
        if index is None:  # a declaration (alloc, view): no instruction
            for r in op.results:
                lines.append(f"{indent}{self.name(r)} = None")
            return
        for r in op.results:  # a value read from data: unknown here, in every mode
            lines.append(f"{indent}{self.name(r)} = _ia_data_dependent()")
        if mode == "gm":
            gm = self.gm_operand.get(index)
            if gm is not None:
                # a tuple even without offsets: "(n,)"
                where = "".join(f" {self.name(v)}," for v in op.gm_offsets())
                at = self.record_index(op, index)  # a ragged instance: its valid bytes
                lines.append(f"{indent}yield ({at}, ({self.gm_numbers[gm]},{where}))")
            return
        with_sync = mode == "flags"
        record = self.records[index]
        if record.kind in (CROSS_SET, CROSS_WAIT):
            assert isinstance(op, CrossCoreOp)
            offset = self.name(op.slot) if op.slot is not None else "0"
            call = f"issue({index}, (), (), {offset})"
            if record.kind == CROSS_WAIT and self.stepping:
                lines += [f"{indent}while {call}:", f"{indent}    yield"]
            else:
                lines.append(f"{indent}{call}")
            return
        if record.kind in (SET, WAIT, BARRIER, FENCE):
            if not with_sync:
                return
            slot = op.slot if isinstance(op, FlagOp) else None
            offset = self.name(slot) if slot is not None else "0"
            lines.append(f"{indent}issue({index}, (), (), {offset})")
            return
        at = self.record_index(op, index)
        if with_sync:
            lines.append(f"{indent}issue({at}, (), (), 0)")
            return
        reads, writes = accesses(op)
        lines.append(f"{indent}issue({at}, {self.keys_tuple(reads)}, {self.keys_tuple(writes)}, 0)")

    def function(self, name: str, mode: str, stepping: bool = False) -> str:
        """A plain issuing function (``mode`` "data" or "flags"), or (``stepping``) a
        generator that yields where a ``sync_block_wait`` finds its flag not raised and
        retries it when resumed; or the generator of GM accesses (``mode`` "gm").
        ``sub_block``: a mix kernel's AIV's tile.sub_block_idx (0 unless the caller says)."""
        self.stepping = stepping
        if mode == "gm":
            lines = [f"def {name}(block, blocks, sub_block=0):", "    yield from ()"]
        else:
            lines = [f"def {name}(block, blocks, issue, sub_block=0):"]
        self.block(self.fn.body.block, "    ", mode, lines)
        lines += ["    return", "    yield"] if stepping else ["    return None"]
        return "\n".join(lines)


def _argument_positions(fn: func.FuncOp, numbers: dict[SSAValue, int]) -> tuple[int, ...]:
    positions = [-1] * len(numbers)
    for view, number in numbers.items():
        value = gm_base(view)  # a strided view's accesses are its argument's
        if isinstance(value, BlockArgument) and value.owner is fn.body.block:
            positions[number] = value.index
    return tuple(positions)


def compile_kernel(fn: func.FuncOp, hw: HardwareModel) -> KernelProgram:
    """Compile one tiled kernel for the cycle model on ``hw`` (see the module docstring)."""
    gen = _Codegen(fn, hw)
    gen.prepare()
    functions = [
        gen.function(name, mode)
        for name, mode in (("issue_data", "data"), ("issue_flags", "flags"), ("gm_accesses", "gm"))
    ]
    cross_core = any(r.kind in (CROSS_SET, CROSS_WAIT) for r in gen.records)
    if cross_core:
        functions += [
            gen.function("step_data", "data", True),
            gen.function("step_flags", "flags", True),
        ]
    source = "\n\n\n".join(functions)
    namespace: dict[str, Any] = dict(index_arith.NAMESPACE)
    exec(compile(source, f"<cycles:{fn.sym_name.data}>", "exec"), namespace)  # noqa: S102
    has_sync = any(r.kind in (SET, WAIT) for r in gen.records)
    return KernelProgram(
        fn,
        gen.records,
        gen.keys,
        namespace["issue_data"],
        namespace["issue_flags"],
        has_sync,
        gen.uniform,
        source,
        namespace["gm_accesses"],
        gen.gm_buffers,
        _argument_positions(fn, gen.gm_numbers),
        namespace.get("step_data"),
        namespace.get("step_flags"),
        bool(gen.ragged),
    )
