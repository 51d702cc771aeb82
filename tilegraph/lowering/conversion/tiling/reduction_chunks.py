"""Reductions whose reduced axes do not fit UB: loops over chunks of the reduced axes.

When no tile holds the reduced axes whole (:mod:`.reduction`), the input is cut at a
*chunk axis* ``j`` (the first reduced axis, or a later axis when even one row of the dims
after it does not fit): a chunk is ``[1, ..., 1, c, S[j+1], ..., S[-1]]``. The kept dims up
to ``j`` are the output's loops (``tile.parallel``); the reduced dims up to ``j`` are
*chunk loops* inside them, which accumulate into small UB tiles shaped like the reduced
chunk (reduced dims kept as 1), as Ascend's reduce kernels do with a long reduced axis:

* reductions (reduce_*, global pools): one pass; each chunk is reduced and combined into the
  accumulator (``vadd`` / ``vmax`` / ``vmin`` / ``vmul``); mean divides at the end;
* softmax, log-softmax, reduce_log_sum_exp: an *online* first pass keeps a running max
  ``m`` and a sum ``s`` of ``exp(x - m)``, rescaling ``s`` by ``exp(m_old - m_new)`` when a
  chunk raises the max (one read of the input instead of two); a second pass re-reads
  the chunks and writes ``exp(x - m) / s`` (``x - m - ln s``);
* layer norm: three passes (mean; the sum of squared deviations from it, which is exact
  where ``E[x^2] - mean^2`` cancels; the normalised output with its scale and bias chunks);
  instance norm is the same over the spatial axes, its scale and bias per channel.

The last chunk along ``j`` may be ragged: its load fills the lanes past the tensor with the
combine's identity (0, -inf, +inf or 1; -inf for the running max, so ``exp`` gives 0), so
they do not change the result. Layer norm's second pass sees ``(0 - mean)^2`` in those
lanes and subtracts their known count times ``mean^2``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from math import inf, prod
from typing import TYPE_CHECKING, Literal

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, i64
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import CastOp, CopyOp, memref_shape
from tilegraph.dialects.tile import ReduceOp as VReduceOp
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import longest_fitting, store
from tilegraph.lowering.conversion.tiling.norm_params import load_param, param_tile_shape
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter

if TYPE_CHECKING:
    from tilegraph.lowering.conversion.tiling.norm_tail import NormTail
    from tilegraph.lowering.conversion.tiling.reduction_prologue import Prologue

IDENTITY = {"sum": 0.0, "max": -inf, "min": inf, "prod": 1.0}
"""The value each reduction ignores: the fill of a ragged chunk's lanes past the tensor."""
COMBINE = {"sum": "vadd", "max": "vmax", "min": "vmin", "prod": "vmul"}
"""The binary instruction that merges a chunk's partial result into the accumulator."""


def vreduce(b: KernelBuilder, kind: str, src: SSAValue, dst: SSAValue, axes) -> None:
    """``tile.vreduce`` of ``src`` over ``axes`` into ``dst``."""
    b.add(
        VReduceOp.create(
            operands=[src, dst],
            properties={
                "kind": StringAttr(kind),
                "axes": DenseArrayBase.from_list(i64, list(axes)),
            },
        )
    )


@dataclass(frozen=True)
class Chunked:
    """What a reduction computes, for its chunked form.

    ``kind``: ``"reduce"`` (``combine`` over the axes, after ``pre``: ``"vabs"`` or
    ``"square"``, then ``post``: ``"vsqrt"``; ``mean`` divides by the count), the online
    softmax family (``"softmax"``, ``"log_softmax"``, ``"log_sum_exp"``),
    ``"layer_norm"`` or ``"rms_norm"`` (``epsilon``)."""

    kind: Literal["reduce", "softmax", "log_softmax", "log_sum_exp", "layer_norm", "rms_norm"]
    combine: str = "sum"
    pre: str | None = None
    post: str | None = None
    mean: bool = False
    epsilon: float = 0.0
    per_channel: bool = False
    """Layer norm's scale and bias per channel (instance norm; :mod:`.norm_params`)."""

    @property
    def full_scratch(self) -> int:
        """Scratch tiles shaped like a chunk."""
        return 0 if self.kind == "reduce" and self.pre is None else 1

    @property
    def kept_scratch(self) -> int:
        """Tiles shaped like a reduced chunk: accumulators and a chunk's partial result."""
        return 2 if self.kind in ("reduce", "rms_norm") else 3

    @property
    def normalises(self) -> bool:
        """The output has the input's shape (a second pass writes it)."""
        return self.kind in ("softmax", "log_softmax", "layer_norm", "rms_norm")


