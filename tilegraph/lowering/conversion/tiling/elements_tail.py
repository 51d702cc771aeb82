"""The elementwise tail of a GatherElements kernel: ops after the gather run on its rows
tile before the store.

:mod:`.elements` gathers a tile of ``O`` outer positions into ``rows_ub (O, n, inner)``,
the output's flat run ``[o·n·inner, (o + O)·n·inner)``. A tail op of the output's shape
reads that tile, the tiles of the tail ops before it, and tensors of the output's shape
from GM (row-major: the same flat run, one ``copy_flat`` per tile), and runs its own
vector program (:mod:`.vector_ops`) on tiles of the rows tile's shape; the kernel stores
the last op's tile instead of the rows. ``fuse-ops`` gives a gather such a tail only when
it is the computation of an attention's bias (DeBERTa-v2's sum of two gathered position
terms: :mod:`tilegraph.passes.fuse_score_bias`), checked by :func:`tail_fits` on the graph
as this module runs it. The same instructions on the same values as the elementwise
kernel that would read the rows back from GM: the output is equal, not close.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import CopyFlatOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering

MAX_TAIL = 4
"""The most elementwise ops a gather's kernel runs after it."""


def _shape(value: SSAValue) -> tuple[object, ...] | None:
    t = value.type
    return tuple(t.origin_shape) if isinstance(t, TensorType) else None


def tail_fits(gather: Operation, tail: Sequence[Operation]) -> bool:
    """Whether ``tail`` (in dataflow order) can run after ``gather`` in its kernel: at most
    :data:`MAX_TAIL` ops with a vector program each, of the gather's output shape, reading
    only the gather's result, each other's and other tensors of that shape."""
    shape = _shape(gather.results[0])
    if not tail or len(tail) > MAX_TAIL or shape is None:
        return False
    for op in tail:
        if not isinstance(op, GraphOp) or vector_lowering(op) is None:
            return False
        if len(op.results) != 1 or _shape(op.results[0]) != shape:
            return False
        lowering = vector_lowering(op)
        assert lowering is not None
        if any(v is not None and _shape(v) != shape for v in lowering.read_operands(op)):
            return False
    return True


@dataclass
class GatherTail:
    """The tail ops of a gather's kernel and the GM tensors they read."""

    ops: list[GraphOp]
    inputs: list[SSAValue]
    """The tail's operands from outside the kernel (each loaded per tile)."""
    sources: list[SSAValue]
    """Their GM buffers."""

    def ub_bytes(self, b: KernelBuilder, elements: int) -> int:
        """UB bytes of the tail's tiles for a rows tile of ``elements`` elements."""
        total = 0
        for v in self.inputs:
            total += aligned_bytes(b.hw, "UB", elements * element_bytes(tensor_of(v).element_type))
        for op in self.ops:
            lowering = vector_lowering(op)
            assert lowering is not None
            for element in lowering.tile_types(op):
                total += aligned_bytes(b.hw, "UB", elements * element_bytes(element))
        return total

    def allocate(self, b: KernelBuilder, shape: Sequence[int]) -> dict[SSAValue, SSAValue]:
        """The UB tiles of the inputs (keyed by their values), shaped like the rows."""
        return {
            v: b.buffer(list(shape), tensor_of(v).element_type, "UB", f"tail_in{i}_ub")
            for i, v in enumerate(self.inputs)
        }

    def emit(
        self,
        b: KernelBuilder,
        rows: SSAValue,
        given: SSAValue,
        loaded: dict[SSAValue, SSAValue],
        at: SSAValue,
        shape: Sequence[int],
    ) -> SSAValue:
        """Load the inputs' tiles (of ``shape``) at flat offset ``at``, run the tail on
        ``rows`` (the gather's result ``given``); the tile to store."""
        zero = b.index(0)
        count = prod(shape)
        for v, source in zip(self.inputs, self.sources, strict=True):
            b.add(CopyFlatOp(source, at, loaded[v], zero, count))
        tiles = {given: rows, **loaded}
        for i, op in enumerate(self.ops):
            lowering = vector_lowering(op)
            assert lowering is not None
            result, *extra = (
                b.buffer(list(shape), element, "UB", f"tail{i}_{j}_ub")
                for j, element in enumerate(lowering.tile_types(op))
            )
            scratch, masks = extra[: lowering.scratch], extra[lowering.scratch :]
            ins = [None if v is None else tiles[v] for v in lowering.read_operands(op)]
            lowering.emit(VectorEmitter(b, result, scratch, masks), op, ins, result)
            tiles[op.results[0]] = result
        return tiles[self.ops[-1].results[0]]


def gather_tail(body: KernelBody, gather: Operation) -> GatherTail | str | None:
    """The tail of a gather's kernel body (None: a lone gather), or why it is none."""
    tail = body.ops[1:]
    if not tail:
        return None
    if not tail_fits(gather, tail):
        return "a gather_elements with ops after it that are no elementwise tail"
    written = [v for v, _ in body.writes]
    if written != [tail[-1].results[0]]:
        return "a gather_elements kernel writing other values than its tail's last"
    inside = {gather.results[0], *(op.results[0] for op in tail)}
    inputs: list[SSAValue] = []
    for op in tail:
        lowering = vector_lowering(op)  # type: ignore[arg-type]
        assert lowering is not None
        for v in lowering.read_operands(op):  # type: ignore[arg-type]
            if v is not None and v not in inside and v not in inputs:
                inputs.append(v)
    sources = [body.source(v) for v in inputs]
    if any(s is None for s in sources) or not all(is_row_major(tensor_of(v)) for v in inputs):
        return "a gather_elements tail reading a tensor that is not a row-major input"
    return GatherTail(
        [op for op in tail if isinstance(op, GraphOp)],
        inputs,
        [s for s in sources if s is not None],
    )
