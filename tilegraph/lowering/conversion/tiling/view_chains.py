"""Chains of reshapes and transposes as one permute of a coarser view (GE's one TransposeD).

A chain of reshape-like ops and transposes only re-indexes its input: Hiera's unroll
(``reshape, transpose, reshape, transpose, ...``), CLAP's window partition
(``transpose, reshape, transpose``), ESPCN's pixel shuffle after a convolution
(``trans_data, reshape, transpose, reshape``). Composed, it is one transpose of a view of
the source with some axes split: every reshape maps a group of its input's axes onto a
group of output axes whose products agree (the "compatible reshape" factorisation), so
the chain is tracked as *atoms* — runs of source elements, each a size and a stride into
the source — grouped into the axes of the current value. A reshape regroups the row-major
sequence of atoms, splitting an atom where a new axis boundary falls inside it (an atom
of ``s`` elements at stride ``t`` cut into ``a · (s / a)``: the outer part at stride
``t · s / a``, the inner at ``t``); a transpose permutes the axes. At the end the output's
atoms in row-major order are a permutation of the source's atoms (sorted by stride);
neighbours contiguous in both merge. The kernel is then :func:`~.reshape.emit_permute`
from a strided view of the source to a row-major view of the output: per output tile the
source window is loaded, transposed on the vector unit and stored.

A slice shortens (and with a step, strides) the one atom of its axis, or cuts the outer
atom of a merged axis at whole runs of the inner ones (TimeSformer's class token dropped
before its frames and patches are swapped; SEW's trailing frame trimmed off a 5HD map).
A reshape that cuts an atom into sizes that do not divide it (``[6] -> [4, ...]`` after a
transpose moved the 6) is no such view: refused with that reason, and the group splits.

The source is a row-major GM tensor, or a 5HD feature map read through its TransData
NC1HWC0 -> NCHW: the channel axis is the atoms ``C1`` (stride ``H·W·C0``) and ``C0``
(stride 1) when C fills its blocks, or the first C lanes (stride 1) when there is one
block; channels ending inside a block of several are not one strided axis (refused). The
padding lanes are never read: the view addresses channels < C only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.cutting import SliceOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.data_movement import op_regions
from tilegraph.lowering.conversion.tiling.matmul_views import view_of
from tilegraph.lowering.conversion.tiling.reshape import SHAPE_ONLY, emit_permute, plan_permute


@dataclass(frozen=True)
class Permute:
    """A chain as ``out = transpose(source view, perm)`` with the output row-major."""

    source: StridedView
    perm: tuple[int, ...]

    @property
    def out_shape(self) -> tuple[int, ...]:
        return tuple(self.source.shape[p] for p in self.perm)


class Atoms:
    """The current value of a chain as axes of atoms (``[size, stride]`` into the source,
    outer first); an axis of size 1 has none."""

    def __init__(self, axes: Sequence[Sequence[tuple[int, int]]]):
        self.atoms: list[list[int]] = []
        self.axes: list[list[int]] = []
        self.offset = 0
        """Source elements before the value's first (a slice's start)."""
        for axis in axes:
            self.axes.append([self._new(s, t) for s, t in axis if s != 1])

    def _new(self, size: int, stride: int) -> int:
        self.atoms.append([size, stride])
        return len(self.atoms) - 1

    @staticmethod
    def row_major(shape: Sequence[int]) -> Atoms:
        strides = StridedView.row_major(shape).strides
        return Atoms([[(n, t)] for n, t in zip(shape, strides, strict=True)])

    def reshape(self, shape: Sequence[int]) -> str | None:
        """Regroup the atoms into ``shape``'s axes; why not when an axis boundary cuts an
        atom into sizes that do not divide it."""
        rest = [a for axis in self.axes for a in axis]
        axes: list[list[int]] = []
        for extent in shape:
            axis: list[int] = []
            need = extent
            while need > 1:
                if not rest:
                    return f"a reshape to {list(shape)} of fewer elements"
                atom = rest.pop(0)
                size, stride = self.atoms[atom]
                if need % size == 0:
                    need //= size
                elif size % need == 0:  # the boundary falls inside: split the atom
                    inner = size // need
                    self.atoms[atom] = [need, stride * inner]
                    rest.insert(0, self._new(inner, stride))
                    need = 1
                else:
                    return (
                        f"a reshape to {list(shape)} cutting a moved axis of {size} "
                        f"elements into {need}"
                    )
                axis.append(atom)
            axes.append(axis)
        if rest:
            return f"a reshape to {list(shape)} of more elements"
        self.axes = axes
        return None

    def transpose(self, perm: Sequence[int]) -> None:
        self.axes = [self.axes[p] for p in perm]

    def slice(self, axis: int, start: int, length: int, step: int) -> str | None:
        """Elements ``start, start + step, ...`` (``length`` of them) of ``axis``: its one
        atom shortened (and strided by ``step``), or — a merged axis — its outer atom cut
        at multiples of the inner ones; why not otherwise."""
        atoms = self.axes[axis]
        if not atoms:
            return None  # a unit axis: its one element
        inner = prod(self.atoms[a][0] for a in atoms[1:])
        if step < 1 or (inner > 1 and (step != 1 or start % inner or length % inner)):
            return "a slice cutting a merged axis inside its inner runs (or reversing it)"
        outer = self.atoms[atoms[0]]
        self.offset += start // inner * outer[1]
        outer[0], outer[1] = length // inner, outer[1] * step
        if outer[0] == 1:
            self.axes[axis] = atoms[1:]
        return None

    def permute(self) -> Permute:
        """The output (its atoms in row-major order) as a permute of the source seen as
        its atoms sorted by stride, neighbours contiguous in both merged."""
        merged: list[list[int]] = []
        for atom in (a for axis in self.axes for a in axis):
            size, stride = self.atoms[atom]
            if merged and merged[-1][1] == stride * size:
                merged[-1] = [merged[-1][0] * size, stride]
            else:
                merged.append([size, stride])
        if not merged:
            merged = [[1, 1]]
        order = sorted(range(len(merged)), key=lambda i: -merged[i][1])
        shape = tuple(merged[i][0] for i in order)
        strides = tuple(merged[i][1] for i in order)
        perm = tuple(order.index(i) for i in range(len(merged)))
        return Permute(StridedView(shape, strides, self.offset), perm)


def _is_5hd_to_nchw(op: Operation) -> bool:
    return (
        isinstance(op, TransDataOp)
        and tensor_of(op.input).storage_format == Format.NC1HWC0
        and tensor_of(op.output).storage_format == Format.NCHW
    )


VIEW_OPS = (*SHAPE_ONLY, TransposeOp, SliceOp)
"""The ops of a view chain after its optional TransData."""


def _chain(ops: Sequence[Operation]) -> bool:
    """``ops`` is reshape-like ops, transposes and slices, each reading the one before,
    after an optional TransData NC1HWC0 -> NCHW."""
    rest = ops[1:] if ops and _is_5hd_to_nchw(ops[0]) else ops
    return (
        bool(rest)
        and all(isinstance(op, VIEW_OPS) for op in rest)
        and all(b.operands[0] is a.results[0] for a, b in zip(ops, ops[1:], strict=False))
    )


def _source_atoms(op: Operation, src_arg: SSAValue) -> Atoms | str:
    """The chain's first value as atoms of the GM argument ``src_arg``: its row-major
    shape, or the NCHW map of a 5HD one (module docstring)."""
    if not _is_5hd_to_nchw(op):
        return Atoms.row_major(memref_shape(src_arg))
    n, c1, h, w, c0 = memref_shape(src_arg)
    channels = int(tensor_of(op.results[0]).origin_shape[1])
    t = StridedView.row_major([n, c1, h, w, c0]).strides
    if channels == c1 * c0:
        lanes = [(c1, t[1]), (c0, 1)]
    elif c1 == 1:
        lanes = [(channels, 1)]
    else:
        return f"a TransData of {channels} channels ending inside the last of {c1} C0 blocks"
    return Atoms([[(n, t[0])], lanes, [(h, t[2])], [(w, t[3])]])


def chain_permute(ops: Sequence[Operation], src_arg: SSAValue) -> Permute | str:
    """The chain ``ops`` (:func:`_chain`) reading ``src_arg`` as one permute, or why not
    (the reason names the op that is no view)."""
    values = [op.results[0] for op in ops]
    if not all(tensor_of(v).is_static for v in values):
        return "a view chain of symbolic shapes"
    atoms = _source_atoms(ops[0], src_arg)
    if isinstance(atoms, str):
        return atoms
    for op, value in zip(ops, values, strict=True):
        if isinstance(op, TransDataOp):
            continue
        if isinstance(op, TransposeOp):
            rank = len(atoms.axes)
            perm = op.attr("perm") or tuple(reversed(range(rank)))
            atoms.transpose([int(p) % rank for p in perm])
            continue
        if isinstance(op, SliceOp):
            reason = _slice(atoms, op)
        else:
            reason = atoms.reshape([int(d) for d in tensor_of(value).origin_shape])  # type: ignore[arg-type]
        if reason is not None:
            return f"{op.name}: {reason}"
    return atoms.permute()


def _slice(atoms: Atoms, op: SliceOp) -> str | None:
    """``op``'s bounds (:func:`~.data_movement.op_regions`) applied to ``atoms``."""
    shape = [int(d) for d in tensor_of(op.operands[0]).origin_shape]  # type: ignore[arg-type]
    regions = op_regions(op, [op.results[0]], shape, lambda v: tuple(tensor_of(v).origin_shape))  # type: ignore[arg-type]
    if isinstance(regions, str):
        return regions
    for axis, piece in enumerate(regions[0].pieces):
        if piece.extent == 0:
            return "an empty slice"
        reason = atoms.slice(axis, piece.start, piece.extent, piece.step)
        if reason is not None:
            return reason
    return None


