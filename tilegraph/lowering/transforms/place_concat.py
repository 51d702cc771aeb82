"""``place-concat``: a concat runs no kernel; its producers write their results in place,
into the concat's output (GE's no-task concat).

After ``lower-graph-to-kernels`` a ``graph.concat`` that no fusion group absorbed is a
vector kernel of its own, which reads each input from GM and stores it at its offset in
the output::

    %a = tile.alloc : memref<1x1x8x8x16xf32, "GM">
    tile.launch @conv_a(%x, %wa, %a) : ...
    %b = tile.alloc : memref<1x2x8x8x16xf32, "GM">
    tile.launch @conv_b(%x, %wb, %b) : ...
    %c = tile.alloc : memref<1x3x8x8x16xf32, "GM">
    tile.launch @concat(%a, %b, %c) : ...

When each input is a contiguous run of the output, this pass gives each input the memory
of its run, so its producer writes it where the concat would have copied it::

    %c = tile.alloc : memref<1x3x8x8x16xf32, "GM">
    %a = tile.slice_view %c[0] : memref<1x3x8x8x16xf32, "GM"> to memref<1x1x8x8x16xf32, "GM">
    tile.launch @conv_a(%x, %wa, %a) : ...
    %b = tile.slice_view %c[1024] : memref<1x3x8x8x16xf32, "GM"> to memref<1x2x8x8x16xf32, "GM">
    tile.launch @conv_b(%x, %wb, %b) : ...

GE does the same (docs/tile-level.md, "Concats are placements", cites the source): its
fusion engine marks such a concat no-task with no-padding continuous inputs and an output
that reuses them.

**When** (the kernel). The callee's body is one ``tile.read`` of each input argument (a
read may go through reshape-family ops on row-major tensors, which move no byte: the
argument is then the region under another shape, for a contiguous region only), one
``graph.concat`` of them (each once) and one ``tile.write`` of it to the last argument,
all arguments plain static GM memrefs of one element type. Its storage axis is the concat
axis when every tensor is stored as its origin (ND, NCHW: row-major), or C1 when
the tensors are NCHW stored as NC1HWC0 and every input's C is a multiple of C0 (GE's
condition; a C off the C0 grid has padding lanes between the inputs). Every storage dim
before that axis is 1 (batch 1 for a channel concat), so input ``i`` is the run of the
output's elements after those of inputs ``0..i-1``.

**When** (the host). The launch is a plain one in the host function's body, its output a
``tile.alloc``; each input is a ``tile.alloc`` (or, for a contiguous region, a
``tile.reshape_view`` of one: its source takes the region) that appears once among the concat's
arguments, is not returned, is written before the concat (by one launch, or through the
slices of an earlier placement: a concat of concats is one buffer), is written by no launch
after it, and is used by nothing but launches, ``tile.reshape_view`` / ``tile.slice_view``
aliases and the concat (a device loop may write its operands). Its readers, before or
after the concat, read the slice: the same bytes the copy held, as the output is written
by no one else.

**Refused** (the kernel stays), one statistic each: ``refused-argument`` (an input is a
function argument), ``refused-constant`` (a ``tile.constant``), ``refused-view`` (another
view), ``refused-repeated`` (an input given twice), ``refused-returned``,
``refused-writers`` (no writer, or several), ``refused-written-after``, ``refused-loop`` (a
use in a device loop or by another op), ``refused-output`` (the output is no
``tile.alloc``), ``refused-layout`` (a concat off the C0 grid or in
another storage format), ``refused-strided`` (a storage dim before the axis is not 1: the
regions are strided and ``strided=false``, or a run is not whole 32 B blocks; see
below).

**Strided regions** (``strided=true``, the default; ``strided=false`` places contiguous
runs only). Each input becomes a ``tile.strided_view`` of the
output (the output's strides, the input's element offset), and each launch that writes or
reads it runs a clone of its kernel whose argument has the view's type
(``retyped-kernels``): the tiled loads and stores address the view, the cycle model costs
its runs (TBE's ``strided_write`` of a conv into a concat's output). Taken when every run
of an input (one per index of the dims before the axis) is whole 32 B blocks, and the
input has no host view (``refused-view``: a view needs a row-major source).

Downstream a slice is (part of) its source, as an alias is
(:func:`~tilegraph.dialects.tile.workspace.alias_base`): ``plan-memory`` gives the output
one place, born at its first producer and live to its last reader through any slice; a
slice's writer never writes in place over an input.

Statistics: ``placed`` (concat launches removed), ``retyped-kernels`` (kernels launched as
a clone with strided arguments), ``kernels-removed`` (kernel functions no launch runs any
more), ``refused-<reason>`` (concat launches kept, by the reasons above).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.graph import ConstantOp as GraphConstantOp
from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import AllocOp, ConstantOp, LaunchOp, ReadOp, WriteOp
from tilegraph.dialects.tile.host import numpy_dtype
from tilegraph.dialects.tile.workspace import (
    ReshapeViewOp,
    SliceViewOp,
    StridedViewOp,
    reshape_view_base,
    strided_memref,
)
from tilegraph.formats.format import Format
from tilegraph.lowering.analysis.host_liveness import KernelFacts, host_functions
from tilegraph.lowering.transforms.alias_reshapes import (
    ALIASED_OPS,
    plain_gm,
    remove_unlaunched,
    row_major_tensor,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass

GM_BLOCK = 32
"""Bytes of the DMA's data block (copies count 32 B blocks; runs under 32 B alignment lose
rate: docs/hardware.md, "GM runs" and "GM latency per DMA"): a strided placement is taken
only when every run of an input is whole blocks."""


def _storage_axis(concat: ConcatOp) -> int | str:
    """The storage axis the concat joins its inputs on, or ``"layout"`` when the inputs are
    not whole runs along one storage axis (see the module docstring)."""
    types = [v.type for v in (*concat.inputs, concat.concat_result)]
    if not all(isinstance(t, TensorType) and t.is_static for t in types):
        return "layout"
    tensors = [t for t in types if isinstance(t, TensorType)]
    axis = concat.attr("axis")
    assert isinstance(axis, int)
    rank = len(tensors[0].origin_shape)
    axis %= rank
    if all(row_major_tensor(t) for t in tensors):
        return axis
    five_hd = all(
        t.origin_format == Format.NCHW and t.storage_format == Format.NC1HWC0 for t in tensors
    )
    if five_hd and axis == 1:
        c0 = tensors[-1].storage_shape[-1]
        assert isinstance(c0, int)
        if all(isinstance(c := t.origin_shape[1], int) and c % c0 == 0 for t in tensors):
            return 1  # C1
    return "layout"


@dataclass(frozen=True)
class Regions:
    """Where a concat kernel's inputs lie in its output (see the module docstring)."""

    offsets: list[int]
    """Elements from the output's start to each input argument's first element."""
    strides: list[int]
    """The output's row-major element strides (an input's view keeps them)."""
    contiguous: bool
    """Every storage dim before the axis is 1: each input is one run of the output."""
    whole_blocks: bool
    """Each input's runs (per index of the dims before the axis) are whole 32 B blocks."""


