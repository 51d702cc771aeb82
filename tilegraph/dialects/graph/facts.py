"""Per-op facts, declared on each op class as ``FACTS`` (DESIGN.md §4).

The format engine, the fusion pass and the layout cost model read these instead of keeping
tables of their own: adding an op means declaring its facts next to its definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import IntEnum, StrEnum

from tilegraph.formats import Format


class FormatRole(StrEnum):
    """How an op relates to the origin format of its tensors (GE's format agnosticism)."""

    SENSITIVE = "sensitive"
    """An anchor: the op interprets axes (Conv, pooling, BatchNorm); ``data_format`` names how."""
    AGNOSTIC = "agnostic"
    """All format-carrying operands and results share one format (elementwise ops)."""
    PAIRED = "paired"
    """Operand i and result i share a format, independently of the other pairs."""
    RESHAPE = "reshape"
    """Changes the meaning of dims; a result whose rank does not fit the format becomes ND."""
    ND_ONLY = "nd_only"
    """Works on ND only (MatMul-like); stops origin-format propagation."""


class FusionKind(IntEnum):
    """TVM's OpPatternKind: what a fused kernel can do with the op (lower = easier)."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    OPAQUE = 8


class PrecisionRole(StrEnum):
    """What ATC's mixed precision (``allow_mix_precision*``) does with the op: its
    ``precision_reduce`` in the ops-info of the built-in operators."""

    WHITE = "white"
    """``precision_reduce = true``: the op runs in the reduced type (fp16 / bf16)."""
    BLACK = "black"
    """``precision_reduce = false``: precision-sensitive (exp, log, pow, reductions,
    softmax, normalisations' statistics); it keeps the model's float32."""
    GRAY = "gray"
    """No entry: the op follows its inputs (reduced when its float inputs are)."""


ANY_FORMAT: Format | None = None
"""In a kernel variant: the operand takes whatever format the variant's other tensors take."""


@dataclass(frozen=True)
class KernelVariant:
    """One storage-format signature a kernel of the op implements.

    ``operands``/``results`` give one storage format per operand/result; ``ANY_FORMAT``
    (``None``) means "the shared format of the ANY slots", so an elementwise op's single
    variant ``(None, None) -> (None,)`` accepts any format as long as all agree.

    ``small_channel_of`` names the variant this one replaces under ATC's small-channel mode
    (``--enable_small_channel``; the ``small-channel`` option of ``select-storage-format``):
    off, the variant is never offered; on, it is offered *instead of* the named one wherever
    it applies (conv2d's ``cube_c04``: NC1HWC0_C04 data and FRACTAL_Z_C04 weights for a
    convolution of at most 4 input channels, replacing ``cube``).
    """

    operands: tuple[Format | None, ...]
    results: tuple[Format | None, ...]
    name: str = ""
    small_channel_of: str = ""


@dataclass(frozen=True)
class OpFacts:
    """What the compiler knows about an op kind, declared once on its class."""

    role: FormatRole
    fusion: FusionKind
    heavy: bool = False
    """A heavy op seeds storage-format selection (Conv, MatMul, Gemm)."""
    data_format: Format | None = None
    """For SENSITIVE ops: the origin format the op's data operand and result are in."""
    format_operands: tuple[int, ...] | None = None
    """Operands that take part in format propagation (None: all). Shape/axes operands don't."""
    reshape_types: Mapping[int, str] = field(default_factory=dict)
    """reshapeType of low-rank operands by operand index (conv bias: ``{2: "C"}``)."""
    kernels: tuple[KernelVariant, ...] = ()
    """Supported storage signatures; empty means origin formats only."""
    precision: PrecisionRole = PrecisionRole.GRAY
    """Its list under mixed precision (``apply-precision``, ``docs/precision.md``)."""
    elementwise_tail: bool = False
    """Its vector kernel may end with a short elementwise tail computed from its result
    (``fuse-ops``' ``normalisation_tail``): an OPAQUE normalisation (LayerNorm, Softmax)
    that writes int8 through a per-tensor QuantizeLinear as GE's AMCT-quantised kernels
    do, or a softmax followed by torch's SDPA NaN guard ``where(isnan(p), 0, p)``."""
    shape_only: bool = False
    """It reads its operand's origin shape, never its data (Shape, Size): no consumer of
    the tensor for ``fuse-ops``, and any tensor of the same origin shape answers it."""
    empty_operands: tuple[int, ...] = ()
    """Operands that may be empty while the result is not, which its kernel takes (a
    scatter of no updates copies its data): no reason to keep the op on the host
    (``lower-graph-to-kernels``' zero-size rule)."""

    def takes_part_in_format(self, operand_index: int) -> bool:
        return self.format_operands is None or operand_index in self.format_operands


@dataclass(frozen=True)
class OpCost:
    """Work of one op execution for the layout cost model (origin shapes, static only)."""

    flops: int
    bytes: int


def with_precision(facts: OpFacts, role: PrecisionRole) -> OpFacts:
    """``facts`` with the mixed-precision list ``role`` (a family's facts, one op's role)."""
    return replace(facts, precision=role)


ND_OPAQUE = OpFacts(role=FormatRole.ND_ONLY, fusion=FusionKind.OPAQUE)
"""Facts of an op that works on origin (ND) layouts only and fuses with nothing: most ops
added for ONNX coverage, which run as host ops until they get a tile lowering."""

ND_INJECTIVE = OpFacts(role=FormatRole.ND_ONLY, fusion=FusionKind.INJECTIVE)
"""Like :data:`ND_OPAQUE` for an op that only moves or masks elements."""