def is_view_chain(body: KernelBody) -> bool:
    """Whether :func:`emit_view_chain_kernel` is the strategy: a chain (:func:`_chain`)
    the transpose and reshape kernels do not take — after a TransData, one with a slice or
    a transpose (a channels-last order is :mod:`.nhwc_out`'s); else several transposes, or
    a transpose and a slice."""
    from tilegraph.lowering.conversion.tiling.nhwc_out import MAX_CHECKED, channels_last_order

    ops = body.ops
    if not _chain(ops):
        return False
    transposes = sum(isinstance(op, TransposeOp) for op in ops)
    slices = sum(isinstance(op, SliceOp) for op in ops)
    if _is_5hd_to_nchw(ops[0]):
        if slices:
            return True
        small = (tensor_of(ops[0].results[0]).num_elements() or 0) <= MAX_CHECKED
        return transposes > 0 and not (small and channels_last_order(ops))
    return transposes > 1 or (transposes > 0 and slices > 0)


def emit_view_chain_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """The module's kernel: the chain as one permute of a strided view of its input into a
    row-major view of its output; returns why it cannot (None when emitted)."""
    ops = body.ops
    if not _chain(ops) or len(body.writes) != 1:
        return "not a chain of reshapes and transposes with one output"
    value, out_arg = body.writes[0]
    if value is not ops[-1].results[0] or not is_row_major(tensor_of(value)):
        return "a view chain writing an intermediate or a non-row-major tensor"
    src_arg = body.source(ops[0].operands[0])
    if src_arg is None:
        return "a view chain of a value computed inside the kernel"
    if not _is_5hd_to_nchw(ops[0]) and not is_row_major(tensor_of(ops[0].operands[0])):
        return "a view chain of a non-row-major tensor"
    found = chain_permute(ops, src_arg)
    if isinstance(found, str):
        return found
    element = tensor_of(value).element_type
    plan = plan_permute(b, found.out_shape, element_bytes(element))
    if plan is None:
        return "no tile of the view chain fits UB"
    if b.dry_run:
        return None
    assert prod(found.out_shape) == prod(memref_shape(out_arg))
    src = view_of(b, src_arg, found.source)
    dst = view_of(b, out_arg, StridedView.row_major(found.out_shape))
    emit_permute(b, plan, src, dst, found.perm, element)
    return None