def concat_regions(kernel: func.FuncOp) -> Regions | str | None:
    """The regions of a concat-only kernel's inputs in its output: None when the kernel is
    no such kernel, ``"layout"`` when the inputs are no whole slices along one storage
    axis, ``"strided"`` when a reshaped input's region is not contiguous (its argument's
    shape cannot carry the output's strides)."""
    if not kernel.body.blocks or len(kernel.body.block.args) < 2:
        return None
    *inputs, output = kernel.body.block.args
    if not all(plain_gm(a.type) for a in kernel.body.block.args):
        return None
    found: dict[SSAValue, SSAValue] = {}  # a read, or a reshape of one -> its argument
    concats: list[ConcatOp] = []
    writes: list[WriteOp] = []
    for op in kernel.body.block.ops:
        if isinstance(op, ReadOp) and op.buffer in inputs and op.buffer not in found.values():
            found[op.result] = op.buffer
        elif isinstance(op, ALIASED_OPS) and op.operands[0] in found:
            # a reshape of a row-major tensor moves no byte: the argument is the region
            if not (row_major_tensor(op.operands[0].type) and row_major_tensor(op.results[0].type)):
                return None
            found[op.results[0]] = found[op.operands[0]]
        elif isinstance(op, ConcatOp):
            concats.append(op)
        elif isinstance(op, WriteOp):
            writes.append(op)
        elif not isinstance(op, func.ReturnOp | GraphConstantOp):
            return None
    if len(concats) != 1 or len(writes) != 1:
        return None
    concat, write = concats[0], writes[0]
    if write.buffer is not output or write.value is not concat.concat_result:
        return None
    order = [found.get(v) for v in concat.inputs]
    if sorted(map(id, order)) != sorted(map(id, inputs)):
        return None  # each argument once (in any order)
    axis = _storage_axis(concat)
    if isinstance(axis, str):
        return axis
    assert isinstance(output.type, MemRefType)
    shape = list(output.type.get_shape())
    strides = [prod(shape[d + 1 :]) for d in range(len(shape))]
    offsets: dict[SSAValue | None, int] = {}  # by argument
    start, whole = 0, True
    item = numpy_dtype(output.type).itemsize
    for value, arg in zip(concat.inputs, order, strict=True):
        t = value.type
        assert isinstance(t, TensorType)
        mine = [int(d) for d in t.storage_shape]
        if mine[:axis] + mine[axis + 1 :] != shape[:axis] + shape[axis + 1 :]:
            return None
        offsets[arg] = start * strides[axis]
        start += mine[axis]
        whole = whole and prod(mine[axis:]) * item % GM_BLOCK == 0
    if start != shape[axis]:
        return None
    contiguous = all(d == 1 for d in shape[:axis])
    reshaped = any(not isinstance(v.owner, ReadOp) for v in concat.inputs)
    if reshaped and not contiguous:
        return "strided"
    return Regions([offsets[a] for a in inputs], strides, contiguous, whole)


