"""Data movement of the cube path, between ND rows and fractal layouts.

=================  ============  ===========================================================
op                 pipe          what it moves
=================  ============  ===========================================================
``tile.nd2nz``     MTE2          a GM ND matrix window into an L1 (or UB) NZ buffer
                                 ``(C1, R1, 16, C0)`` (zero padded to whole fractals)
``tile.nz2nd``     MTE3          an NZ tile (UB or L1) back out to ND rows, padding cut
``tile.load2d``    MTE1          fractals L1 -> L0A/L0B: ``copy``, ``swap`` (NZ -> ZZ, the
                                 outer fractal axes exchanged), ``transpose`` (NZ -> ZN, each
                                 fractal transposed too), ``transpose_fractals``
``tile.load3d``    MTE1          img2col of an NC1HWC0 row window in L1 into L0A ZZ
                                 ``(M1, K1, 16, C0)``: M = output pixels, K = (c1, kh, kw, c0);
                                 ``c04``: of an NC1HWC0_C04 window, K = (kh, kw, c < 4)
``tile.fixpipe``   FIX           the L0C accumulator ``(N1, M1, 16, 16)`` out to GM, L1 or UB
                                 as ND rows, NC1HWC0 rows or NZ, with bias, ReLU and cast
=================  ============  ===========================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue
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
from tilegraph.dialects.tile.padding import RuntimePadding


@irdl_op_definition
class Nd2NzOp(TileOp):
    """``tile.nd2nz %src[offsets] to %dst (rows %r)? (cols %c)?``: a GM ND window of rows x
    cols (the last two dims; leading offsets pick the batch) into an L1 NZ buffer
    ``(C1, R1, 16, C0)`` (leading dims of 1 allowed: a batch slice), zero padded; into UB
    on a decoupled preset's vector core (Ascend C's ND2NZ DataCopy to VECIN).

    ``rows`` / ``cols`` (optional ``index`` operands, in elements): the valid rows / columns
    of the window (Ascend C's ``Nd2NzParams`` nValue / dValue: a matmul's ragged last M or
    N block moves only the rows its ``mmad`` multiplies). Only that leading part of the
    window is read; the rest of ``dst`` reads as zero, as past the source's end. The
    cost model charges the ``ceil(rows / 16)`` x ``ceil(cols / C0)`` fractals it fills
    (:meth:`valid_fractals`). When constant, within what ``dst`` holds (verified).
    """

    name = "tile.nd2nz"
    PIPE: ClassVar[str] = "MTE2"
    src = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    valid_rows = opt_operand_def(IndexType)
    valid_cols = opt_operand_def(IndexType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $offsets `]` `to` $dst (`rows` $valid_rows^)? (`cols` $valid_cols^)? "
        "attr-dict `:` type($src) `to` type($dst)"
    )

    def __init__(
        self,
        src,
        offsets,
        dst,
        rows: SSAValue | None = None,
        cols: SSAValue | None = None,
    ):
        super().__init__(
            operands=[
                src,
                offsets,
                dst,
                [] if rows is None else [rows],
                [] if cols is None else [cols],
            ]
        )

    def whole_fractals(self) -> tuple[int, int]:
        """(R1, C1): the fractal rows and columns ``dst`` holds."""
        c1, r1 = memref_shape(self.dst)[-4:-2]
        return r1, c1

    def valid_fractals(self, rows: int | None = None, cols: int | None = None) -> tuple[int, int]:
        """(row fractals, column fractals) filled when ``rows`` x ``cols`` elements are
        valid (None: all of that axis)."""
        r1, c1 = self.whole_fractals()
        return leading_fractals(r1, rows), leading_fractals(c1, cols, memref_shape(self.dst)[-1])

    def verify_(self) -> None:
        require_scope(self, self.src, ("GM",), "the source")
        require_scope(self, self.dst, ("L1", "UB"), "the destination")
        dst = memref_shape(self.dst)
        if len(dst) < 4 or any(d != 1 for d in dst[:-4]):
            raise VerifyException(f"'{self.name}': the destination must be NZ (C1, R1, 16, C0)")
        if len(self.offsets) != len(memref_shape(self.src)):
            raise VerifyException(f"'{self.name}': expected one offset per source dim")
        r1, c1 = self.whole_fractals()
        require_extent(self, "rows", self.valid_rows, 16 * r1)
        require_extent(self, "cols", self.valid_cols, dst[-1] * c1)

    def moved_bytes(self, fractals: tuple[int, int] | None = None) -> int:
        """Bytes into ``dst``: all of it, or ``fractals`` (rows, columns) of its fractals
        (a ragged instance)."""
        whole = buffer_bytes(self.dst)
        if fractals is None:
            return whole
        r1, c1 = self.whole_fractals()
        return whole * fractals[0] * fractals[1] // (r1 * c1)

    def gm_burst_bytes(self, fractals: tuple[int, int] | None = None) -> int | None:
        c1, r1, r0, c0 = memref_shape(self.dst)[-4:]
        if fractals is not None:
            r1, c1 = fractals
        return contiguous_run(
            (r1 * r0, c1 * c0),
            memref_shape(self.src),
            element_bytes(memref_element(self.src)),
            memref_strides(self.src),
        )

    def gm_window(self) -> tuple[int, ...] | None:
        c1, r1, r0, c0 = memref_shape(self.dst)[-4:]
        leading = (1,) * (len(memref_shape(self.src)) - 2)
        return (*leading, r1 * r0, c1 * c0)


@irdl_op_definition
class Nz2NdOp(TileOp):
    """``tile.nz2nd %src to %dst[offsets]``: an NZ tile ``(C1, R1, 16, C0)`` (leading dims
    of 1 allowed) from UB or L1 out to a GM ND window of rows x cols at ``offsets`` (leading
    offsets pick the batch); the parts outside ``dst`` (padding) are cut."""

    name = "tile.nz2nd"
    PIPE: ClassVar[str] = "MTE3"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$src `to` $dst `[` $offsets `]` attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, dst, offsets):
        super().__init__(operands=[src, dst, offsets])

    def verify_(self) -> None:
        require_scope(self, self.src, ("UB", "L1"), "the source")
        require_scope(self, self.dst, ("GM",), "the destination")
        src = memref_shape(self.src)
        if len(src) < 4 or any(d != 1 for d in src[:-4]):
            raise VerifyException(f"'{self.name}': the source must be NZ (C1, R1, 16, C0)")
        if len(self.offsets) != len(memref_shape(self.dst)) or len(self.offsets) < 2:
            raise VerifyException(f"'{self.name}': expected one offset per destination dim")

    def moved_bytes(self) -> int:
        return buffer_bytes(self.src)


LOAD2D_MODES = ("copy", "swap", "transpose", "transpose_fractals")


@irdl_op_definition
class Load2dOp(TileOp):
    """``tile.load2d %src[i, j] to %dst (valid %v)? (k %k)? {mode}``: fractals from L1 into
    L0A/L0B.

    ``dst[a, b]`` takes the fractal ``src[i + a, j + b]`` (``copy``), ``src[i + b, j + a]``
    (``swap``: NZ -> ZZ for the left operand), that fractal transposed (``transpose``:
    NZ -> ZN for a right operand held as rows of K), or ``src[i + a, j + b]`` transposed
    (``transpose_fractals``: a transposed left operand). Offsets index ``src``'s outer
    axes; fractals outside ``src`` read as zero.

    ``valid`` (optional ``index``, in elements): the rows (into L0A) or columns (into L0B)
    that the ``mmad`` reading ``dst`` multiplies (its ``m`` / ``n``: a matmul's ragged last
    block). Only the leading ``ceil(valid / 16)`` fractals along ``dst``'s M (L0A: dim 0)
    or N (L0B: dim 1) axis are loaded, and charged (:meth:`ragged_fractals`); the others
    read as zero, as a ``mmad`` given ``m`` / ``n`` never reads them. ``k`` (optional
    ``index``, in elements) likewise: the K that ``mmad`` multiplies (its ``k``: a ragged
    last K step), the leading ``ceil(k / K0)`` fractals along ``dst``'s K axis (L0A: dim
    1, L0B: dim 0; :meth:`k_fractals`).
    """

    name = "tile.load2d"
    PIPE: ClassVar[str] = "MTE1"
    src = operand_def(MemRefType)
    row = operand_def(IndexType)
    col = operand_def(IndexType)
    dst = operand_def(MemRefType)
    valid = opt_operand_def(IndexType)
    valid_k = opt_operand_def(IndexType)
    mode = prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $row `,` $col `]` `to` $dst (`valid` $valid^)? (`k` $valid_k^)? attr-dict "
        "`:` type($src) `to` type($dst)"
    )

    def __init__(
        self,
        src,
        row,
        col,
        dst,
        mode: str = "copy",
        valid: SSAValue | None = None,
        k: SSAValue | None = None,
    ):
        super().__init__(
            operands=[
                src,
                row,
                col,
                dst,
                [] if valid is None else [valid],
                [] if k is None else [k],
            ],
            properties={"mode": StringAttr(mode)},
        )

    @property
    def k_axis(self) -> int:
        """The K axis of ``dst``: 1 in L0A's ZZ ``(M1, K1, 16, K0)``, 0 in L0B's ZN."""
        return 1 if scope_of(self.dst) == "L0A" else 0

    def k_fractals(self, k: int | None = None) -> int:
        """Fractals loaded along :attr:`k_axis` when ``k`` elements are valid (None: all)."""
        dst = memref_shape(self.dst)
        return leading_fractals(dst[self.k_axis], k, dst[-1])

    @property
    def ragged_axis(self) -> int:
        """The axis of ``dst`` that ``valid`` counts: M (0) into L0A, N (1) into L0B."""
        return 0 if scope_of(self.dst) == "L0A" else 1

    def ragged_fractals(self, valid: int | None = None) -> int:
        """Fractals loaded along :attr:`ragged_axis` when ``valid`` is ``valid`` elements
        (None: all of them)."""
        return leading_fractals(memref_shape(self.dst)[self.ragged_axis], valid)

    def verify_(self) -> None:
        require_scope(self, self.src, ("L1",), "the source")
        require_scope(self, self.dst, ("L0A", "L0B"), "the destination")
        if self.mode.data not in LOAD2D_MODES:
            raise VerifyException(f"'{self.name}': mode must be one of {', '.join(LOAD2D_MODES)}")
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        if len(src) < 4 or any(d != 1 for d in src[:-4]) or len(dst) != 4:
            raise VerifyException(
                f"'{self.name}': source and destination must be fractal (4-D; the source "
                "may have leading dims of 1, a batch slice)"
            )
        src = src[-4:]
        inner = src[2:] if self.mode.data in ("copy", "swap") else src[:1:-1]
        if dst[2:] != inner:
            raise VerifyException(
                f"'{self.name}': {self.mode.data} of {list(src[2:])} fractals gives "
                f"{list(inner)} fractals, not {list(dst[2:])}"
            )
        require_extent(self, "valid", self.valid, 16 * self.ragged_fractals())
        require_extent(self, "k", self.valid_k, dst[-1] * self.k_fractals())

    def moved_bytes(self, fractals: int | None = None, k_fractals: int | None = None) -> int:
        """Bytes into ``dst``: all of it, or ``fractals`` of its fractals along
        :attr:`ragged_axis` and ``k_fractals`` along :attr:`k_axis` (a ragged instance;
        None: all along that axis)."""
        whole = buffer_bytes(self.dst)
        if fractals is not None:
            whole = whole * fractals // self.ragged_fractals()
        if k_fractals is not None:
            whole = whole * k_fractals // self.k_fractals()
        return whole


C04_LANES = 4
"""Channels of a small-channel (C04) kernel position: NC1HWC0_C04's C0."""


