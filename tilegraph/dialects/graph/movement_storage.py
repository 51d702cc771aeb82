"""Which storage the data-movement ops run on, per instance (``GraphOp.storage_applies``).

Concat, split and slice declare an ANY kernel variant (their tensors share the origin
views or one storage format); whether a C0-blocked storage (NC1HWC0 of a 4-D NCHW tensor)
can run one instance depends on its axis and on where its C boundaries fall. The rule is
the same for all three: a boundary along C must lie on a C0 block boundary, so that every
block of a piece is a whole block of the joined / split tensor and no piece's padding
lanes land between another piece's channels. Along N, H and W the C0 blocks line up
whatever C is (each (n, c1, h, w) row of C0 lanes moves as a unit). GE's formats
(docs/format-engine.md): ConcatD takes NC1HWC0 along H / W, or C with every input's C a
multiple of C0; SplitD along N / H / W, or C with every output's C a multiple of C0.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilegraph.dialects.graph.facts import (
    ANY_FORMAT,
    FormatRole,
    FusionKind,
    KernelVariant,
    OpFacts,
)
from tilegraph.dialects.graph.slicing import slice_bounds
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format

NCHW_5HD = (Format.NC1HWC0, Format.NCHW, 4)
"""A 4-D NCHW tensor stored NC1HWC0 (storage format, origin format, rank)."""

CHANNEL_AXIS = 1
"""C in an NCHW origin: the axis NC1HWC0 blocks."""

ANY_KERNEL = (KernelVariant((), (ANY_FORMAT,), "any"),)
"""One kernel whose tensors share their origin views or a storage format, which
``storage_applies`` narrows per instance (every slot beyond the lists is ANY)."""


def movement_facts(
    role: FormatRole, fusion: FusionKind, kernels: tuple[KernelVariant, ...] = ()
) -> OpFacts:
    """Facts of a data-movement op: operand 0 carries the format (the others are shapes,
    axes, pads); ``kernels`` empty: origin-format kernels only."""
    return OpFacts(role=role, fusion=fusion, format_operands=(0,), kernels=kernels)


def _tensors(
    operands: Sequence[TensorType | None], results: Sequence[TensorType]
) -> list[TensorType]:
    return [t for t in (*operands, *results) if t is not None]


def origin_views(tensors: Sequence[TensorType]) -> bool:
    """Whether every tensor is held in its origin format (no storage format to check)."""
    return all(t.storage_format == t.origin_format for t in tensors)


def all_nchw_5hd(tensors: Sequence[TensorType]) -> bool:
    """Whether every tensor is a 4-D NCHW tensor stored NC1HWC0."""
    return all((t.storage_format, t.origin_format, t.rank) == NCHW_5HD for t in tensors)


def c0_of(t: TensorType) -> int:
    """The C0 of an NC1HWC0 tensor (its storage shape's last dim)."""
    return int(t.storage_shape[-1])


def on_blocks(offsets: Sequence[int | None], c0: int) -> bool:
    """Whether every channel offset is known and a multiple of ``c0``."""
    return all(o is not None and o % c0 == 0 for o in offsets)


def blocked_storage_applies(
    operands: Sequence[TensorType | None],
    results: Sequence[TensorType],
    moved: Sequence[int],
    allowed: tuple[int, ...],
    channel_offsets: Sequence[int | None],
) -> bool:
    """The shared rule: origin views; or NC1HWC0 of 4-D NCHW tensors moved along origin
    axes ``moved``, all of them among ``allowed``, with every ``channel_offsets`` (the
    channel boundaries the op puts inside a tensor; None: unknown) on a C0 block boundary
    when C is among them."""
    tensors = _tensors(operands, results)
    if origin_views(tensors):
        return True
    if not all_nchw_5hd(tensors):
        return False
    axes = {a % 4 for a in moved}
    if not axes <= set(allowed):
        return False
    return CHANNEL_AXIS not in axes or on_blocks(channel_offsets, c0_of(tensors[0]))


def concat_storage_applies(
    axis: int, operands: Sequence[TensorType | None], results: Sequence[TensorType]
) -> bool:
    """ConcatD's rule: along H or W, or along C when every input's C is whole C0 blocks
    (every input then starts on a block boundary, and none ends inside a block the next
    one would start in; N is not among ConcatD's 5HD axes)."""
    widths = [
        t.origin_shape[CHANNEL_AXIS] if t.rank == 4 else None for t in operands if t is not None
    ]
    ends = [w if isinstance(w, int) else None for w in widths]
    return blocked_storage_applies(operands, results, (axis,), (1, 2, 3), ends)


def split_storage_applies(
    axis: int, operands: Sequence[TensorType | None], results: Sequence[TensorType]
) -> bool:
    """Any of SplitD's 5HD axes (N, C, H, W); along C every output but the first starts on
    a block boundary: the offsets ``sizes[0]``, ``sizes[0] + sizes[1]``, ... are multiples
    of C0 (the results' sizes; unknown ones refused). The last output may end inside a block, as
    the input does: its padding lanes are the input's. (SplitD asks every output's C to be
    whole blocks; the offsets are what correctness needs.)"""
    sizes = [r.origin_shape[axis % 4] if r.rank == 4 else None for r in results]
    offsets: list[int | None] = [None]
    if all(isinstance(n, int) for n in sizes):
        offsets = [
            sum(n for n in sizes[: i + 1] if isinstance(n, int)) for i in range(len(sizes) - 1)
        ]
    return blocked_storage_applies(operands, results, (axis,), (0, 1, 2, 3), offsets)


def slice_storage_applies(
    bounds: tuple[list[int] | None, ...],
    operands: Sequence[TensorType | None],
    results: Sequence[TensorType],
) -> bool:
    """A slice of constant ``bounds`` (starts, ends, axes, steps as ONNX gives them, the
    defaults filled in; None: not constant, refused) on origin axes: along N, H or W any
    bounds and steps; along C step 1 with both ends on block boundaries, or the end at the
    input's last channel (SplitD's rule for its outputs; a strided or misaligned start
    would gather lanes across blocks, and a piece ending inside a block of the input
    leaves a tensor whose consumers want the input's other half in NCHW too, YOLOv8's C2f
    halves of 8 channels)."""
    starts, ends, axes, steps = bounds
    data = operands[0] if operands else None
    if starts is None or ends is None or axes is None or steps is None or data is None:
        return origin_views(_tensors(operands, results))
    moved = [a % data.rank for a in axes]
    offsets: list[int | None] = []
    if CHANNEL_AXIS in moved:
        i, c = moved.index(CHANNEL_AXIS), data.origin_shape[CHANNEL_AXIS]
        if not isinstance(c, int) or steps[i] != 1:
            offsets = [None]
        else:
            first, _, length = slice_bounds(c, starts[i], ends[i], 1)
            offsets = [first] if first + length == c else [first, first + length]
    return blocked_storage_applies(operands, results, moved, (0, 1, 2, 3), offsets)
