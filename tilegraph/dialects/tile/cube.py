"""The cube unit: ``tile.mmad`` multiplies fractal tiles from L0A and L0B into L0C."""

from __future__ import annotations

from math import ceil
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import I1, MemRefType, i1
from xdsl.irdl import irdl_op_definition, operand_def, traits_def
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import (
    Kernel,
    TileOp,
    element_bytes,
    memref_element,
    memref_shape,
    require_scope,
)
from tilegraph.hardware import HardwareModel

CUBE_INPUTS = {"f16": "f32", "bf16": "f32", "f32": "f32", "i8": "i32"}
"""Cube input element type -> the accumulator type it needs in L0C."""


@irdl_op_definition
class MmadOp(TileOp):
    """``tile.mmad %a, %b, %c, %init``: ``c = a × b`` when ``init`` is true, else
    ``c += a × b``.

    ``a`` is L0A ZZ ``(M1, K1, 16, K0)``, ``b`` is L0B ZN ``(K1, N1, 16, K0)``, ``c`` is L0C
    NZ ``(N1, M1, 16, 16)``. Inputs f16/bf16/f32 accumulate in f32, i8 in i32. ``init`` is
    an ``i1`` so that the first iteration of a K loop can start the accumulation.
    """

    name = "tile.mmad"
    PIPE: ClassVar[str] = "M"
    READS_DESTINATION: ClassVar[bool] = True
    a = operand_def(MemRefType)
    b = operand_def(MemRefType)
    c = operand_def(MemRefType)
    init = operand_def(I1)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$a `,` $b `,` $c `,` $init attr-dict `:` type($a) `,` type($b) `,` type($c)"

    def __init__(self, a, b, c, init):
        super().__init__(operands=[a, b, c, init])

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

    def dims(self) -> tuple[int, int, int]:
        m1, k1, m0, k0 = memref_shape(self.a)
        n1 = memref_shape(self.b)[1]
        return m1 * m0, k1 * k0, n1 * 16

    def cost(self, hw: HardwareModel) -> int:
        m, k, n = self.dims()
        dtype = {"f16": "float16", "bf16": "bfloat16", "i8": "int8"}.get(
            str(memref_element(self.a)), "float32"
        )
        macs = hw.cube_macs_per_cycle.get(dtype, 1024)
        k0 = macs // 256  # MACs per cycle = 16 x 16 x K0
        return hw.mmad_head_cycles + ceil(m / 16) * ceil(k / k0) * ceil(n / 16)

    def moved_bytes(self) -> int:
        m, k, n = self.dims()
        return (m * k + k * n) * element_bytes(memref_element(self.a))

    def written(self):
        return self.c

    def batched_kernel(self, batched):
        if batched[3] or not batched[2]:
            return None
        return self.kernel()

    def kernel(self) -> Kernel:
        """The product on fractal layouts; any leading dims are a batch of tiles (the
        accumulator then has one too)."""

        def run(a: np.ndarray, b: np.ndarray, c: np.ndarray, init: bool) -> tuple[()]:
            m1, k1, m0, k0 = a.shape[-4:]
            n1 = b.shape[-3]
            la, lb = a.ndim - 4, b.ndim - 4
            # A as (..., 1, M, K) rows; B per N fractal as (N1, K, 16): the product comes out
            # as (..., N1, M, 16), which is the accumulator's NZ order with no transpose.
            a2 = a.transpose(*range(la), la, la + 2, la + 1, la + 3)
            a2 = a2.reshape(*a.shape[:la], 1, m1 * m0, k1 * k0)
            b3 = b.transpose(*range(lb), lb + 1, lb, lb + 3, lb + 2)
            b3 = b3.reshape(*b.shape[:lb], n1, k1 * k0, 16)
            if a2.dtype != c.dtype:
                a2, b3 = a2.astype(c.dtype), b3.astype(c.dtype)
            rows = c.reshape(*c.shape[:-3], m1 * m0, 16)  # a view: (..., N1, M, 16)
            if init and rows.shape == np.broadcast_shapes(a2.shape[:-2], b3.shape[:-2]) + (
                m1 * m0,
                16,
            ):
                np.matmul(a2, b3, out=rows)
            elif init:
                c[...] = np.matmul(a2, b3).reshape(c.shape)
            else:
                rows += np.matmul(a2, b3)
            return ()

        return run


CUBE_OPS = (MmadOp,)
