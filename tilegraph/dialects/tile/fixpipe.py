"""``tile.fixpipe``: the cube's L0C accumulator out through the FIX pipe.

The accumulator ``(N1, M1, 16, 16)`` goes to GM, L1 or (on a coupled core) UB as ND rows,
NC1HWC0 rows or NZ fractals, converting on the way: bias, ReLU, the cast of the fp32 sum,
the int32 sum dequantised ("deq") or requantised to int8, a ragged block's valid ``m`` /
``n`` only (Ascend C's ``Fixpipe`` and ``FixpipeParams``; docs/hardware.md). The moves of
the cube path into it are :mod:`tilegraph.dialects.tile.fractal`'s.
"""

from __future__ import annotations

from math import prod
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import (
    TileOp,
    buffer_bytes,
    contiguous_run,
    element_bytes,
    leading_fractals,
    memref_element,
    memref_shape,
    memref_strides,
    require_extent,
    require_scope,
    scope_of,
)

FIXPIPE_LAYOUTS = ("nd", "nc1hwc0", "nz")

FIXPIPE_CONVERSIONS: dict[tuple[str, bool], tuple[str, ...]] = {
    ("f32", False): ("f32", "f16", "bf16"),
    ("i32", False): ("i32",),
    ("i32", True): ("f32", "f16", "i8"),
}
"""(accumulator type, has a deq scale) -> the destination types fixpipe converts it to
(the ascend-hardware notes: L0C int32 -> fp16 with a scale, per tensor or per channel,
"deq"; int32 -> int8 with a scale and an offset, "requant" (Ascend C's ``REQ8`` /
``VREQ8``); the fp32 accumulator rounded to fp16 / bf16 on the way out)."""

REQUANT_C0 = 32
"""The C0 of an int8 NC1HWC0 destination: two accumulator fractals of 16 columns a slice."""