def _aliases(value: SSAValue) -> Iterator[SSAValue]:
    """``value`` and every host alias of it (``tile.reshape_view`` / ``tile.slice_view``
    chains): the values whose accesses touch its bytes."""
    yield value
    for use in value.uses:
        if isinstance(use.operation, ReshapeViewOp | SliceViewOp):
            yield from _aliases(use.operation.result)


@dataclass
class _Host:
    """One host function and the facts the placement asks of its launches."""

    fn: func.FuncOp
    facts: KernelFacts
    kernels: dict[str, func.FuncOp]
    module: ModuleOp
    retyped: dict[tuple[str, tuple[tuple[int, Attribute], ...]], str] = field(default_factory=dict)
    """Clones of kernels with strided arguments, by (kernel, (position, type)...)."""

    @property
    def block(self) -> Block:
        return self.fn.body.block

    def written(self, launch: LaunchOp) -> frozenset[int]:
        return self.facts.get(launch, self.fn)[1]

    def refusal(self, value: SSAValue, concat: LaunchOp, strided: bool) -> str | None:
        """Why the concat input ``value`` cannot become a slice of the output (None: it
        can; see the module docstring). ``strided``: its region is a strided one, which
        only launches can take (a host view needs a row-major source)."""
        if isinstance(value.owner, ReshapeViewOp) and not strided:
            value = reshape_view_base(value)  # the alias's source takes the region
        owner = value.owner
        if not isinstance(owner, Operation):
            return "argument"
        if isinstance(owner, ConstantOp):
            return "constant"
        if not isinstance(owner, AllocOp):
            return "view"
        if [reshape_view_base(a) for a in concat.args].count(value) != 1:
            return "repeated"
        writers: list[Operation] = []
        for alias in _aliases(value):
            for use in alias.uses:
                user = use.operation
                if isinstance(user, ReshapeViewOp | SliceViewOp):
                    if strided:
                        return "view"
                    continue
                if user.parent_block() is not self.block:
                    return "loop"
                if isinstance(user, func.ReturnOp):
                    return "returned"
                if not isinstance(user, LaunchOp):
                    return "loop"
                if user is concat:
                    continue
                if use.index in self.written(user):
                    if concat.is_before_in_block(user):
                        return "written-after"
                    writers.append(user)
        # one writer of the whole, or the slices' writers of an earlier placement
        direct = [w for w in writers if any(a is value for a in w.operands)]
        sliced = any(isinstance(u.operation, SliceViewOp) for u in value.uses)
        return None if (len(direct) == 1 and not sliced) or (sliced and not direct) else "writers"

    def place(self, concat: LaunchOp, regions: Regions) -> None:
        """Give each input of ``concat`` its region of the output; remove the launch."""
        *inputs, output = concat.args
        # an input that is an alias gives its source the region (same bytes, its shape)
        inputs = [reshape_view_base(v) for v in inputs]
        allocs = [v.owner for v in inputs]
        assert all(isinstance(a, AllocOp) for a in allocs)
        first = min(allocs, key=self.block.get_operation_index)  # type: ignore[arg-type]
        out_alloc = output.owner
        assert isinstance(out_alloc, Operation) and isinstance(first, Operation)
        out_alloc.detach()
        self.block.insert_op_before(out_alloc, first)
        for value, alloc, offset in zip(inputs, allocs, regions.offsets, strict=True):
            assert isinstance(value.type, MemRefType) and isinstance(alloc, AllocOp)
            if regions.contiguous:
                view: SliceViewOp | StridedViewOp = SliceViewOp(output, offset, value.type)
            else:
                shape = value.type.get_shape()
                view = StridedViewOp(
                    output, strided_memref(value.type, shape, regions.strides, offset)
                )
            view.result.name_hint = value.name_hint
            view.location = alloc.location
            self.block.insert_op_before(view, alloc)
            value.replace_all_uses_with(view.result)
            alloc.detach()
            alloc.erase()
            if not regions.contiguous:
                for use in list(view.result.uses):
                    launch = use.operation
                    assert isinstance(launch, LaunchOp)
                    if launch is not concat:  # it is going
                        self.retype(launch)
        concat.detach()
        concat.erase()

    def retype(self, launch: LaunchOp) -> None:
        """Launch a clone of ``launch``'s kernel whose arguments have the types of the
        launch's (a strided view's where it passes one): the kernel's loads and stores
        then address the view, and the cycle model sees its strides."""
        name = launch.callee.string_value()
        kernel = self.kernels[name]
        changed = tuple(
            (i, a.type)
            for i, (a, p) in enumerate(zip(launch.args, kernel.body.block.args, strict=True))
            if a.type != p.type
        )
        if not changed:
            return
        clone_name = self.retyped.get((name, changed))
        if clone_name is None:
            clone = kernel.clone()
            clone_name = _fresh_name(f"{name}_strided", self.kernels)
            clone.sym_name = StringAttr(clone_name)
            block = clone.body.block
            for i, memref in changed:
                old = block.args[i]
                new = block.insert_arg(memref, i)
                new.name_hint = old.name_hint
                old.replace_all_uses_with(new)
                block.erase_arg(old)
            clone.update_function_type()
            self.module.body.block.insert_op_after(clone, kernel)
            self.kernels[clone_name] = clone
            self.retyped[(name, changed)] = clone_name
        launch.properties["callee"] = SymbolRefAttr(clone_name)