@dataclass(frozen=True)
class ChunkPlan:
    """Chunks of ``c`` = ``size`` along axis ``axis`` of the input ``shape``, reduced over
    ``axes``."""

    shape: tuple[int, ...]
    axes: tuple[int, ...]
    axis: int
    size: int

    def tile_shape(self) -> list[int]:
        return [1] * self.axis + [self.size] + list(self.shape[self.axis + 1 :])

    def kept_shape(self) -> list[int]:
        return [1 if i in self.axes else d for i, d in enumerate(self.tile_shape())]

    def step(self, d: int) -> int:
        return self.size if d == self.axis else 1

    def count(self) -> int:
        """Output tiles: one per iteration of the kept loops."""
        return prod(
            -(-self.shape[d] // self.step(d)) for d in range(self.axis + 1) if d not in self.axes
        )

    def padded_lanes(self) -> int:
        """Lanes past the tensor that one accumulator element sums over all chunks."""
        if self.axis not in self.axes:
            return 0  # a ragged kept axis: its padded lanes are cut by the store
        extent = self.shape[self.axis]
        past = -(-extent // self.size) * self.size - extent
        return past * prod(self.shape[d] for d in self.axes if d > self.axis)


def plan_chunks(
    shape: Sequence[int], axes: tuple[int, ...], bytes_per_tile, budget: int
) -> ChunkPlan | None:
    """The outermost chunk axis (from the first reduced one) at which a chunk fits, with
    the longest chunk there (``bytes_per_tile(chunk_shape)`` as :func:`.choose_tile`)."""
    if not axes:
        return None
    shape = tuple(shape)
    for j in range(min(axes), len(shape)):
        unit = [1] * (j + 1) + list(shape[j + 1 :])
        if bytes_per_tile(unit) > budget:
            continue
        return ChunkPlan(shape, axes, j, longest_fitting(unit, j, shape[j], bytes_per_tile, budget))
    return None


def chunk_bytes(
    b: KernelBuilder,
    spec: Chunked,
    plan_axes: tuple[int, ...],
    chunk: Sequence[int],
    element_bytes: int,
    out_dropped: bool,
    param_shapes: Sequence[Sequence[int]],
    compute_bytes: int | None = None,
    loads_x: bool = True,
) -> int:
    """UB bytes of the chunked program's tiles for one chunk shape; a program computing
    in a wider type (``compute_bytes``) also stages its loads and stores in the data's.
    ``loads_x`` False: the chunk of the input in the data's type is another's tile (a
    prologue's result, :mod:`.reduction_prologue`), not counted here."""
    kept = [1 if i in plan_axes else d for i, d in enumerate(chunk)]
    wide = compute_bytes or element_bytes
    own_x = 1 if loads_x or wide != element_bytes else 0
    sizes = [prod(chunk)] * (own_x + spec.full_scratch) + [prod(kept)] * spec.kept_scratch
    if out_dropped:
        sizes.append(prod(kept))
    params = [prod(param_tile_shape(p, chunk, spec.per_channel)) for p in param_shapes]
    sizes += params
    total = sum(aligned_bytes(b.hw, "UB", n * wide) for n in sizes)
    if wide != element_bytes:
        staged = [prod(chunk)] * (1 + loads_x) + params  # the loaded chunk, the stored one
        total += sum(aligned_bytes(b.hw, "UB", n * element_bytes) for n in staged)
    return total


class _Kernel:
    """The buffers and loops of one chunked reduction kernel."""

    def __init__(
        self,
        b: KernelBuilder,
        plan: ChunkPlan,
        source: SSAValue | Prologue,
        element: Attribute,
        spec: Chunked,
        compute: Attribute,
    ) -> None:
        self.b, self.plan, self.source = b, plan, source
        tile = plan.tile_shape()
        self.widened = compute != element
        loaded = None if isinstance(source, SSAValue) else source.allocate(b, tile)
        self.x = b.buffer(tile, compute, "UB", "x_ub") if loaded is None or self.widened else loaded
        self.full = [b.buffer(tile, compute, "UB", "chunk_ub") for _ in range(spec.full_scratch)]
        self.kept = [
            b.buffer(plan.kept_shape(), compute, "UB", f"acc{i}_ub")
            for i in range(spec.kept_scratch)
        ]
        # A widened program loads and stores through tiles of the data's own type.
        self.x_in = loaded if loaded is not None else self.x
        if loaded is None and self.widened:
            self.x_in = b.buffer(tile, element, "UB", "x_in_ub")
        out_shape = tile if spec.normalises else plan.kept_shape()
        self.out = b.buffer(out_shape, element, "UB", "out_cast_ub") if self.widened else None
        self.e = VectorEmitter(b, self.x, self.full)
        self.outer: dict[int, SSAValue] = {}
        self.tail: NormTail | None = None

    @contextmanager
    def output_loops(self) -> Iterator[None]:
        """The parallel loops over the kept dims up to the chunk axis."""
        plan = self.plan
        with ExitStack() as stack:
            for d in range(plan.axis + 1):
                if d not in plan.axes:
                    self.outer[d] = stack.enter_context(
                        self.b.loop(plan.shape[d], plan.step(d), f"i{d}", True)
                    )
            yield

    @contextmanager
    def chunks(self, pad: float) -> Iterator[list[SSAValue]]:
        """The chunk loops of one pass, the chunk loaded into ``x`` (lanes past the tensor
        filled with ``pad``), or computed there by the prologue (whose chunks are never
        ragged along a reduced axis); yields the chunk's offsets."""
        plan, b = self.plan, self.b
        zero = b.index(0)
        with ExitStack() as stack:
            offsets = []
            for d in range(len(plan.shape)):
                if d in self.outer:
                    offsets.append(self.outer[d])
                elif d in plan.axes and d <= plan.axis:
                    offsets.append(
                        stack.enter_context(b.loop(plan.shape[d], plan.step(d), f"r{d}"))
                    )
                else:
                    offsets.append(zero)
            if isinstance(self.source, SSAValue):
                b.add(CopyOp(self.source, offsets, self.x_in, [zero] * len(offsets), pad or None))
            else:
                self.source.emit(b, offsets)
            if self.widened:
                b.add(CastOp(operands=[self.x_in, self.x]))
            yield offsets

    def store(self, tile: SSAValue, out_arg: SSAValue, offsets: Sequence[SSAValue]) -> None:
        """Store a chunk of the output (cast back to the data's type first, then through
        the elementwise tail when there is one)."""
        if self.out is not None:
            self.b.add(CastOp(operands=[tile, self.out]))
            tile = self.out
        if self.tail is not None:
            tile = self.tail.emit(self.b, tile, offsets)
        store(self.b, tile, out_arg, offsets)

    def load_param(
        self, param: SSAValue, tile: SSAValue, staged: SSAValue, offsets, per_channel: bool
    ) -> None:
        """Load a scale / bias tile (through ``staged``, of the data's type, when widened)."""
        load_param(self.b, param, staged, offsets, per_channel)
        if staged is not tile:
            self.b.add(CastOp(operands=[staged, tile]))

    def output_offsets(self, out_arg: SSAValue) -> list[SSAValue]:
        """Where a reduced tile goes in the output (reduced dims at 0, or dropped)."""
        zero = self.b.index(0)
        rank = len(self.plan.shape)
        offsets = [self.outer.get(d, zero) for d in range(rank)]
        if len(memref_shape(out_arg)) == rank:
            return [zero if d in self.plan.axes else o for d, o in enumerate(offsets)]
        return [o for d, o in enumerate(offsets) if d not in self.plan.axes]


def emit_chunked_reduction(
    b: KernelBuilder,
    spec: Chunked,
    plan: ChunkPlan,
    source: SSAValue | Prologue,
    out_arg: SSAValue,
    params: Sequence[SSAValue],
    element: Attribute,
    compute: Attribute | None = None,
    tail: NormTail | None = None,
) -> None:
    """Emit the chunked kernel (see the module docstring) for ``plan`` of the input
    ``source`` (its GM buffer, or the prologue computing it: :mod:`.reduction_prologue`),
    its program in ``compute`` (default: ``element``, the data's type), the output chunks
    (a reduction's reduced tile) run through ``tail`` (:mod:`.norm_tail`) before they are
    stored."""
    compute = compute or element
    k = _Kernel(b, plan, source, element, spec, compute)
    dropped = None
    if not spec.normalises and len(memref_shape(out_arg)) != len(plan.shape):
        shape = [d for i, d in enumerate(plan.kept_shape()) if i not in plan.axes]
        dropped = b.buffer(shape, element, "UB", "out_ub")
    if tail is not None:
        stored = plan.tile_shape() if spec.normalises else plan.kept_shape()
        tail.allocate(b, stored if dropped is None else memref_shape(dropped))
        k.tail = tail
    param_shapes = [
        param_tile_shape(memref_shape(p), plan.tile_shape(), spec.per_channel) for p in params
    ]
    param_tiles = [b.buffer(shape, compute, "UB", "param_ub") for shape in param_shapes]
    staged_params = (
        [b.buffer(shape, element, "UB", "param_in_ub") for shape in param_shapes]
        if k.widened
        else param_tiles
    )
    with k.output_loops():
        if spec.kind == "reduce":
            result = _reduce(k, spec)
        elif spec.kind in ("layer_norm", "rms_norm"):
            _layer_norm(k, spec, out_arg, params, param_tiles, staged_params)
            result = None
        else:
            result = _online_softmax(k, spec, out_arg)
        if result is not None:
            if k.out is not None:  # a widened reduction: back to the data's type
                b.add(CastOp(operands=[result, k.out]))
                result = k.out
            if dropped is not None:
                vreduce(b, "sum", result, dropped, plan.axes)  # drops the size-1 axes
                result = dropped
            offsets = k.output_offsets(out_arg)
            if tail is not None:
                result = tail.emit(b, result, offsets)
            store(b, result, out_arg, offsets)
    b.tiles = plan.count()


def _reduce(k: _Kernel, spec: Chunked) -> SSAValue:
    """One pass: reduce each chunk and combine it into the accumulator."""
    e, axes = k.e, k.plan.axes
    acc, part = k.kept
    e.fill(acc, IDENTITY[spec.combine])
    with k.chunks(IDENTITY[spec.combine]):
        src = k.x
        if spec.pre == "square":
            e.binary("vmul", k.x, k.x, k.full[0])
            src = k.full[0]
        elif spec.pre is not None:
            e.unary(spec.pre, k.x, k.full[0])
            src = k.full[0]
        vreduce(k.b, spec.combine, src, part, axes)
        e.binary(COMBINE[spec.combine], acc, part, acc)
    if spec.mean:
        e.scalar("vmuls", acc, 1.0 / prod(k.plan.shape[a] for a in axes), acc)
    if spec.post is not None:
        e.unary(spec.post, acc, acc)
    return acc


def _online_softmax(k: _Kernel, spec: Chunked, out_arg: SSAValue) -> SSAValue | None:
    """Pass 1: running max ``m`` and rescaled sum ``s`` of ``exp(x - m)``; pass 2 (softmax,
    log-softmax) writes each chunk's output; log-sum-exp returns ``ln s + m``."""
    e, axes, b = k.e, k.plan.axes, k.b
    m, s, part = k.kept
    (shifted,) = k.full
    e.fill(m, -inf)
    e.fill(s, 0.0)
    with k.chunks(-inf):
        vreduce(b, "max", k.x, part, axes)
        e.binary("vmax", m, part, part)  # the new max
        e.binary("vsub", m, part, m)
        e.unary("vexp", m, m)  # exp(m_old - m_new) <= 1
        e.binary("vmul", s, m, s)
        e.binary("vsub", k.x, part, shifted)
        e.unary("vexp", shifted, shifted)
        vreduce(b, "sum", shifted, m, axes)
        e.binary("vadd", s, m, s)
        e.unary("vcopy", part, m)
    if spec.kind == "log_sum_exp":
        e.unary("vln", s, s)
        e.binary("vadd", s, m, s)
        return s
    if spec.kind == "log_softmax":
        e.unary("vln", s, s)
    with k.chunks(0.0) as offsets:
        e.binary("vsub", k.x, m, shifted)
        if spec.kind == "log_softmax":
            e.binary("vsub", shifted, s, shifted)
        else:
            e.unary("vexp", shifted, shifted)
            e.binary("vdiv", shifted, s, shifted)
        k.store(shifted, out_arg, offsets)
    return None


def _layer_norm(
    k: _Kernel,
    spec: Chunked,
    out_arg: SSAValue,
    params: Sequence[SSAValue],
    param_tiles: Sequence[SSAValue],
    staged_params: Sequence[SSAValue],
) -> None:
    """Pass 1: the mean; pass 2: the sum of squared deviations (the ragged lanes' share
    removed); pass 3: ``(x - mean) * rsqrt(var + eps) * scale + bias``. RMS norm has no
    centring: no pass 1, and its zero-filled ragged lanes add nothing to the squares."""
    e, axes, b = k.e, k.plan.axes, k.b
    mean, var, part = k.kept if spec.kind == "layer_norm" else (None, *k.kept)
    (centred,) = k.full
    count = prod(k.plan.shape[a] for a in axes)

    def deviation() -> SSAValue:
        """``x - mean`` (in ``centred``), or ``x`` itself for RMS norm."""
        if mean is None:
            return k.x
        e.binary("vsub", k.x, mean, centred)
        return centred

    if mean is not None:
        e.fill(mean, 0.0)
        with k.chunks(0.0):
            vreduce(b, "sum", k.x, part, axes)
            e.binary("vadd", mean, part, mean)
        e.scalar("vmuls", mean, 1.0 / count, mean)
    e.fill(var, 0.0)
    with k.chunks(0.0):
        d = deviation()
        e.binary("vmul", d, d, centred)
        vreduce(b, "sum", centred, part, axes)
        e.binary("vadd", var, part, var)
    padded = k.plan.padded_lanes()
    if padded and mean is not None:
        e.binary("vmul", mean, mean, part)
        e.scalar("vmuls", part, float(padded), part)
        e.binary("vsub", var, part, var)
    e.scalar("vmuls", var, 1.0 / count, var)
    e.scalar("vadds", var, spec.epsilon, var)
    e.unary("vrsqrt", var, var)
    if spec.per_channel:  # one channel's scale and bias serve all its chunks: load once
        zero = b.index(0)
        channel = [k.outer.get(d, zero) for d in range(len(k.plan.shape))]
        for p, tile, staged in zip(params, param_tiles, staged_params, strict=True):
            k.load_param(p, tile, staged, channel, True)
    with k.chunks(0.0) as offsets:
        for p, tile, staged in zip(params, param_tiles, staged_params, strict=True):
            if not spec.per_channel:
                k.load_param(p, tile, staged, offsets, False)
        e.binary("vmul", deviation(), var, centred)
        for tile, name in zip(param_tiles, ("vmul", "vadd"), strict=False):
            e.binary(name, centred, tile, centred)
        k.store(centred, out_arg, offsets)