@irdl_op_definition
class Load3dOp(RuntimePadding, TileOp):
    """``tile.load3d %src[k1] to %dst {kernel, strides, dilations, pad_left, out_width,
    channels, c04?}``: img2col into L0A.

    ``src`` (L1) is an NC1HWC0 window ``(1, C1, H_win, W, C0)`` whose row 0 is the input row
    of output row 0 (top padding already in it as zero rows). Output pixel ``m`` is output
    row ``m // out_width``, column ``m % out_width``; K fractal ``k1 + b`` is
    ``(c1, kh, kw)`` in FRACTAL_Z order. Columns outside the image (left/right padding) and
    K past the window read as ``pad_value`` (default 0; Load3Dv2's padding value, Ascend C
    ``SetLoadDataPaddingValue``: an int8 convolution with a data zero point pads with it,
    its top/bottom padding rows being filled with it by the copy into L1), or as the
    run-time ``pad`` operand (a zero point computed at run time, :mod:`.padding`); channel lanes at
    or beyond ``channels`` read as zero, so padding lanes are never read.

    ``c04`` (small channel, FRACTAL_Z_C04's K order): ``src`` is an NC1HWC0_C04 window
    ``(1, 1, H_win, W, 4)`` and K element ``k`` is kernel position ``k // 4`` (``kh · Kw +
    kw``), channel ``k % 4``: each K fractal of C0 lanes holds C0 / 4 kernel positions, and K
    past ``4 · Kh · Kw`` reads as zero. This is Load3Dv2 with a channel size of 4 (Ascend C
    ``LoadData3DParamsV2``; CANN's conv kernels set it for their C04 mode, docs/hardware.md).
    """

    name = "tile.load3d"
    PIPE: ClassVar[str] = "MTE1"
    src = operand_def(MemRefType)
    k_offset = operand_def(IndexType)
    dst = operand_def(MemRefType)
    valid_channels = opt_operand_def(IndexType)
    """When given, the valid channels of this slab (a ragged last group block), overriding
    ``channels``."""
    pad_scalar = opt_operand_def(IndexType)
    """When given, what the padding reads as, known at run time (no ``pad_value`` then)."""
    kernel_shape = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    pad_left = prop_def(IntegerAttr)
    out_width = prop_def(IntegerAttr)
    channels = prop_def(IntegerAttr)
    c04 = opt_prop_def(UnitAttr)
    pad_value = opt_prop_def(IntegerAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $k_offset `]` `to` $dst (`valid` $valid_channels^)? (`pad` $pad_scalar^)? "
        "attr-dict `:` type($src) `to` type($dst)"
    )

    def __init__(
        self,
        src,
        k_offset,
        dst,
        *,
        valid_channels=None,
        kernel_shape: Sequence[int],
        strides: Sequence[int],
        dilations: Sequence[int],
        pad_left: int,
        out_width: int,
        channels: int,
        c04: bool = False,
        pad_value: int | SSAValue = 0,
    ):
        properties: dict[str, Attribute] = {
            "kernel_shape": DenseArrayBase.from_list(i64, list(kernel_shape)),
            "strides": DenseArrayBase.from_list(i64, list(strides)),
            "dilations": DenseArrayBase.from_list(i64, list(dilations)),
            "pad_left": IntegerAttr(pad_left, i64),
            "out_width": IntegerAttr(out_width, i64),
            "channels": IntegerAttr(channels, i64),
        }
        if c04:
            properties["c04"] = UnitAttr()
        if isinstance(pad_value, int) and pad_value:
            properties["pad_value"] = IntegerAttr(pad_value, i64)
        runtime = [pad_value] if isinstance(pad_value, SSAValue) else []
        valid = [] if valid_channels is None else [valid_channels]
        super().__init__(operands=[src, k_offset, dst, valid, runtime], properties=properties)

    @property
    def padding(self) -> int:
        """What the padding (outside the image, past the window) reads as, when known at
        compile time."""
        return self.pad_value.value.data if self.pad_value is not None else 0

    def static_padding(self) -> float:
        return self.padding

    def has_static_padding(self) -> bool:
        return self.pad_value is not None

    @property
    def lane_group(self) -> int:
        """Lanes of one kernel position in a K fractal row: 4 in C04 mode, else all C0."""
        return C04_LANES if self.c04 is not None else memref_shape(self.dst)[-1]

    def verify_(self) -> None:
        self.verify_padding()
        require_scope(self, self.src, ("L1",), "the feature map")
        require_scope(self, self.dst, ("L0A",), "the destination")
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        if len(src) != 5:
            raise VerifyException(f"'{self.name}': the feature map must be NC1HWC0 (5-D)")
        if len(dst) != 4 or dst[2] != 16:
            raise VerifyException(
                f"'{self.name}': the destination must be ZZ fractals (M1, K1, 16, C0), "
                f"not {list(dst)}"
            )
        if self.c04 is not None:
            if src[1] != 1 or src[4] != C04_LANES:
                raise VerifyException(
                    f"'{self.name}': c04 img2col reads an NC1HWC0_C04 window (1, 1, H, W, 4), "
                    f"not {list(src)}"
                )
            if dst[3] % C04_LANES:
                raise VerifyException(
                    f"'{self.name}': c04 img2col packs 4 channels per kernel position into "
                    f"fractals of C0 lanes; C0 = {dst[3]} is not a multiple of 4"
                )
            if self.channels.value.data > C04_LANES:
                raise VerifyException(
                    f"'{self.name}': c04 img2col of {self.channels.value.data} channels (at most 4)"
                )
        elif dst[3] != src[4]:
            raise VerifyException(
                f"'{self.name}': img2col of C0 = {src[4]} fills "
                f"(M1, K1, 16, {src[4]}) fractals, not {list(dst)}"
            )

    def moved_bytes(self) -> int:
        return buffer_bytes(self.dst)


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


FRACTAL_OPS = (Nd2NzOp, Nz2NdOp, Load2dOp, Load3dOp, FixpipeOp)
