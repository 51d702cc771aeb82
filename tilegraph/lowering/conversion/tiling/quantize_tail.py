"""The quantise tail of a normalisation's vector kernel: a LayerNorm / RMS norm / Softmax /
LogSoftmax kernel that writes the int8 (or uint8) tensor of the QuantizeLinear that
``fuse-ops`` gave it (:func:`~tilegraph.passes.fuse_legality.quantize_tail`).

The tail is the QuantizeLinear's own vector program (:mod:`.vector_ops`: divide by the
scale, round half to even, add the zero point, clip to the integer range, convert) run on
the tile the normalisation would store, after its cast back to the data's type when the
program computes wider: the same instructions on the same float values as the quantise
kernel that would load that tile back from GM, so the int8 output is equal, not close.
Lanes past the tensor (a ragged tile) are quantised too and cut by the store, as the
normalisation's own lanes are. It costs two UB tiles of a chunk: the float scratch
(the quotient) and the int8 result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.quantize import QuantizeLinearOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering


@dataclass(frozen=True)
class QuantizeTail:
    """The QuantizeLinear a normalisation's kernel ends with."""

    op: QuantizeLinearOp

    @property
    def quantized(self) -> Attribute:
        out = self.op.y.type
        assert isinstance(out, TensorType)
        return out.element_type

    def ub_bytes(self, b: KernelBuilder, elements: int, element: Attribute) -> int:
        """UB bytes of the tail's tiles for a tile of ``elements`` of the data's type."""
        return aligned_bytes(b.hw, "UB", elements * element_bytes(element)) + aligned_bytes(
            b.hw, "UB", elements * element_bytes(self.quantized)
        )

    def buffers(
        self, b: KernelBuilder, shape: Sequence[int], element: Attribute
    ) -> tuple[SSAValue, SSAValue]:
        """The tail's scratch tile (the data's type) and its int8 result tile."""
        return (
            b.buffer(list(shape), element, "UB", "quotient_ub"),
            b.buffer(list(shape), self.quantized, "UB", "quantized_ub"),
        )

    def emit(self, b: KernelBuilder, tile: SSAValue, tiles: tuple[SSAValue, SSAValue]) -> SSAValue:
        """Quantise ``tile`` (the data's type) into the result tile, which is returned."""
        scratch, out = tiles
        lowering = vector_lowering(self.op)
        assert lowering is not None
        lowering.emit(VectorEmitter(b, out, [scratch]), self.op, [tile, None, None], out)
        return out


def quantize_tail(body: KernelBody) -> QuantizeTail | str | None:
    """The tail of a normalisation's kernel body: None for a lone op, the tail when the
    first op may take one (OpFacts ``quantize_tail``) and the second is a QuantizeLinear of
    its result that the body writes (and nothing else), else the reason it is not one (a
    reduce op's epilogue is the elementwise strategy's)."""
    if len(body.ops) == 1:
        return None
    if len(body.ops) != 2 or len(body.writes) != 1:
        return "a reduction fused with other ops"
    op, q = body.ops
    if (
        not isinstance(op, GraphOp)
        or not op.FACTS.quantize_tail
        or not isinstance(q, QuantizeLinearOp)
        or q.x is not op.results[0]
        or body.writes[0][0] is not q.y
        or not q.quantizes_as_tail()
        or vector_lowering(q) is None
    ):
        return "a reduction fused with other ops"
    return QuantizeTail(q)


def tail_bytes(
    tail: QuantizeTail | None, b: KernelBuilder, shape: Sequence[int], element: Attribute
) -> int:
    """UB bytes the tail adds to a tile of ``shape`` (0 without a tail)."""
    return 0 if tail is None else tail.ub_bytes(b, prod(shape), element)