@irdl_op_definition
class FixpipeOp(TileOp):
    """``tile.fixpipe %src to %dst[offsets] (bias %b) (deq %s) (m %m) (n %n) {layout, relu,
    rows, cols, zero_point}``: L0C out.

    ``src`` is the NZ accumulator ``(N1, M1, 16, 16)``. ``layout = "nd"`` writes it as an
    (M, N) matrix window into the last two dims of ``dst`` at ``offsets``; ``"nc1hwc0"``
    writes the first ``rows`` x W pixels as ``(1, N1, rows, W, 16)`` into an NC1HWC0
    ``dst`` (W = ``cols`` when given: a convolution tile of part of the output width, else
    dst's width); ``"nz"`` writes the fractals as they are into a FRACTAL_NZ
    ``dst`` (offsets in fractals: ``[N1, M1, 0, 0]``). On the way: ``+ bias`` (``N1·16``
    values, an L1 buffer), the dequantisation of an int32 accumulator (``deq``: ``N1·16``
    float scales, one per column, an L1 buffer; the product with the exact int32 sum is
    rounded once to ``dst``'s type), ``relu``, and the cast to ``dst``'s element type.
    Parts outside ``dst`` are cut.

    Conversions (:data:`FIXPIPE_CONVERSIONS`): an f32 accumulator leaves as f32, f16 or
    bf16 (no ``deq``); an i32 accumulator as i32 (no ``deq``) or, with ``deq``, as f32 or
    f16 (the hardware's "deq" mode) or as i8 (its "requant" mode, Ascend C's ``REQ8`` /
    ``VREQ8``): ``saturate(round_half_even(float32(acc) · deq) + zero_point)``, the
    product in float32 (ReLU on it first with ``relu``), ``zero_point`` (default 0) the
    output's. An i8 result is written ``nd`` (a requantised matmul) or ``nc1hwc0`` (a
    requantised convolution; the int8 NZ fractal is 16 x 32, so no ``nz``); an i8
    ``nc1hwc0`` destination has C0 = 32: accumulator fractal ``n`` fills
    lanes ``16·(n mod 2)`` on of C1 slice ``n // 2`` (an odd last fractal leaves the upper
    lanes of its slice 0), and ``offsets`` count the destination's slices.

    ``m`` / ``n`` (optional ``index`` operands, in elements; ``nd`` and ``nz`` only): the
    valid rows / columns of the tile (Ascend C's ``FixpipeParams`` mSize / nSize: a
    matmul's ragged last block writes only its valid part). Only the leading ``m`` x ``n``
    elements (``nz``: the fractals holding them) are written; the rest of ``dst`` keeps
    what it held. The cost model charges the ``ceil(m / 16)`` x ``ceil(n / 16)``
    accumulator fractals read and written (:meth:`valid_fractals`).
    """

    name = "tile.fixpipe"
    PIPE: ClassVar[str] = "FIX"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    bias = opt_operand_def(MemRefType)
    deq = opt_operand_def(MemRefType)
    m = opt_operand_def(IndexType)
    n = opt_operand_def(IndexType)
    layout = prop_def(StringAttr)
    relu = opt_prop_def(BoolAttr)
    rows = opt_prop_def(IntegerAttr)
    cols = opt_prop_def(IntegerAttr)
    zero_point = opt_prop_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `to` $dst `[` $offsets `]` (`bias` $bias^ `:` type($bias))? "
        "(`deq` $deq^ `:` type($deq))? (`m` $m^)? (`n` $n^)? attr-dict "
        "`:` type($src) `to` type($dst)"
    )

    def __init__(
        self,
        src,
        dst,
        offsets,
        bias=None,
        *,
        deq=None,
        layout: str = "nd",
        relu: bool = False,
        rows: int | None = None,
        cols: int | None = None,
        zero_point: int | None = None,
        m: SSAValue | None = None,
        n: SSAValue | None = None,
    ):
        props: dict[str, Any] = {"layout": StringAttr(layout)}
        if zero_point is not None:
            props["zero_point"] = IntegerAttr(zero_point, i64)
        if relu:
            props["relu"] = BoolAttr.from_bool(True)
        if rows is not None:
            props["rows"] = IntegerAttr(rows, i64)
        if cols is not None:
            props["cols"] = IntegerAttr(cols, i64)
        optional = [[] if v is None else [v] for v in (bias, deq, m, n)]
        super().__init__(operands=[src, dst, offsets, *optional], properties=props)

    def verify_(self) -> None:
        require_scope(self, self.src, ("L0C",), "the accumulator")
        require_scope(self, self.dst, ("GM", "L1", "UB"), "the destination")
        if self.bias is not None:
            require_scope(self, self.bias, ("L1",), "the bias")
        self._verify_conversion()
        if self.layout.data not in FIXPIPE_LAYOUTS:
            raise VerifyException(
                f"'{self.name}': layout must be one of {', '.join(FIXPIPE_LAYOUTS)}"
            )
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        layout = self.layout.data
        if len(src) != 4 or src[2:] != (16, 16):
            raise VerifyException(f"'{self.name}': the accumulator must be NZ (N1, M1, 16, 16)")
        if layout == "nc1hwc0":
            if self.rows is None:
                raise VerifyException(f"'{self.name}': layout nc1hwc0 needs 'rows'")
            if len(dst) != 5:
                raise VerifyException(f"'{self.name}': layout nc1hwc0 writes a 5-D buffer")
            width = self.tile_width()
            if self.cols is not None and not 0 < width <= dst[3]:
                raise VerifyException(
                    f"'{self.name}': {width} cols do not fit the destination's width {dst[3]}"
                )
            if self.rows.value.data * width > src[1] * src[2]:
                raise VerifyException(
                    f"'{self.name}': {self.rows.value.data} rows of width {width} need more "
                    f"than the accumulator's {src[1] * src[2]} pixels"
                )
        if layout == "nz" and len(dst) < 4:
            raise VerifyException(f"'{self.name}': layout nz writes a fractal (4-D) buffer")
        if layout == "nd" and len(dst) < 2:
            raise VerifyException(f"'{self.name}': layout nd writes a matrix (rank >= 2)")
        if self.bias is not None and prod(memref_shape(self.bias)) != src[0] * 16:
            raise VerifyException(
                f"'{self.name}': the bias holds {prod(memref_shape(self.bias))} values, "
                f"the accumulator has {src[0] * 16} columns"
            )
        if len(self.offsets) != len(memref_shape(self.dst)):
            raise VerifyException(f"'{self.name}': expected one offset per destination dim")
        if (self.m is not None or self.n is not None) and layout == "nc1hwc0":
            raise VerifyException(f"'{self.name}': valid m / n are for the nd and nz layouts")
        require_extent(self, "m", self.m, 16 * src[1])
        require_extent(self, "n", self.n, 16 * src[0])

    def valid_fractals(self, m: int | None = None, n: int | None = None) -> tuple[int, int]:
        """(M fractals, N fractals) of the accumulator written when ``m`` x ``n`` elements
        are valid (None: all of that axis)."""
        n1, m1 = memref_shape(self.src)[:2]
        return leading_fractals(m1, m), leading_fractals(n1, n)

    def _verify_conversion(self) -> None:
        src, dst = str(memref_element(self.src)), str(memref_element(self.dst))
        deq = self.deq is not None
        legal = FIXPIPE_CONVERSIONS.get((src, deq), ())
        if dst not in legal:
            how = "with a deq scale" if deq else "without a deq scale"
            raise VerifyException(
                f"'{self.name}': an {src} accumulator {how} leaves as "
                f"{', '.join(legal) or 'nothing'}, not {dst}"
            )
        requant = dst == "i8"
        if self.zero_point is not None and not requant:
            raise VerifyException(f"'{self.name}': a zero point needs an i8 destination")
        if requant and self.layout.data != "nd":
            c0 = memref_shape(self.dst)[-1]
            if self.layout.data != "nc1hwc0" or c0 != REQUANT_C0:
                raise VerifyException(
                    f"'{self.name}': an i8 result is written as nd, or as nc1hwc0 with C0 = "
                    f"{REQUANT_C0}, not {self.layout.data} with {c0} lanes"
                )
        if self.deq is not None:
            require_scope(self, self.deq, ("L1",), "the deq scale")
            if str(memref_element(self.deq)) not in ("f32", "f16"):
                raise VerifyException(f"'{self.name}': the deq scale must be f32 or f16")
            if prod(memref_shape(self.deq)) != memref_shape(self.src)[0] * 16:
                raise VerifyException(
                    f"'{self.name}': the deq scale holds {prod(memref_shape(self.deq))} "
                    f"values, the accumulator has {memref_shape(self.src)[0] * 16} columns"
                )

    def tile_width(self) -> int:
        """Pixels per row of an ``nc1hwc0`` tile: ``cols``, else the destination's width."""
        if self.cols is not None:
            return self.cols.value.data
        return memref_shape(self.dst)[3]

    def moved_bytes(self, fractals: tuple[int, int] | None = None) -> int:
        """Accumulator bytes read: all of it, or ``fractals`` (M, N) of its fractals (a
        ragged instance)."""
        whole = buffer_bytes(self.src)
        if fractals is None:
            return whole
        n1, m1 = memref_shape(self.src)[:2]
        return whole * fractals[0] * fractals[1] // (m1 * n1)

    def gm_burst_bytes(self, fractals: tuple[int, int] | None = None) -> int | None:
        if scope_of(self.dst) != "GM" or self.layout.data == "nz":
            return None  # whole fractals, 512 B each for 16-bit data
        n1, m1, m0, n0 = memref_shape(self.src)
        if fractals is not None:
            m1, n1 = fractals
        dst = memref_shape(self.dst)
        if self.layout.data == "nc1hwc0":  # per C1 slice: rows x W pixels of C0 channels
            assert self.rows is not None
            window = (1, self.rows.value.data, self.tile_width(), dst[4])
        else:
            window = (m1 * m0, n1 * n0)
        strides = memref_strides(self.dst)
        return contiguous_run(window, dst, element_bytes(memref_element(self.dst)), strides)


FIXPIPE_OPS = (FixpipeOp,)
