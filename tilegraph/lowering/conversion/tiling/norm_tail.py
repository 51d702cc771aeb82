"""The elementwise tail of a normalisation's or reduction's vector kernel: a LayerNorm /
RMS norm / Softmax / LogSoftmax kernel that runs the short elementwise chain ``fuse-ops``
gave it (:func:`~tilegraph.passes.fuse_legality.normalisation_tail`) on the tile it would
store, and stores the chain's result instead; a reduce op's kernel the same on its reduced
tile (the ops after the reduce in its group, maybe after a prologue:
:mod:`.reduction_prologue`), which the tail cannot broadcast back to the reduced axes.

Two tails matter: a per-tensor QuantizeLinear (the kernel writes the int8 or uint8 tensor
of a QDQ transformer) and torch's SDPA NaN guard ``where(isnan(p), 0, p)`` after a
softmax (every Hugging Face export). The tail is an elementwise chain
(:class:`~.elementwise.Chain`): each op's own vector program (:mod:`.vector_ops`; the
quantise's divide, round half to even, zero point, clip and convert), run on the tile
after the normalisation's cast back to the data's type when its program computes wider —
the same instructions on the same values as the kernel that would load that tile back
from GM, so the output is equal, not close. The chain's one-element constants (the
guard's 0) are loaded once, before the tile loops. Lanes past the tensor (a ragged tile)
run the tail too and are cut by the store, as the normalisation's own lanes are. It costs
the chain's UB tiles (the quantise: its float scratch and the int8 result; the guard: the
i1 mask, the constant and the result).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.ir import SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.quantize import QuantizeLinearOp
from tilegraph.dialects.graph.reduction import ReduceOp
from tilegraph.dialects.tile import memref_shape
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.elementwise import Chain, broadcast_mask
from tilegraph.lowering.conversion.tiling.vector_ops import vector_lowering

if TYPE_CHECKING:
    from tilegraph.lowering.conversion.tiling.reduction_prologue import Parts

MISFIT = "a reduction fused with other ops"


@dataclass
class NormTail:
    """The elementwise chain a normalisation's kernel ends with."""

    chain: Chain
    given: SSAValue
    """The normalisation's result: the tile the chain starts from."""
    written: SSAValue
    """The chain's value the kernel stores."""
    per_tile: list[SSAValue] = field(default_factory=list)
    """The chain's inputs loaded per output tile (:meth:`allocate` loads the others)."""

    def ub_bytes(self, b: KernelBuilder, shape: Sequence[int]) -> int:
        """UB bytes of the tail's tiles for an output tile of ``shape``."""
        return self.chain.ub_bytes(b.hw, shape, [self.given])

    def allocate(self, b: KernelBuilder, shape: Sequence[int]) -> None:
        """The tail's UB tiles for output tiles of ``shape``; called before the tile
        loops, it loads the inputs whose tile is the same for every output tile (the
        guard's 0) once, here."""
        self.chain.allocate(b, shape, [self.given])
        self.per_tile = []
        zero = b.index(0)
        for v in self.chain.input_tiles:
            arg = self.chain.source(v)
            assert arg is not None
            mask = broadcast_mask(memref_shape(arg), self.chain.out_shape)
            if mask is not None and all(mask):
                self.chain.load(b, v, [zero] * len(self.chain.out_shape))
            else:
                self.per_tile.append(v)

    def emit(self, b: KernelBuilder, tile: SSAValue, offsets: Sequence[SSAValue]) -> SSAValue:
        """Run the chain on ``tile`` (the normalisation's output tile at ``offsets``, in the
        data's type); returns the tile to store."""
        for v in self.per_tile:
            self.chain.load(b, v, offsets)
        tiles = self.chain.compute(b, {self.given: tile}, dict(self.chain.input_tiles))
        return tiles[self.written]


def norm_tail(
    body: KernelBody,
    out_shape: Sequence[int],
    parts: Parts | None = None,
    sources: dict[SSAValue, SSAValue] | None = None,
) -> NormTail | str | None:
    """The tail of a normalisation's or reduction's kernel body (its output of
    ``out_shape``; ``parts``: its computing ops, the normalisation or reduction among them
    after a prologue, :mod:`.reduction_prologue`; default: the body's ops, the first one;
    ``sources``: inputs read through GM views): None when it is the last op, the tail when
    it may take one (OpFacts ``elementwise_tail``, or a reduce op: its reduced tile) and
    the ops after it are an elementwise chain of its result with a vector program each
    whose last value the body writes (and nothing else), else the reason it is not one."""
    ops, at = (list(body.ops), 0) if parts is None else (parts.ops, parts.at)
    if len(ops) == at + 1:
        return None
    op, *rest = ops[at:]
    takes_tail = isinstance(op, GraphOp) and (op.FACTS.elementwise_tail or isinstance(op, ReduceOp))
    if len(body.writes) != 1 or not takes_tail:
        return MISFIT
    for t in rest:
        if not isinstance(t, GraphOp) or vector_lowering(t) is None:
            return MISFIT
        if isinstance(t, QuantizeLinearOp) and not t.quantizes_as_tail():
            return MISFIT
    written = body.writes[0][0]
    if written is not rest[-1].results[0]:
        return MISFIT
    chain = Chain(body, rest, out_shape, sources=sources)
    if chain.unsupported(given=[op.results[0]]) is not None:
        if any(v.owner in ops[:at] for v in chain.inputs):
            return "a value computed before the reduction is read after it"
        return MISFIT
    if tensor_of(written).storage_shape != tensor_of(op.results[0]).storage_shape:
        # the tail runs on the head's output tile: it cannot broadcast it back to the
        # reduced axes (x / sum(x)), which that tile no longer holds
        return "the ops after the reduction broadcast its result"
    return NormTail(chain, op.results[0], written)


def tail_bytes(tail: NormTail | None, b: KernelBuilder, shape: Sequence[int]) -> int:
    """UB bytes the tail adds to an output tile of ``shape`` (0 without a tail)."""
    return 0 if tail is None else tail.ub_bytes(b, shape)
