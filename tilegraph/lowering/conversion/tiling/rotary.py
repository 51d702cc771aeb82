"""``graph.apply_rotary`` (``x * cos + rotate_half(x) * sin``) as one vector kernel.

A tile holds ``rows`` whole rows of the last axis (size ``d``, the rotated one) of ``x`` and
the same rows of the ``cos`` / ``sin`` tables (a table's broadcast axis is read at index 0:
LLaMA's ``[B, 1, seq, d]`` tables serve every head; a table broadcast along the tiled rows
themselves, GPT-J's ``[1, seq, 1, d]`` against ``[B, seq, heads, d]``, is loaded as one row
and repeated over the tile by ``tile.vbrc``). The two halves are offset windows of
the same UB row: a UB -> UB ``tile.copy`` from column ``h = d / 2`` gives ``[x2, 0]`` and
one to column ``h`` gives ``[0, x1]`` (a load fills what its window misses with zeros), so
``rotate_half(x) = [0, x1] - [x2, 0]`` exactly (one of each pair is zero), and::

    y = x * cos + ([0, x1] - [x2, 0]) * sin

rounds where the decomposition does (the products, then the sum), as CANN's
ApplyRotaryPosEmb computes one tensor.

The interleaved op (GPT-J's ``rotate_every_two``) is the half op over each adjacent pair
(:mod:`tilegraph.dialects.graph.rotary`), so its kernel is this one on ``[..., d / 2, 2]``
strided views of x, the tables and the result (each row's last axis split into pairs, no
data moved): the windows are then columns 1 -> 0 and 0 -> 1 of each pair, which a vector
core does with GatherMask's fixed odd / even patterns and a lane-masked copy back (see
docs/tile-level.md) and the model charges as the same two UB -> UB copies.

A partial rotary (``rotary_dim = r`` of a last axis of ``D``) rotates columns ``:r`` as
above, through column views of x and of the result, and copies columns ``r:`` of the same
rows GM -> UB -> GM.

x may reach the op through the head split's reshape / transpose chain, which ``fuse-ops``
puts into the kernel (:mod:`tilegraph.passes.fuse_rotary_views`): x's rows are then read
through the chain's strided view of the tensor it starts from (a row of ``d`` elements at
the view's row stride), and no kernel moves the heads apart first. The chain may start
with the kernel's copy of a split (Phi-3's q / k columns of its fused projection,
:func:`~tilegraph.lowering.analysis.rotary_views.rotary_input_view`): the view then starts
at the piece's column offset with the projection's row stride.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from math import prod

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.binary import DivOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import BINARY_OPS, BroadcastOp, CopyOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.lowering.analysis.rotary_views import rotary_input_view, rotary_tail
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import store
from tilegraph.lowering.conversion.tiling.matmul_views import is_view_op, view_of

_BUFFERS = 5  # x, cos, sin, [x2, 0], [0, x1] (the products reuse cos's and [0, x1]'s)


def _rotary_of(body: KernelBody) -> ApplyRotaryOp | None:
    found = [op for op in body.ops if isinstance(op, ApplyRotaryOp)]
    return found[0] if len(found) == 1 else None


def is_rotary_kernel(body: KernelBody) -> bool:
    """The body holds one rotary op (after the view ops of its x and before its tail, if
    any: checked by the strategy)."""
    return _rotary_of(body) is not None


def emit_rotary_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    op = _rotary_of(body)
    assert op is not None
    at = body.ops.index(op)
    views, tail = body.ops[:at], tuple(body.ops[at + 1 :])
    if (
        len(body.writes) != 1
        or not all(is_view_op(v) for v in views)
        or tail != rotary_tail(op, lambda v: body.source(v) is not None)
    ):
        return "a rotary embedding fused with other ops"
    x = op.operands[0].type
    assert isinstance(x, TensorType)
    if x.storage_format != x.origin_format or x.rank < 2:
        return f"a rotary embedding of a {x.storage_format} tensor of rank {x.rank}"
    args: list[SSAValue | None] = [body.source(v) for v in op.operands]
    x_view: StridedView | None = None
    if views:  # x through its head split's view (and its split's, if any)
        chain = rotary_input_view(op.x)
        if chain is None or list(chain.ops) != views:
            return "a rotary embedding of x re-indexed by other ops"
        args[0], x_view = body.source(chain.base), chain.view
    if any(a is None for a in args):
        return "a rotary embedding of a value computed inside the kernel"
    x_arg, cos_arg, sin_arg = args
    assert x_arg is not None and cos_arg is not None and sin_arg is not None
    out_arg = body.writes[0][1]
    full = x_view.shape if x_view is not None else memref_shape(x_arg)
    width = op.rotated_width
    tables = [memref_shape(cos_arg), memref_shape(sin_arg)]
    if any(len(t) != len(full) for t in tables):
        return "rotary tables of another rank than x (broadcast by rank)"
    if width is None or width % 2 or any(t[-1] != width for t in tables):
        return f"rotary tables of another width than x's even rotated part {width}"
    if prod(memref_shape(out_arg)) != prod(full):  # (a tail's reshapes keep the count)
        return "a rotary embedding whose tables broadcast x"
    whole = StridedView.row_major
    x_view, out_view = x_view or whole(full), whole(full)
    parts = [_columns(v, 0, width) for v in (x_view, out_view)]
    table_views = [whole(t) for t in tables]
    if op.is_interleaved:  # the half op on each pair (module docstring)
        parts, table_views = [_pairs(v) for v in parts], [_pairs(v) for v in table_views]
        cos_arg, sin_arg = (
            view_of(b, a, v) for a, v in zip((cos_arg, sin_arg), table_views, strict=True)
        )
    x_part, out_part = parts
    x_source = x_arg
    if x_part != whole(memref_shape(x_arg)):
        x_arg = view_of(b, x_arg, x_part)
    if out_part != whole(memref_shape(out_arg)):
        out_arg = view_of(b, out_arg, out_part)
    passing = None  # (x's pass-through columns, the result's), each a view
    if width < full[-1]:
        passed = [_columns(v, width, full[-1] - width) for v in (x_view, out_view)]
        passing = view_of(b, x_source, passed[0]), view_of(b, body.writes[0][1], passed[1])
    shape, tables = x_part.shape, [v.shape for v in table_views]
    row = shape[len(full) - 1 :]  # a row of the rotated part: [d] or its pairs [d / 2, 2]
    outer, extent = full[:-2], full[-2]
    element = x.element_type
    row_bytes = aligned_bytes(b.hw, "UB", full[-1] * element_bytes(element))
    buffers = _BUFFERS + (passing is not None)  # a partial rotary's pass-through columns
    scale_arg = _scale(body, op, tail)
    budget = b.ub_budget() - (aligned_bytes(b.hw, "UB", element_bytes(element)) if tail else 0)
    rows = max(1, min(extent, budget // (buffers * row_bytes)))
    if buffers * row_bytes > budget:
        return "one row of a rotary embedding does not fit UB"
    if b.dry_run:
        return None
    tile = [1] * len(outer) + [rows, *row]
    zero = b.index(0)
    scale_ub = None  # the tail's one-element scale, loaded once, broadcast by the vector op
    if scale_arg is not None:
        scale_ub = b.buffer([1] * len(tile), element, "UB", "scale_ub")
        ones = StridedView.row_major([1] * len(tile))
        at = [zero] * len(tile)
        b.add(CopyOp(view_of(b, scale_arg, ones), at, scale_ub, at))
    x_ub = b.buffer(tile, element, "UB", "x_ub")
    cos_ub = b.buffer(tile, element, "UB", "cos_ub")
    sin_ub = b.buffer(tile, element, "UB", "sin_ub")
    high_ub = b.buffer(tile, element, "UB", "x2_ub")  # [x2, 0]
    low_ub = b.buffer(tile, element, "UB", "x1_ub")  # [0, x1]
    # A table broadcast along the tiled rows (GPT-J's [1, seq, 1, d] against [B, seq,
    # heads, d]: rows are heads) is one row for the whole tile: loaded once, repeated.
    shared = [t[len(outer)] == 1 < rows for t in tables]
    one_ub = None
    if any(shared):
        one_ub = b.buffer([*tile[: len(outer)], 1, *row], element, "UB", "table_row_ub")
    pass_ub = None
    if passing is not None:
        pass_tile = [*tile[: len(outer) + 1], full[-1] - width]
        pass_ub = b.buffer(pass_tile, element, "UB", "pass_ub")
    half = b.index(row[-1] // 2)
    zeros = [zero] * len(tile)
    with _outer_loops(b, outer) as outer_ivs, b.loop(extent, rows, "row", True) as ri:
        offsets = [*outer_ivs, ri, *(zero for _ in row)]
        b.add(CopyOp(x_arg, offsets, x_ub, zeros))
        for arg, table, ub, one in zip(
            (cos_arg, sin_arg), tables, (cos_ub, sin_ub), shared, strict=True
        ):
            at = [iv if n != 1 else zero for iv, n in zip(offsets, table, strict=True)]
            if one and one_ub is not None:
                b.add(CopyOp(arg, at, one_ub, zeros))
                b.add(BroadcastOp(operands=[one_ub, ub]))
            else:
                b.add(CopyOp(arg, at, ub, zeros))
        b.add(CopyOp(x_ub, [*zeros[:-1], half], high_ub, zeros))
        b.add(CopyOp(x_ub, zeros, low_ub, [*zeros[:-1], half]))
        b.add(BINARY_OPS["vsub"](low_ub, high_ub, low_ub))
        b.add(BINARY_OPS["vmul"](low_ub, sin_ub, low_ub))
        b.add(BINARY_OPS["vmul"](x_ub, cos_ub, cos_ub))
        b.add(BINARY_OPS["vadd"](cos_ub, low_ub, cos_ub))
        _scaled(b, tail, cos_ub, scale_ub)
        store(b, cos_ub, out_arg, offsets)
        if passing is not None and pass_ub is not None:  # the other columns, unchanged
            through = [*outer_ivs, ri, zero]
            b.add(CopyOp(passing[0], through, pass_ub, [zero] * len(through)))
            _scaled(b, tail, pass_ub, scale_ub)
            store(b, pass_ub, passing[1], through)
    tiles = -(-extent // rows)
    for n in outer:
        tiles *= n
    b.tiles = tiles
    return None


def _scale(body: KernelBody, op: ApplyRotaryOp, tail: Sequence[Operation]) -> SSAValue | None:
    """The GM argument of the tail's one-element scale (None without a tail): the
    operand of its last op that the op before does not make."""
    if not tail:
        return None
    made = (op, *tail)[-2].results[0]
    scale = next(v for v in tail[-1].operands if v is not made)
    return body.source(scale)


def _scaled(
    b: KernelBuilder, tail: Sequence[Operation], tile: SSAValue, scale: SSAValue | None
) -> None:
    """The tail's multiply (or division) of the result ``tile`` by the loaded scale, in
    place: the graph's op on the same values."""
    if scale is not None:
        name = "vdiv" if isinstance(tail[-1], DivOp) else "vmul"
        b.add(BINARY_OPS[name](tile, scale, tile))


def _columns(view: StridedView, start: int, size: int) -> StridedView:
    """Columns ``start .. start + size`` of the view's last axis."""
    part = view.part(len(view.shape) - 1, start, size)
    assert part is not None  # (x's views have no grouped dim: checked above)
    return part


def _pairs_shape(shape: Sequence[int]) -> tuple[int, ...]:
    return (*shape[:-1], shape[-1] // 2, 2)


def _pairs(view: StridedView) -> StridedView:
    """``view`` with its unit-stride last axis split into adjacent pairs."""
    assert view.strides[-1] == 1 and not view.groups
    shape = _pairs_shape(view.shape)
    return StridedView(shape, (*view.strides[:-1], 2, 1), view.offset)


@contextmanager
def _outer_loops(b: KernelBuilder, extents: Sequence[int]) -> Iterator[list[SSAValue]]:
    """Nested parallel loops of step 1 over the outer axes, as their index list."""
    with ExitStack() as stack:
        yield [stack.enter_context(b.loop(n, 1, f"d{i}", True)) for i, n in enumerate(extents)]
