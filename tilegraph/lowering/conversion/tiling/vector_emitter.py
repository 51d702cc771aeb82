"""The vector emitter that the vector programs (:mod:`.vector_ops`, :mod:`.vector_math`)
write their instructions through, and the record of one program (:class:`VectorLowering`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr, i1
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    CastOp,
    CmpOp,
    DupOp,
    SelectOp,
)
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder

Tile = SSAValue


class VectorEmitter:
    """Vector instructions on UB tiles, and scratch tiles shaped like the result."""

    def __init__(
        self, builder: KernelBuilder, result: Tile, scratch: list[Tile], masks: Sequence[Tile] = ()
    ):
        self.b = builder
        self.result = result
        self._scratch = scratch
        self._masks = list(masks)

    def scratch(self, i: int) -> Tile:
        return self._scratch[i]

    def mask(self, i: int) -> Tile:
        """The i-th i1 scratch tile (a comparison's result), shaped like the result."""
        return self._masks[i]

    def unary(self, name: str, src: Tile, dst: Tile) -> None:
        self.b.add(UNARY_OPS[name](src, dst))

    def binary(self, name: str, a: Tile, b: Tile, dst: Tile) -> None:
        self.b.add(BINARY_OPS[name](a, b, dst))

    def scalar(self, name: str, src: Tile, value: float, dst: Tile) -> None:
        self.b.add(SCALAR_OPS[name](src, value, dst))

    def fill(self, dst: Tile, value: float) -> None:
        self.b.add(DupOp(dst, value))

    def compare(self, predicate: str, a: Tile, b: Tile, dst: Tile) -> None:
        self.b.add(CmpOp(operands=[a, b, dst], properties={"predicate": StringAttr(predicate)}))

    def select(self, mask: Tile, on_true: Tile, on_false: Tile, dst: Tile) -> None:
        self.b.add(SelectOp(operands=[mask, on_true, on_false, dst]))

    def cast(self, src: Tile, dst: Tile, rounding: str) -> None:
        self.b.add(CastOp(operands=[src, dst], properties={"rounding": StringAttr(rounding)}))


Lowering = Callable[[VectorEmitter, GraphOp, list[Tile | None], Tile], None]


@dataclass(frozen=True)
class VectorLowering:
    """How an op runs on the vector unit: ``emit`` writes its instructions; it needs
    ``scratch`` tiles of the result's element type (of operand ``scratch_of``'s when set:
    a predicate or a conversion computes in its input's type) and ``masks`` i1 tiles, all
    shaped like the result. ``reads``: the operands it reads (None: all); the others (a
    shape, a type template) are not loaded. ``reads_of``: the same, decided per op (a
    quantization's scale and zero point when they are not compile-time constants)."""

    emit: Lowering
    scratch: int = 0
    masks: int = 0
    reads: tuple[int, ...] | None = None
    scratch_of: int | None = None
    reads_of: Callable[[GraphOp], tuple[int, ...]] | None = None

    def tile_types(self, op: GraphOp) -> list[Attribute]:
        """Element types of the op's UB tiles: the result, the scratch tiles, the masks."""
        result = _element(op.results[0].type)
        source = op.operand_slots()[self.scratch_of] if self.scratch_of is not None else None
        scratch = result if source is None else _element(source.type)
        return [result, *[scratch] * self.scratch, *[i1] * self.masks]

    def read_operands(self, op: GraphOp) -> list[SSAValue | None]:
        """The operand slots the program reads (None for the others and absent ones)."""
        slots = op.operand_slots()
        reads = self.reads_of(op) if self.reads_of is not None else self.reads
        if reads is None:
            return list(slots)
        return [s if i in reads else None for i, s in enumerate(slots)]


def _element(t: Attribute) -> Attribute:
    assert isinstance(t, TensorType)
    return t.element_type


def first(ins: list[Tile | None]) -> Tile:
    """The op's first operand tile (always read)."""
    x = ins[0]
    assert x is not None
    return x
