"""Reductions on the vector unit: softmax, log-softmax, reduce_*, global pooling, layer norm,
RMS norm, instance norm (layer norm's program over the spatial axes, scale and bias per
channel: :mod:`.norm_params`).

A tile holds every reduced axis whole (and every dim after the split axis), so each tile
reduces on its own: the split axis is chosen before the first reduced axis, as large as UB
allows. Reduced axes are storage axes; a tensor whose storage differs from its origin is
reduced only where the axes keep their meaning (global pooling on NC1HWC0: H and W; on
NDC1HWC0: D, H and W).
Each op is a short vector program on the tile (``vreduce``, broadcast ``vsub``/``vdiv``...).
When no such tile fits UB (a softmax over 1000 classes on a small UB), the reduction loops
over chunks of its reduced axes instead (:mod:`.reduction_chunks`); the tiles of a
reduction that fits are unchanged by that. Elementwise ops before a reduce op in its group
compute its input in each tile (or chunk), those after it run on the reduced tile
(:mod:`.reduction_prologue`, :mod:`.norm_tail`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.nn import InstanceNormOp, LogSoftmaxOp, SoftmaxOp
from tilegraph.dialects.graph.normalization import LayerNormOp, RmsNormOp
from tilegraph.dialects.graph.operand_values import runtime_ints
from tilegraph.dialects.graph.pooling import GlobalAvgPoolOp, GlobalMaxPoolOp
from tilegraph.dialects.graph.reduction import (
    ReduceL1Op,
    ReduceL2Op,
    ReduceLogSumExpOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceOp,
    ReduceProdOp,
    ReduceSumOp,
    ReduceSumSquareOp,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    memref_shape,
)
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import choose_tile, store, tile_loops
from tilegraph.lowering.conversion.tiling.norm_params import load_param, param_tile_shape
from tilegraph.lowering.conversion.tiling.norm_tail import norm_tail, tail_bytes
from tilegraph.lowering.conversion.tiling.reduction_chunks import (
    Chunked,
    chunk_bytes,
    emit_chunked_reduction,
    plan_chunks,
    vreduce,
)
from tilegraph.lowering.conversion.tiling.reduction_prologue import (
    Prologue,
    broadcast_tail,
    even_chunks,
    reduction_parts,
)


@dataclass
class Tiles:
    """The UB tiles a reduction program uses."""

    x: SSAValue
    out: SSAValue
    full: list[SSAValue]
    """Scratch tiles shaped like the input tile."""
    kept: list[SSAValue]
    """Scratch tiles shaped like the reduced tile with reduced dims kept as 1."""
    params: list[SSAValue]
    """Tiles of further inputs (layer norm's scale and bias)."""


Program = Callable[[KernelBuilder, Tiles, tuple[int, ...]], None]


@dataclass(frozen=True)
class Reduction:
    axes: tuple[int, ...]
    program: Program
    chunked: Chunked
    """The same reduction over chunks, when the reduced axes do not fit UB."""
    full: int = 0
    kept: int = 0
    keepdims: bool = True
    per_channel: bool = False
    """Scale and bias per channel (instance norm), not per trailing element (layer norm)."""


def _u(b: KernelBuilder, name: str, src: SSAValue, dst: SSAValue) -> None:
    b.add(UNARY_OPS[name](src, dst))


def _bin(b: KernelBuilder, name: str, x: SSAValue, y: SSAValue, dst: SSAValue) -> None:
    b.add(BINARY_OPS[name](x, y, dst))


def _s(b: KernelBuilder, name: str, src: SSAValue, value: float, dst: SSAValue) -> None:
    b.add(SCALAR_OPS[name](src, value, dst))


WIDENED_OPS = (
    SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, InstanceNormOp, GlobalAvgPoolOp,
    ReduceSumOp, ReduceMeanOp, ReduceL1Op, ReduceL2Op, ReduceSumSquareOp, ReduceLogSumExpOp,
)  # fmt: skip
"""Reductions whose 16-bit data is computed in f32: CANN's ``softmax_v2``, ``layer_norm``
and ``rms_norm`` cast fp16 input up to fp32 wherever the vector unit has an fp32 ``vexp``
(every preset here) and cast the result back, and its sums (``reduce_sum``,
``reduce_mean``, ``square_sum``) add fp16 data in fp32 on every chip with an fp32 ``sum``
(docs/hardware.md, "Vector kernels' compute type"). Max and min are exact in any type and
keep it. Only the tile program widens; the tensors in GM keep their type."""


def compute_type(op: GraphOp, element: Attribute) -> Attribute:
    """The element type ``op``'s vector program computes in, for data of ``element``."""
    if isinstance(op, WIDENED_OPS) and str(element) in ("f16", "bf16"):
        return f32
    return element


def _softmax(log: bool) -> Program:
    def program(b: KernelBuilder, t: Tiles, axes: tuple[int, ...]) -> None:
        (shifted,), (red,) = t.full, t.kept
        vreduce(b, "max", t.x, red, axes)
        _bin(b, "vsub", t.x, red, shifted)
        _u(b, "vexp", shifted, t.out)
        vreduce(b, "sum", t.out, red, axes)
        if log:
            _u(b, "vln", red, red)
            _bin(b, "vsub", shifted, red, t.out)
        else:
            _bin(b, "vdiv", t.out, red, t.out)

    return program


def _simple(kind: str, pre: str | None = None, post: str | None = None, mean=False) -> Program:
    def program(b: KernelBuilder, t: Tiles, axes: tuple[int, ...]) -> None:
        src = t.x
        if pre == "square":
            _bin(b, "vmul", t.x, t.x, t.full[0])
            src = t.full[0]
        elif pre is not None:
            _u(b, pre, t.x, t.full[0])
            src = t.full[0]
        vreduce(b, kind, src, t.out, axes)
        if mean:
            count = prod(memref_shape(t.x)[a] for a in axes)
            _s(b, "vmuls", t.out, 1.0 / count, t.out)
        if post is not None:
            _u(b, post, t.out, t.out)

    return program


def layer_norm_program(epsilon: float, count: int) -> Program:
    """``(x - mean) * rsqrt(var + epsilon) * scale (+ bias)`` over ``axes`` of the tile
    (``count`` elements each), the statistics in a kept-shaped scratch tile."""

    def program(b: KernelBuilder, t: Tiles, axes: tuple[int, ...]) -> None:
        (centred, square), (stat,) = t.full, t.kept
        vreduce(b, "sum", t.x, stat, axes)
        _s(b, "vmuls", stat, 1.0 / count, stat)
        _bin(b, "vsub", t.x, stat, centred)
        _bin(b, "vmul", centred, centred, square)
        vreduce(b, "sum", square, stat, axes)
        _s(b, "vmuls", stat, 1.0 / count, stat)
        _s(b, "vadds", stat, epsilon, stat)
        _u(b, "vrsqrt", stat, stat)
        _bin(b, "vmul", centred, stat, t.out)
        _bin(b, "vmul", t.out, t.params[0], t.out)
        if len(t.params) > 1:
            _bin(b, "vadd", t.out, t.params[1], t.out)

    return program


def rms_norm_program(epsilon: float, count: int) -> Program:
    """``x * rsqrt(mean(x²) + epsilon) * scale`` over ``axes`` of the tile (``count``
    elements each): layer norm's program without the centring."""

    def program(b: KernelBuilder, t: Tiles, axes: tuple[int, ...]) -> None:
        (square,), (stat,) = t.full, t.kept
        _bin(b, "vmul", t.x, t.x, square)
        vreduce(b, "sum", square, stat, axes)
        _s(b, "vmuls", stat, 1.0 / count, stat)
        _s(b, "vadds", stat, epsilon, stat)
        _u(b, "vrsqrt", stat, stat)
        _bin(b, "vmul", t.x, stat, t.out)
        _bin(b, "vmul", t.out, t.params[0], t.out)

    return program


_REDUCE_KINDS: dict[type[ReduceOp], Chunked] = {
    ReduceSumOp: Chunked("reduce", "sum"),
    ReduceMeanOp: Chunked("reduce", "sum", mean=True),
    ReduceMaxOp: Chunked("reduce", "max"),
    ReduceMinOp: Chunked("reduce", "min"),
    ReduceProdOp: Chunked("reduce", "prod"),
    ReduceL1Op: Chunked("reduce", "sum", pre="vabs"),
    ReduceL2Op: Chunked("reduce", "sum", pre="square", post="vsqrt"),
    ReduceSumSquareOp: Chunked("reduce", "sum", pre="square"),
}
"""The reduce ops as one vreduce kind with an optional elementwise step before / after."""


def _simple_reduction(axes: tuple[int, ...], kind: Chunked, keepdims: bool = True) -> Reduction:
    program = _simple(kind.combine, kind.pre, kind.post, kind.mean)
    return Reduction(axes, program, kind, full=kind.full_scratch, keepdims=keepdims)


_BLOCKED_SPATIAL = {Format.NC1HWC0: (2, 3), Format.NDC1HWC0: (1, 3, 4)}
"""The spatial storage axes of the blocked formats global pooling reduces."""


def reduction_of(op: GraphOp) -> Reduction | str:
    x = op.operands[0].type
    assert isinstance(x, TensorType)
    plain = x.storage_format == x.origin_format or x.storage_format == Format.ND
    rank = len(x.storage_shape)
    if isinstance(op, InstanceNormOp):
        return _instance_norm(op, x, plain)
    if isinstance(op, GlobalAvgPoolOp | GlobalMaxPoolOp):
        # the spatial storage axes: H, W of NC1HWC0; D, H, W of NDC1HWC0 [N, D, C1, H, W, C0]
        spatial = _BLOCKED_SPATIAL.get(x.storage_format) if not plain else tuple(range(2, rank))
        if spatial is None:
            return f"global pooling on {x.storage_format}"
        kind = "max" if isinstance(op, GlobalMaxPoolOp) else "sum"
        return _simple_reduction(spatial, Chunked("reduce", kind, mean=kind == "sum"))
    if not plain:
        return f"{op.name} on a {x.storage_format} tensor"
    if isinstance(op, SoftmaxOp | LogSoftmaxOp):
        axis = op.attr("axis") % rank
        log = isinstance(op, LogSoftmaxOp)
        chunked = Chunked("log_softmax" if log else "softmax")
        return Reduction((axis,), _softmax(log), chunked, full=1, kept=1)
    if isinstance(op, LayerNormOp | RmsNormOp):
        axis = op.attr("axis") % rank
        axes = tuple(range(axis, rank))
        count = prod(int(x.storage_shape[a]) for a in axes)
        epsilon = float(op.attr("epsilon"))
        if isinstance(op, RmsNormOp):
            chunked = Chunked("rms_norm", epsilon=epsilon)
            return Reduction(axes, rms_norm_program(epsilon, count), chunked, full=1, kept=1)
        chunked = Chunked("layer_norm", epsilon=epsilon)
        return Reduction(axes, layer_norm_program(epsilon, count), chunked, full=2, kept=1)
    if isinstance(op, ReduceOp):
        axes_value = op.operands[1] if len(op.operands) > 1 else None
        given = None
        if axes_value is not None:
            from tilegraph.dialects.graph.base import constant_value

            data = constant_value(axes_value)
            if data is None:
                return "reduction axes computed at run time"
            given = runtime_ints(data)
        if given:
            axes = tuple(sorted(a % rank for a in given))
        elif op.attr("noop_with_empty_axes"):
            return "a reduction over no axis"
        else:
            axes = tuple(range(rank))
        keep = bool(op.attr("keepdims"))
        if isinstance(op, ReduceLogSumExpOp):
            program = _log_sum_exp_program(keep)
            chunked = Chunked("log_sum_exp")
            return Reduction(axes, program, chunked, full=1, kept=2, keepdims=keep)
        kind = _REDUCE_KINDS.get(type(op))
        if kind is None:
            return f"no vector lowering for {op.name}"
        return _simple_reduction(axes, kind, keep)
    return f"no vector lowering for {op.name}"


def _instance_norm(op: InstanceNormOp, x: TensorType, plain: bool) -> Reduction | str:
    """Layer norm's program over the spatial axes (H, W of NC1HWC0, whose C0 lanes are
    channels: each lane its own statistics), with a per-channel scale and bias."""
    if not plain and x.storage_format != Format.NC1HWC0:
        return f"{op.name} on a {x.storage_format} tensor"
    axes = tuple(range(2, len(x.storage_shape) if plain else 4))
    count = prod(int(x.storage_shape[a]) for a in axes)
    epsilon = float(op.attr("epsilon"))
    chunked = Chunked("layer_norm", epsilon=epsilon, per_channel=True)
    program = layer_norm_program(epsilon, count)
    return Reduction(axes, program, chunked, full=2, kept=1, per_channel=True)


def _log_sum_exp_program(keepdims: bool) -> Program:
    def program(b: KernelBuilder, t: Tiles, axes: tuple[int, ...]) -> None:
        (shifted,), (red, total) = t.full, t.kept
        vreduce(b, "max", t.x, red, axes)
        _bin(b, "vsub", t.x, red, shifted)
        _u(b, "vexp", shifted, shifted)
        vreduce(b, "sum", shifted, total, axes)
        _u(b, "vln", total, total)
        _bin(b, "vadd", total, red, total)
        vreduce(b, "sum", total, t.out, axes)  # drops the (size-1) axes when not kept

    return program


INTEGER_REDUCTIONS = (ReduceSumOp, ReduceMaxOp, ReduceMinOp)
"""The reductions an integer tensor (int16, int32) takes, exactly: adds, maxima and minima
on the vector unit in the tensor's type (``vadd`` / ``vmax`` / ``vmin`` take int16 and
int32). The cross-lane instructions (``vcadd``, ``WholeReduceSum``) take half and float
only, so a row's last lanes fold by halving integer adds (the cost model's
:func:`~tilegraph.cost_model.tile_costs.reduce`). int64 has no vector arithmetic at all
(docs/hardware.md, "Integer reductions")."""


def _element_refusal(op: GraphOp, element: str) -> str | None:
    """Why ``op`` on ``element`` data has no vector program, or None."""
    if element in ("f32", "f16", "bf16"):
        return None
    if element in ("i32", "i16") and isinstance(op, INTEGER_REDUCTIONS):
        return None
    if element == "i64" and isinstance(op, INTEGER_REDUCTIONS):
        return f"a reduction on {element} (the vector unit has no 64-bit integer add / max)"
    return f"a reduction on {element}"


REDUCTION_OPS = (
    SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp, InstanceNormOp, GlobalAvgPoolOp,
    GlobalMaxPoolOp, ReduceOp,
)  # fmt: skip


def takes_reduction(body: KernelBody) -> bool:
    """The reduction strategy's kernels: a reduction first (with an elementwise tail), or
    one reduce op after an elementwise prologue, maybe reading inputs through views
    (:mod:`.reduction_prologue`)."""
    return reduction_parts(body, REDUCTION_OPS) is not None


def emit_reduction_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    parts = reduction_parts(body, REDUCTION_OPS)
    assert parts is not None
    op, at = parts.reduction, parts.at
    assert isinstance(op, GraphOp)
    spec = reduction_of(op)
    if isinstance(spec, str):
        return spec
    sources = parts.sources(b, body)
    value, out_arg = body.writes[0]
    full_tail = broadcast_tail(body, parts, sources)
    if isinstance(full_tail, str):
        return full_tail
    tail = None if full_tail is not None else norm_tail(body, memref_shape(out_arg), parts, sources)
    if isinstance(tail, str):
        return tail
    x_arg = sources[op.operands[0]] if op.operands[0] in sources else body.source(op.operands[0])
    x_type = op.operands[0].type
    assert isinstance(x_type, TensorType)
    prologue = None
    source: SSAValue | Prologue
    if at:  # the input is computed in UB by the ops before the reduction
        shape = [int(d) for d in x_type.storage_shape]
        source = prologue = Prologue(body, parts.ops[:at], op.operands[0], shape, sources)
        readers = parts.ops[at + 1 :] if full_tail is not None else ()
        refused = prologue.unsupported(op, readers)
        if refused is not None:
            return refused
    elif x_arg is None:
        return "a reduction of a value computed inside the kernel"
    else:
        source = x_arg
    last = full_tail if full_tail is not None else tail
    if value is not (op.results[0] if last is None else last.written):
        return "a reduction of a value computed inside the kernel"
    params: list[SSAValue] = []
    if isinstance(op, LayerNormOp | RmsNormOp | InstanceNormOp):
        for p in op.operands[1:]:
            arg = body.source(p)
            if arg is None:
                return "normalisation parameters computed inside the kernel"
            params.append(arg)
    x_shape = memref_shape(x_arg) if x_arg is not None else [int(d) for d in x_type.storage_shape]
    element: Attribute = x_type.element_type
    refused = _element_refusal(op, str(element))
    if refused is not None:
        return refused
    eb = element_bytes(element)
    compute = compute_type(op, element)
    widened = compute != element
    cb = element_bytes(compute)

    def kept_shape(tile: Sequence[int]) -> list[int]:
        return [1 if i in spec.axes else d for i, d in enumerate(tile)]

    def out_shape(tile: Sequence[int]) -> list[int]:
        if spec.chunked.normalises:
            return list(tile)
        if spec.keepdims:
            return kept_shape(tile)
        return [d for i, d in enumerate(tile) if i not in spec.axes]

    def param_shape(arg: SSAValue, tile: Sequence[int]) -> list[int]:
        return param_tile_shape(memref_shape(arg), tile, spec.per_channel)

    # The input tile in the data's type: loaded, or the prologue's result (counted there).
    loads_x = prologue is None

    def ub_bytes(tile: Sequence[int]) -> int:
        wide_x = 1 if loads_x or widened else 0
        sizes = [prod(tile)] * (wide_x + spec.full) + [prod(kept_shape(tile))] * spec.kept
        sizes.append(prod(out_shape(tile)))
        sizes += [prod(param_shape(p, tile)) for p in params]
        staged = [prod(tile)] * loads_x + [prod(out_shape(tile))] if widened else []
        staged += [prod(param_shape(p, tile)) for p in params] if widened else []
        return (
            sum(aligned_bytes(b.hw, "UB", n * cb) for n in sizes)
            + sum(aligned_bytes(b.hw, "UB", n * eb) for n in staged)
            + tail_bytes(tail, b, out_shape(tile))
            + (0 if prologue is None else prologue.ub_bytes(b, tile))
            + (0 if full_tail is None else full_tail.ub_bytes(b, tile))
        )

    first_reduced = min(spec.axes) if spec.axes else len(x_shape)
    budget = b.ub_budget()
    plan = choose_tile(x_shape, ub_bytes, budget, first_reduced, b.split_depth(), b.hw.vector_cores)
    if plan is None and full_tail is not None:
        return "the ops after the reduction read the reduced axes again, which do not fit UB"
    if plan is None:
        out_dropped = not spec.chunked.normalises and not spec.keepdims
        shapes = [memref_shape(p) for p in params]

        def chunk_ub_bytes(chunk: Sequence[int]) -> int:
            extra = tail_bytes(tail, b, chunk)
            if prologue is not None:
                extra += prologue.ub_bytes(b, chunk)
            return extra + chunk_bytes(
                b, spec.chunked, spec.axes, chunk, eb, out_dropped, shapes, cb, loads_x
            )

        chunks = plan_chunks(x_shape, spec.axes, chunk_ub_bytes, budget)
        if chunks is None:
            return "no chunk of the reduced axes fits UB"
        if prologue is not None:
            chunks = even_chunks(chunks)
            if chunks is None:
                return "a prologue's chunks must divide the reduced axis: none near what fits UB"
        if not b.dry_run:
            emit_chunked_reduction(
                b, spec.chunked, chunks, source, out_arg, params, element, compute, tail
            )
        return None
    if b.dry_run:
        return None
    tile = plan.tile_shape()
    x_in = None if prologue is None else prologue.allocate(b, tile)
    tiles = Tiles(
        b.buffer(tile, compute, "UB", "x_ub") if x_in is None or widened else x_in,
        b.buffer(out_shape(tile), compute, "UB", "out_ub"),
        [b.buffer(tile, compute, "UB", f"full{i}_ub") for i in range(spec.full)],
        [b.buffer(kept_shape(tile), compute, "UB", f"red{i}_ub") for i in range(spec.kept)],
        [
            b.buffer(param_shape(p, tile), compute, "UB", f"param{i}_ub")
            for i, p in enumerate(params)
        ],
    )
    # The widened program reads and writes its data through tiles of the tensors' type.
    out = tiles.out
    param_in = list(tiles.params)
    if x_in is None:
        x_in = b.buffer(tile, element, "UB", "x_in_ub") if widened else tiles.x
    if widened:
        out = b.buffer(out_shape(tile), element, "UB", "out_cast_ub")
        param_in = [
            b.buffer(param_shape(p, tile), element, "UB", f"param{i}_in_ub")
            for i, p in enumerate(params)
        ]
    from tilegraph.dialects.tile import CastOp, CopyOp

    if tail is not None:
        tail.allocate(b, out_shape(tile))
    if full_tail is not None:
        full_tail.allocate(b, tile)

    def cast_tile(src: SSAValue, dst: SSAValue) -> None:
        """Convert a staged tile to (or from) the compute type; nothing when they agree."""
        if src is not dst:
            b.add(CastOp(operands=[src, dst]))

    zero = b.index(0)
    if not spec.per_channel:  # the tile holds the normalised dims whole: load once
        for arg, staged, t in zip(params, param_in, tiles.params, strict=True):
            rank = len(memref_shape(arg))
            b.add(CopyOp(arg, [zero] * rank, staged, [zero] * rank))
            cast_tile(staged, t)
    if prologue is not None:
        prologue.load_invariant(b, plan)
    stack, offsets = tile_loops(b, plan)
    with stack:
        if prologue is None:
            assert x_arg is not None
            b.add(CopyOp(x_arg, offsets, x_in, [zero] * len(offsets)))
        else:
            prologue.emit(b, offsets)
        cast_tile(x_in, tiles.x)
        if spec.per_channel:  # the tile's channels
            for arg, staged, t in zip(params, param_in, tiles.params, strict=True):
                load_param(b, arg, staged, offsets, True)
                cast_tile(staged, t)
        spec.program(b, tiles, spec.axes)
        cast_tile(tiles.out, out)
        out_rank = len(memref_shape(out_arg))
        out_offsets = (
            [zero if i in spec.axes else o for i, o in enumerate(offsets)]
            if out_rank == len(offsets)
            else [o for i, o in enumerate(offsets) if i not in spec.axes]
        )
        if full_tail is not None:  # on the input's tile, the reduced one broadcast
            given = {op.results[0]: out, op.operands[0]: x_in}
            given |= prologue.tiles() if prologue is not None else {}
            full_tail.emit(b, given, offsets, out_arg)
        else:
            if tail is not None:
                out = tail.emit(b, out, out_offsets)
            store(b, out, out_arg, out_offsets)
    b.tiles = plan.count()
    return None
