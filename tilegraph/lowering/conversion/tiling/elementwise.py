"""Elementwise chains on UB tiles: the vector strategy, and the epilogue of cube kernels.

The output's storage shape ``S`` is cut at one *split axis* ``k``: a tile is
``[1, ..., 1, t, S[k+1], ..., S[-1]]`` — whole trailing dims (contiguous in GM, long vector
repeats) and ``t`` rows of dim ``k``. ``k`` and ``t`` are the largest tile whose UB buffers
(one per GM input, per op result and per scratch) fit the UB budget. Inputs broadcast along
their size-1 dims: their tile keeps those dims at 1 and the vector ops broadcast them
(a per-channel ``(1, C1, 1, 1, C0)`` tile against a feature-map tile). Tails are ragged:
loads fill the lanes outside the tensor with zeros, the store cuts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.ir import Attribute, Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import CopyOp, Load5hdOp, Store5hdOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format, FormatError
from tilegraph.formats.reshape_type import expand_rank
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder, memref_type
from tilegraph.lowering.conversion.tiling.elementwise_views import view_sources
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering


def broadcast_mask(operand: Sequence[int], out: Sequence[int]) -> list[bool] | None:
    """Per aligned output dim of ``operand`` (right-aligned): True where it broadcasts.
    None when the shapes do not broadcast to ``out``."""
    if len(operand) > len(out):
        return None
    mask = []
    for a, b in zip(operand, out[len(out) - len(operand) :], strict=True):
        if a == b:
            mask.append(False)
        elif a == 1:
            mask.append(True)
        else:
            return None
    return mask


@dataclass(frozen=True)
class TilePlan:
    shape: tuple[int, ...]
    axis: int
    size: int

    def tile_shape(self) -> list[int]:
        if not self.shape:
            return []
        k = self.axis
        return [1] * k + [self.size] + list(self.shape[k + 1 :])

    def count(self) -> int:
        if not self.shape:
            return 1
        return prod(self.shape[: self.axis]) * -(-self.shape[self.axis] // self.size)

    def covers(self, dim: int) -> bool:
        """Whether every tile spans all of ``dim`` (its offset is always 0)."""
        if dim > self.axis:
            return True
        if dim == self.axis:
            return self.size >= self.shape[dim]
        return self.shape[dim] == 1


MIN_CORE_SHARE = 128
"""Elements below which a vector tile is not split further to occupy more cores: CANN's
elementwise tiling aligns each core's share to one 128-element repeat (docs/hardware.md,
"Vector kernels over the cores")."""


def choose_tile(
    shape: Sequence[int],
    bytes_per_tile,
    budget: int,
    whole_from: int | None = None,
    depth: int = 0,
    cores: int = 1,
    least: int = MIN_CORE_SHARE,
) -> TilePlan | None:
    """The first split axis (outermost) at which some tile fits, with the most rows there;
    ``depth`` axes deeper than that one when asked (``vector.split_depth``), at most the
    last splittable axis; then, when that gives fewer tiles than ``cores``, smaller tiles
    of at least ``least`` elements (:func:`share_over_cores`).

    ``bytes_per_tile(tile_shape)`` gives the UB bytes a candidate needs. Dims from
    ``whole_from`` on are never split (a reduction's axes): the split axis comes before."""
    shape = tuple(shape)
    if not shape:
        return TilePlan(shape, 0, 1) if bytes_per_tile([]) <= budget else None
    last = len(shape) if whole_from is None else min(whole_from, len(shape))
    if last == 0:
        return TilePlan(shape, 0, shape[0]) if bytes_per_tile(list(shape)) <= budget else None
    for first in range(last):
        if bytes_per_tile([1] * (first + 1) + list(shape[first + 1 :])) > budget:
            continue
        k = min(first + depth, last - 1)  # a deeper axis's unit tile is no bigger: it fits
        unit = [1] * (k + 1) + list(shape[k + 1 :])
        fitting = TilePlan(shape, k, longest_fitting(unit, k, shape[k], bytes_per_tile, budget))
        return share_over_cores(fitting, cores, last, least)
    return None


def share_over_cores(
    plan: TilePlan, cores: int, last: int, least: int = MIN_CORE_SHARE
) -> TilePlan:
    """``plan``'s tiles made smaller until there are at least ``cores`` of them, as CANN's
    elementwise tiling first divides the output over the cores and only then loops over
    UB-sized pieces within a core: rows at the split axis shrink to one core's share, and
    when one row per tile is still too few, the split moves to deeper axes (before
    ``last``). A tile keeps at least ``least`` elements (:data:`MIN_CORE_SHARE` unless the
    op family's CANN tiling has its own floor; or the rows the plan had, if fewer), so a
    small tensor stays on fewer cores. Smaller tiles always fit: the
    UB bytes of a tile grow with it."""
    shape = plan.shape
    if cores <= 1 or plan.count() >= cores:
        return plan
    rows = plan.size
    for axis in range(plan.axis, last):
        if axis > plan.axis:
            rows = shape[axis]
        outer, inner = prod(shape[:axis]), prod(shape[axis + 1 :])
        share = -(-shape[axis] // -(-cores // outer))
        fewest_rows = -(-least // inner)
        candidate = TilePlan(shape, axis, min(rows, max(share, fewest_rows)))
        deeper_possible = axis + 1 < last and inner >= 2 * least
        if candidate.count() >= cores or candidate.size > 1 or not deeper_possible:
            return candidate
    return plan


def longest_fitting(unit: Sequence[int], k: int, most: int, bytes_per_tile, budget: int) -> int:
    """The largest ``t`` in [1, most] with ``unit`` (a tile of 1 at dim ``k``) grown to ``t``
    there within ``budget`` (``unit`` itself must fit; bytes grow with ``t``)."""
    lo, hi = 1, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bytes_per_tile([*unit[:k], mid, *unit[k + 1 :]]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _one_channel_5hd(t: TensorType) -> bool:
    """An NC1HWC0 tensor whose origin has a single channel."""
    if t.storage_format != Format.NC1HWC0:
        return False
    try:
        dims = expand_rank(list(t.origin_shape), t.origin_format, t.reshape_type.data or None)
    except FormatError:
        return False
    return len(dims) == 4 and dims[1] == 1


def _is_5hd_pair(op: Operation) -> bool:
    """A TransData between NCHW and NC1HWC0 of one tensor: nothing to do on a 5HD tile."""
    if not isinstance(op, TransDataOp):
        return False
    formats = {tensor_of(op.input).storage_format, tensor_of(op.output).storage_format}
    return formats == {Format.NCHW, Format.NC1HWC0}


class Chain:
    """The ops of an elementwise chain, their GM inputs and UB tiles, for one tile shape.

    Tiles live in the output's storage layout (``space = "storage"``), or — when the chain
    converts between NCHW and NC1HWC0 — always in NC1HWC0 (``"5hd"``): NCHW inputs are
    loaded with ``tile.load_5hd``, an NCHW result is stored with ``tile.store_5hd``, and the
    TransData ops themselves cost nothing on the tile (the DMA did their work).
    """

    def __init__(
        self,
        body: KernelBody,
        ops: Sequence[Operation],
        out_shape: Sequence[int],
        *,
        aliases: dict[SSAValue, SSAValue] | None = None,
        space_value: SSAValue | None = None,
        sources: dict[SSAValue, SSAValue] | None = None,
    ) -> None:
        """``aliases`` maps a value the ops read to the value whose tile stands for it (a
        concat result to the concatenated input of this region); ``space_value`` fixes the
        tensor whose layout gives the 5HD iteration space; ``sources`` maps an input to
        the GM buffer it is read from instead of its kernel argument (a view of it
        re-indexed to the tile space, as a matmul epilogue across a reshape reads it)."""
        self.body = body
        self.sources = dict(sources or {})
        self.ops = [op for op in ops if isinstance(op, GraphOp | TransDataOp)]
        self.out_shape = tuple(out_shape)
        self.space = "storage"
        self.aliases = dict(aliases or {})
        self.shift = 0
        """Elements (channels) along ``shift_axis`` between this region and the output."""
        self.shift_axis = 1
        self.shifted: set[SSAValue] = set()
        """Inputs addressed in the output's coordinates (shifted), e.g. epilogue parameters."""
        self.full_shape = self.out_shape
        """The output's whole tile space (what shifted inputs broadcast against)."""
        self.channels = 0
        """In 5HD space, the most origin channels of the region's values: a one-channel
        NCHW input broadcasts across C0 only when some value has more than one."""
        produced = {r for op in self.ops for r in op.results} | set(self.aliases)
        self.inputs: list[SSAValue] = []
        for op in self.ops:
            for v in _read_operands(op):
                if v not in produced and v not in self.inputs:
                    self.inputs.append(v)
        values = [*self.inputs, *produced]
        formats = {tensor_of(v).storage_format for v in values if tensor_of(v).rank == 4}
        if any(isinstance(op, TransDataOp) for op in self.ops) or formats == {
            Format.NCHW,
            Format.NC1HWC0,
        }:
            five = [v for v in values if tensor_of(v).storage_format == Format.NC1HWC0]
            if space_value is not None:
                five = (
                    [space_value] if tensor_of(space_value).storage_format == Format.NC1HWC0 else []
                )
                if not five and tensor_of(space_value).rank == 4:
                    t = tensor_of(space_value)
                    c0 = next(
                        (int(tensor_of(v).storage_shape[-1]) for v in values
                         if tensor_of(v).storage_format == Format.NC1HWC0),
                        None,
                    )  # fmt: skip
                    if c0 is not None:
                        n, c, h, w = (int(d) for d in t.origin_shape)
                        self.space = "5hd"
                        self.out_shape = (n, -(-c // c0), h, w, c0)
                        self.channels = c
            if five:
                self.space = "5hd"
                self.out_shape = max(
                    (tuple(int(d) for d in tensor_of(v).storage_shape) for v in five), key=prod
                )
                self.channels = max(_channels(tensor_of(v)) for v in five)

    def source(self, v: SSAValue) -> SSAValue | None:
        """The GM buffer input ``v`` is read from (None: it is computed, not read)."""
        return self.sources.get(v) or self.body.source(v)

    # ---- checks ------------------------------------------------------------------------
    def unsupported(self, given: Sequence[SSAValue] = ()) -> str | None:
        """Why this chain has no vector kernel (None when it has one)."""
        for op in self.ops:
            if isinstance(op, TransDataOp):
                if not (self.space == "5hd" and _is_5hd_pair(op)):
                    return "no tile lowering for this layout.trans_data"
            elif vector_lowering(op) is None:
                return f"no vector lowering for {op.name}"
        for v in self.inputs:
            if v in given:
                continue
            arg = self.source(v)
            if arg is None:
                producer = v.owner.name if isinstance(v.owner, Operation) else "a value"
                return f"{producer} feeds the chain"
            if self._mask(v) is None:
                return (
                    f"input {list(memref_shape(arg))} does not broadcast to the output "
                    f"{list(self.out_shape)} in storage layout"
                )
        return None

    def _nchw(self, v: SSAValue) -> bool:
        """Held as NCHW (or CHW) in GM while the tiles are 5HD: moved by load_5hd."""
        t = tensor_of(v)
        return (
            self.space == "5hd"
            and t.rank in (3, 4)
            and t.storage_format == Format.NCHW
            and t.origin_format == Format.NCHW
        )

    def _mask(self, v: SSAValue) -> list[bool] | None:
        """Per dim of the input's tile: True where it broadcasts (None: it cannot)."""
        arg = self.source(v)
        assert arg is not None
        shape = memref_shape(arg)
        reference = self.full_shape if v in self.shifted else self.out_shape
        if self._nchw(v):
            n, c, h, w = (1, *shape) if len(shape) == 3 else shape
            if c == 1 and self.channels > 1:
                return None  # a 1-channel NCHW input would have to broadcast across C0
            return broadcast_mask([n, -(-c // reference[4]), h, w, reference[4]], reference)
        if (
            self.space == "5hd"
            and tensor_of(v).rank >= 1
            and tensor_of(v).storage_format != Format.NC1HWC0
        ):
            if any(d != 1 for d in shape):
                return None  # an ND vector has no axis meaning in NC1HWC0
        mask = broadcast_mask(shape, reference)
        if mask is not None and _one_channel_5hd(tensor_of(v)) and len(reference) == 5:
            # One channel in NC1HWC0 is lane 0 of its C0 block: it broadcasts across the
            # lanes (the tile loads lane 0 only), as the origin's size-1 C does.
            mask[-1] = True
        return mask

    def _input_tile(self, v: SSAValue, tile: Sequence[int]) -> list[int]:
        mask = self._mask(v)
        assert mask is not None
        lead = len(self.out_shape) - len(mask)
        return [1 if b else tile[lead + i] for i, b in enumerate(mask)]

    def _tiles(
        self, tile: Sequence[int], given: Sequence[SSAValue]
    ) -> list[tuple[list[int], Attribute]]:
        """(shape, element type) of every UB tile the chain needs."""
        tiles: list[tuple[list[int], Attribute]] = []
        for v in self.inputs:
            if v not in given:
                arg = self.source(v)
                assert arg is not None
                tiles.append((self._input_tile(v, tile), memref_type(arg).element_type))
        for op in self.ops:
            lowering = vector_lowering(op) if isinstance(op, GraphOp) else None
            if lowering is None or not isinstance(op, GraphOp):
                continue
            tiles.extend((self._op_tile(op, tile), e) for e in lowering.tile_types(op))
        return tiles

    def ub_bytes(self, builder_hw, tile: Sequence[int], given: Sequence[SSAValue] = ()) -> int:
        return sum(
            aligned_bytes(builder_hw, "UB", prod(s) * element_bytes(e))
            for s, e in self._tiles(tile, given)
        )

    # ---- emission ----------------------------------------------------------------------
    def allocate(self, b: KernelBuilder, tile: Sequence[int], given: Sequence[SSAValue] = ()):
        """UB tiles for the inputs (by value) and for each op (result, scratch...)."""
        self.tile = list(tile)
        self.input_tiles: dict[SSAValue, SSAValue] = {}
        for v in self.inputs:
            if v not in given:
                arg = self.source(v)
                assert arg is not None
                self.input_tiles[v] = b.buffer(
                    self._input_tile(v, tile), memref_type(arg).element_type, "UB",
                    f"{v.name_hint or 'in'}_ub",
                )  # fmt: skip
        self.op_tiles: dict[Operation, list[SSAValue]] = {}
        for op in self.ops:
            lowering = vector_lowering(op) if isinstance(op, GraphOp) else None
            if lowering is None or not isinstance(op, GraphOp):
                continue
            name = op.results[0].name_hint or "t"
            names = [f"{name}_ub", *(f"{name}_tmp{i + 1}" for i in range(lowering.scratch))]
            names += [f"{name}_mask{i + 1}" for i in range(lowering.masks)]
            self.op_tiles[op] = [
                b.buffer(self._op_tile(op, tile), element, "UB", n)
                for n, element in zip(names, lowering.tile_types(op), strict=True)
            ]

    def _op_tile(self, op: Operation, tile: Sequence[int]) -> list[int]:
        """The UB tiles of an op of the chain: the chain's tile, or one element (every dim
        1, broadcast by its readers like a broadcast input's tile) for a scalar program, an
        op on one-element tensors only (``fuse-ops`` lets one join a group that broadcasts
        it). A chain whose output is itself one element has no scalar programs: its tile
        may be larger than the output (a cube anchor's padded accumulator tile, which its
        first op reads whole)."""
        if prod(self.out_shape) == 1:
            return list(tile)
        values = (*op.operands, *op.results)
        if all(_stored_scalar(v) for v in values):
            return [1] * len(tile)
        return list(tile)

    def invariant_inputs(self, plan: TilePlan) -> list[SSAValue]:
        """Inputs whose tile is the same for every output tile (loaded once)."""
        found = []
        for v in self.input_tiles:
            mask = self._mask(v)
            assert mask is not None
            lead = len(self.out_shape) - len(mask)
            if all(bcast or plan.covers(lead + i) for i, bcast in enumerate(mask)):
                found.append(v)
        return found

    def set_shift(
        self,
        amount: int,
        axis: int,
        unit: int,
        shifted: Sequence[SSAValue],
        full_shape: Sequence[int],
        extent: int | None = None,
    ) -> str | None:
        """Address this region ``amount`` elements (channels) along ``axis`` into the output
        and the ``shifted`` inputs; ``unit`` elements make one step of the tile space along
        that axis (C0 for NC1HWC0's C1). ``extent``: the region's channel count, which an
        NCHW store of a 5HD tile does not write past. Returns why it cannot (a C1 step off
        a C0 block)."""
        self.shift, self.shift_axis, self.shift_unit = amount, axis, unit
        self.channel_end = None if extent is None else amount + extent
        self.shifted = set(shifted)
        self.full_shape = tuple(full_shape)
        if amount % unit and any(not self._nchw(v) for v in self.shifted):
            return "a concat offset inside a C0 block of an NC1HWC0 input"
        return None

    shift_unit = 1
    channel_end: int | None = None
    """The end of the region's channels in an NCHW output (None: the output's end)."""

    def _shifted_offsets(
        self, b: KernelBuilder, offsets: Sequence[SSAValue], channels: bool
    ) -> list[SSAValue]:
        """Offsets moved by the region's shift; ``channels``: dim 1 counts channels (an NCHW
        access of a 5HD tile), else it counts steps of the tile space."""
        moved = list(offsets)
        if self.shift:
            step = self.shift if channels else self.shift // self.shift_unit
            moved[self.shift_axis] = b.add_index(moved[self.shift_axis], b.index(step))
        return moved

    def load(self, b: KernelBuilder, v: SSAValue, out_offsets: Sequence[SSAValue]) -> None:
        arg = self.source(v)
        assert arg is not None
        shift = v in self.shifted
        if self._nchw(v):
            mask = self._mask(v)
            assert mask is not None
            zero = b.index(0)
            n, c1, h, w, _ = (
                zero if bcast else o for bcast, o in zip(mask, out_offsets, strict=True)
            )
            start = [n, b.affine(c1, self.out_shape[4]), h, w]
            if shift:
                start = self._shifted_offsets(b, start, channels=True)
            b.add(Load5hdOp(arg, start, self.input_tiles[v]))
            return
        offsets = self._shifted_offsets(b, out_offsets, channels=False) if shift else out_offsets
        reference = self.full_shape if shift else self.out_shape
        load_broadcast(b, arg, reference, offsets, self.input_tiles[v])

    def store(
        self, b: KernelBuilder, tile: SSAValue, out_arg: SSAValue, offsets: Sequence[SSAValue]
    ) -> None:
        """Store the tile of the written value (to NCHW from a 5HD tile when needed), at the
        region's shift."""
        if self.space == "5hd" and len(memref_shape(out_arg)) == 4:
            n, c1, h, w, _ = offsets
            start = self._shifted_offsets(b, [n, b.affine(c1, self.out_shape[4]), h, w], True)
            end = self.channel_end
            if end is not None and end >= memref_shape(out_arg)[1]:
                end = None  # the output's end: nothing past it is written anyway
            b.add(Store5hdOp(tile, out_arg, start, end))
        else:
            store(b, tile, out_arg, self._shifted_offsets(b, offsets, channels=False))

    def epilogue(
        self,
        b: KernelBuilder,
        given: dict[SSAValue, SSAValue],
        offsets: Sequence[SSAValue],
        out_arg: SSAValue,
        written: SSAValue,
    ) -> None:
        """On the tile at ``offsets``: load the chain's GM inputs, compute it from the
        ``given`` tiles (an anchor's result on UB) and store ``written``'s tile."""
        for v in self.input_tiles:
            self.load(b, v, offsets)
        tiles = self.compute(b, given, dict(self.input_tiles))
        self.store(b, tiles[written], out_arg, offsets)

    def compute(
        self, b: KernelBuilder, given: dict[SSAValue, SSAValue], loaded: dict[SSAValue, SSAValue]
    ) -> dict[SSAValue, SSAValue]:
        """Emit every op on the tiles; returns value -> tile for all chain values."""
        tiles: dict[SSAValue, SSAValue] = {**given, **loaded}
        for op in self.ops:
            for alias, target in self.aliases.items():
                if alias not in tiles and target in tiles:
                    tiles[alias] = tiles[target]
            if isinstance(op, TransDataOp):
                tiles[op.output] = tiles[op.input]
                continue
            lowering = vector_lowering(op)
            assert lowering is not None
            result, *extra = self.op_tiles[op]
            scratch, masks = extra[: lowering.scratch], extra[lowering.scratch :]
            ins: list[SSAValue | None] = [
                None if s is None else tiles[s] for s in lowering.read_operands(op)
            ]
            lowering.emit(VectorEmitter(b, result, scratch, masks), op, ins, result)
            tiles[op.results[0]] = result
        return tiles


def _channels(t: TensorType) -> int:
    """C of a tensor held in NC1HWC0: an NCHW tensor of lower rank (a per-channel or scalar
    weight, ``[1]``) aligns to the right of ``[N, C, H, W]``."""
    shape = [1] * (4 - t.rank) + [int(d) for d in t.origin_shape]  # type: ignore[arg-type]
    return shape[1]


def _stored_scalar(v: SSAValue) -> bool:
    t = v.type
    return isinstance(t, TensorType) and t.stored_as_one_element


def _read_operands(op: Operation) -> list[SSAValue]:
    """The operands an op of a chain reads from its tiles (all, without a vector program)."""
    lowering = vector_lowering(op) if isinstance(op, GraphOp) else None
    slots = op.operands if lowering is None else lowering.read_operands(op)  # type: ignore[arg-type]
    return [v for v in slots if v is not None]


def load_broadcast(
    b: KernelBuilder,
    arg: SSAValue,
    out_shape: Sequence[int],
    out_offsets: Sequence[SSAValue],
    tile: SSAValue,
) -> None:
    """Load the part of GM input ``arg`` that the output tile at ``out_offsets`` reads
    (offset 0 along the dims it broadcasts) into UB ``tile``."""
    mask = broadcast_mask(memref_shape(arg), out_shape)
    assert mask is not None
    lead = len(out_shape) - len(mask)
    zero = b.index(0)
    src_offsets = [zero if bcast else out_offsets[lead + i] for i, bcast in enumerate(mask)]
    b.add(CopyOp(arg, src_offsets, tile, [zero] * len(mask)))


def store(b: KernelBuilder, tile: SSAValue, out_arg: SSAValue, offsets: Sequence[SSAValue]) -> None:
    zero = b.index(0)
    b.add(CopyOp(tile, [zero] * len(offsets), out_arg, list(offsets)))


def tile_loops(b: KernelBuilder, plan: TilePlan):
    """Open the loops of a plan; returns (context managers to exit, output offsets)."""
    from contextlib import ExitStack

    stack = ExitStack()
    offsets: list[SSAValue] = []
    shape = plan.shape
    for d in range(len(shape)):
        if d < plan.axis:
            offsets.append(stack.enter_context(b.loop(shape[d], 1, f"i{d}", True)))
        elif d == plan.axis:
            offsets.append(stack.enter_context(b.loop(shape[d], plan.size, f"i{d}", True)))
        else:
            offsets.append(b.index(0))
    return stack, offsets


def emit_vector_kernel(body: KernelBody, b: KernelBuilder, budget: int) -> str | None:
    """Tile an elementwise kernel; returns why it cannot (None when emitted). View ops of
    its inputs are no ops of it: :func:`~.elementwise_views.view_sources`."""
    ops, views, writes = view_sources(b, body)
    for op in ops:  # an op with no vector program says so, whatever else is wrong
        if not isinstance(op, TransDataOp) and (
            not isinstance(op, GraphOp) or vector_lowering(op) is None
        ):
            return f"no vector lowering for {op.name}"
    out_shape = memref_shape(writes[0][1])
    if any(memref_shape(out_arg) != out_shape for _, out_arg in writes):
        return "an elementwise kernel with outputs of several shapes"
    chain = Chain(body, ops, out_shape, sources=views)
    reason = chain.unsupported()
    if reason:
        return reason
    computed = {r for op in chain.ops for r in op.results}
    if any(value not in computed for value, _ in writes):
        return "the kernel writes an input unchanged"
    plan = choose_tile(
        chain.out_shape,
        lambda t: chain.ub_bytes(b.hw, t),
        budget,
        depth=b.split_depth(),
        cores=b.hw.vector_cores,
    )
    if plan is None:
        return "no tile of the output fits UB"
    if b.dry_run:
        return None
    chain.allocate(b, plan.tile_shape())
    invariant = chain.invariant_inputs(plan)
    zeros = [b.index(0)] * len(chain.out_shape)
    for v in invariant:
        chain.load(b, v, zeros)
    stack, offsets = tile_loops(b, plan)
    with stack:
        for v in chain.input_tiles:
            if v not in invariant:
                chain.load(b, v, offsets)
        tiles = chain.compute(b, {}, dict(chain.input_tiles))
        for value, out_arg in writes:  # a group of several outputs writes each
            chain.store(b, tiles[value], out_arg, offsets)
    b.tiles = plan.count()
    return None