def _fresh_name(base: str, taken: dict[str, func.FuncOp]) -> str:
    n = 0
    while f"{base}{n or ''}" in taken:
        n += 1
    return f"{base}{n or ''}"


def place_concats(
    fn: func.FuncOp, module: ModuleOp, kernels: dict[str, func.FuncOp], strided: bool
) -> tuple[list[str], list[str], dict[str, int]]:
    """Place ``fn``'s concats (``strided``: strided regions too); (the callee of each launch
    removed, the kernels of launches retargeted to a retyped clone, refusals by reason)."""
    host = _Host(fn, KernelFacts(kernels), kernels, module)
    placed: list[str] = []
    refused: dict[str, int] = {}
    for launch in [op for op in fn.body.block.ops if isinstance(op, LaunchOp)]:
        kernel = kernels.get(launch.callee.string_value())
        found = None if launch.is_mix or kernel is None else concat_regions(kernel)
        if found is None:
            continue
        reason = found if isinstance(found, str) else None
        if isinstance(found, Regions) and not found.contiguous:
            if not (strided and found.whole_blocks):
                reason = "strided"
        if reason is None and not isinstance(launch.args[-1].owner, AllocOp):
            reason = "output"
        for value in launch.args[:-1]:
            reason = reason or host.refusal(
                value, launch, isinstance(found, Regions) and not found.contiguous
            )
        if reason is not None:
            refused[reason] = refused.get(reason, 0) + 1
            continue
        assert isinstance(found, Regions)
        placed.append(launch.callee.string_value())
        host.place(launch, found)
    return placed, [name for name, _ in host.retyped], refused


@register_pass
@dataclass(frozen=True)
class PlaceConcatPass(ModulePass):
    """Concats whose inputs are contiguous runs of the output become placements: each
    producer writes into the output through a ``tile.slice_view``, the launch is gone
    (``strided``: inputs that are strided slices of the output too, through
    ``tile.strided_view``)."""

    name = "place-concat"

    strided: bool = True
    """Place strided regions too (``strided=false``: contiguous runs only, GE's no-task
    concat)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        kernels = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        placed: list[str] = []
        retargeted: list[str] = []
        for fn in host_functions(op):
            names, retyped, refused = place_concats(fn, op, kernels, self.strided)
            placed += names
            retargeted += retyped
            for reason, count in refused.items():
                stats.add(f"refused-{reason}", count)
        stats.add("placed", len(placed))
        stats.add("retyped-kernels", len(set(retargeted)))
        stats.add("kernels-removed", remove_unlaunched(op, kernels, placed + retargeted))
