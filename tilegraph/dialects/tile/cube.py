"""The cube unit: ``tile.mmad`` multiplies fractal tiles from L0A and L0B into L0C."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I1, IndexType, MemRefType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    traits_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import (
    TileOp,
    element_bytes,
    leading_fractals,
    memref_element,
    memref_shape,
    require_extent,
    require_scope,
)

CUBE_INPUTS = {"f16": "f32", "bf16": "f32", "f32": "f32", "i8": "i32"}
"""Cube input element type -> the accumulator type it needs in L0C."""

FRACTAL_ROW_BYTES = 32
"""A fractal row of L0A / L0B is 32 B: K0 = 32 B / element size (4-bit 64, 8-bit 32,
16-bit 16, 32-bit 8); M0 = N0 = 16 whatever the type (Ascend C data layouts)."""


PAIRED_F32_K0 = 16
"""The K0 that ``tile-kernels`` lowers fp32 operands to today besides the hardware's 8: a
16 x 16 fp32 block (the storage formats' C0 = 16 of fp32 on ascend910b), which the cycle
model charges as two 16 x 8 fractals. Its bytes are not laid out as two hardware fractals
(rows of 64 B, not 32 B); until the lowering splits fp32 K into K0 = 8 the verifier accepts
it for f32 alone, and rejects every other K0 that is not the element type's."""


def fractal_k0(element_type: Attribute) -> int:
    """K0 of a fractal of ``element_type`` elements (:data:`FRACTAL_ROW_BYTES`)."""
    width = getattr(element_type, "bitwidth", None)
    if width is None:
        width = getattr(element_type, "width", None)
        width = width.data if width is not None else 32
    return FRACTAL_ROW_BYTES * 8 // int(width)


def accepted_k0(element_type: Attribute) -> tuple[int, ...]:
    """The K0 values ``tile.mmad`` accepts for ``element_type`` inputs: its
    :func:`fractal_k0`, and for f32 also :data:`PAIRED_F32_K0`."""
    k0 = fractal_k0(element_type)
    return (k0, PAIRED_F32_K0) if str(element_type) == "f32" else (k0,)


@irdl_op_definition
class MmadOp(TileOp):
    """``tile.mmad %a, %b, %c, %init``: ``c = a × b`` when ``init`` is true, else
    ``c += a × b``.

    ``a`` is L0A ZZ ``(M1, K1, 16, K0)``, ``b`` is L0B ZN ``(K1, N1, 16, K0)``, ``c`` is L0C
    NZ ``(N1, M1, 16, 16)``, with K0 fixed by the input type (:func:`fractal_k0`: 16 for
    f16/bf16, 8 for f32, 32 for i8; f32 also 16 for now, :data:`PAIRED_F32_K0`). Inputs
    f16/bf16/f32 accumulate in f32, i8 in i32. ``init`` is an ``i1`` so that the first
    iteration of a K loop can start the accumulation.

    ``m`` / ``n`` (optional ``index`` operands, Ascend C's ``MmadParams`` m / n): the valid
    rows of ``a`` and columns of ``b`` in elements, for the ragged last block of a matrix
    whose M or N is not a multiple of the block (ViT's 197 tokens: 13 fractals, the last
    of two 8-fractal blocks holds 5). Only the ``ceil(m / 16)`` leading M fractals and
    ``ceil(n / 16)`` leading N fractals are multiplied: the accumulator's fractals past
    them are left as they were, and the cube charges only the valid fractals
    (:meth:`valid_fractals`). Absent: the whole buffers. When constant, ``1 <= m <=
    M1 * 16`` and ``1 <= n <= N1 * 16`` (verified). ``k`` (``MmadParams`` k) likewise:
    the valid K of a ragged last K step (K's fractals not a multiple of the step), only
    the leading ``ceil(k / K0)`` K fractals multiplied (:meth:`k_fractals`).
    """

    name = "tile.mmad"
    PIPE: ClassVar[str] = "M"
    READS_DESTINATION: ClassVar[bool] = True
    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    init = operand_def(I1)
    m = opt_operand_def(IndexType)
    n = opt_operand_def(IndexType)
    k = opt_operand_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$a `,` $b `,` $c `,` $init (`m` $m^)? (`n` $n^)? (`k` $k^)? attr-dict `:` type($a) `,` "
        "type($b) `,` type($c)"
    )

    def __init__(
        self,
        a,
        b,
        c,
        init,
        m: SSAValue | None = None,
        n: SSAValue | None = None,
        k: SSAValue | None = None,
    ) -> None:
        extents = [[] if v is None else [v] for v in (m, n, k)]
        super().__init__(operands=[a, b, c, init, *extents])

    def verify_(self) -> None:
        require_scope(self, self.a, ("L0A",), "the left operand")
        require_scope(self, self.b, ("L0B",), "the right operand")
        require_scope(self, self.c, ("L0C",), "the accumulator")
        if self.init.type != i1:
            raise VerifyException(f"'{self.name}': init must be i1")
        ta, tb, tc = (str(memref_element(v)) for v in (self.a, self.b, self.c))
        if ta != tb or ta not in CUBE_INPUTS:
            raise VerifyException(
                f"'{self.name}': operands are {ta} and {tb}; the cube takes two of "
                f"{', '.join(CUBE_INPUTS)}"
            )
        if tc != CUBE_INPUTS[ta]:
            raise VerifyException(
                f"'{self.name}': {ta} inputs accumulate in {CUBE_INPUTS[ta]}, not {tc}"
            )
        sa, sb, sc = memref_shape(self.a), memref_shape(self.b), memref_shape(self.c)
        if len(sa) != 4 or len(sb) != 4 or len(sc) != 4:
            raise VerifyException(f"'{self.name}': operands must be fractal (4-D)")
        m1, k1, m0, k0 = sa
        if (
            sb[0] != k1
            or sb[3] != k0
            or sc[0] != sb[1]
            or sc[1] != m1
            or m0 != 16
            or sb[2] != 16
            or sc[2:] != (16, 16)
        ):
            raise VerifyException(
                f"'{self.name}': shapes {list(sa)} x {list(sb)} -> {list(sc)} do not chain "
                "(ZZ (M1,K1,16,K0) x ZN (K1,N1,16,K0) -> NZ (N1,M1,16,16))"
            )
        if k0 not in accepted_k0(memref_element(self.a)):
            raise VerifyException(
                f"'{self.name}': K0 is {k0}, but a fractal row of {ta} holds "
                f"{fractal_k0(memref_element(self.a))} elements "
                f"(K0 = {FRACTAL_ROW_BYTES} B / element size)"
            )
        for name, extent, whole in (
            ("m", self.m, m1 * 16),
            ("n", self.n, sb[1] * 16),
            ("k", self.k, k1 * k0),
        ):
            require_extent(self, name, extent, whole)

    def k_fractals(self, k: int | None = None) -> int:
        """K fractals the op multiplies when its ``k`` operand is ``k`` elements (None: the
        whole buffer)."""
        _, k1, _, k0 = memref_shape(self.a)
        return leading_fractals(k1, k, k0)

    def valid_fractals(self, m: int | None = None, n: int | None = None) -> tuple[int, int]:
        """(M fractals, N fractals) the op multiplies when its ``m`` / ``n`` operands are
        ``m`` / ``n`` elements (None: the whole buffer)."""
        m1, n1 = memref_shape(self.a)[0], memref_shape(self.b)[1]
        return leading_fractals(m1, m), leading_fractals(n1, n)

    def dims(self) -> tuple[int, int, int]:
        m1, k1, m0, k0 = memref_shape(self.a)
        n1 = memref_shape(self.b)[1]
        return m1 * m0, k1 * k0, n1 * 16

    def moved_bytes(self) -> int:
        m, k, n = self.dims()
        return (m * k + k * n) * element_bytes(memref_element(self.a))

    def written(self):
        return self.c


CUBE_OPS = (MmadOp,)
