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
=================  ============  ===========================================================

The accumulator's way out, ``tile.fixpipe`` (FIX), is :mod:`tilegraph.dialects.tile.fixpipe`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
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


@dataclass(frozen=True)
class NzWindowFacts:
    """An ``nd2nz``'s window and buffers as numbers (:meth:`Nd2NzOp.window_facts`)."""

    whole_bytes: int
    """Bytes of the destination."""
    r1: int
    c1: int
    r0: int
    c0: int
    """The destination's (C1, R1, 16, C0) fractals."""
    dst_scope: str
    src_shape: tuple[int, ...]
    src_element_bytes: int
    src_strides: tuple[int, ...]

    def moved_bytes(self, valid: tuple[int, int] | None = None) -> int:
        """See :meth:`Nd2NzOp.moved_bytes`."""
        if valid is None:
            return self.whole_bytes
        return self.whole_bytes * valid[0] * valid[1] // (self.r1 * 16 * self.c1)

    def gm_burst_bytes(self, valid: tuple[int, int] | None = None) -> int | None:
        """See :meth:`Nd2NzOp.gm_burst_bytes`."""
        rows, c1 = (self.r1 * self.r0, self.c1) if valid is None else valid
        return contiguous_run(
            (rows, c1 * self.c0), self.src_shape, self.src_element_bytes, self.src_strides
        )


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
    cost model charges the ``rows`` rows it moves, each in ``ceil(cols / C0)`` 32-byte
    blocks (``copy_gm_to_cbuf_multi_nd2nz``: nValue rows of ``ceil(dValue · bytes / 32)``
    blocks; :meth:`moved_bytes`). When constant, within what ``dst`` holds (verified).
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

    def window_facts(self) -> NzWindowFacts:
        """The numbers :meth:`moved_bytes` and :meth:`gm_burst_bytes` are made of, read
        from the op's types once: a ragged nd2nz has a cost record per valid row count
        (thousands when its columns are ragged too), and reading an operand's type costs
        microseconds."""
        c1, r1, r0, c0 = memref_shape(self.dst)[-4:]
        return NzWindowFacts(
            buffer_bytes(self.dst),
            r1,
            c1,
            r0,
            c0,
            scope_of(self.dst),
            memref_shape(self.src),
            element_bytes(memref_element(self.src)),
            tuple(memref_strides(self.src)),
        )

    def moved_bytes(self, valid: tuple[int, int] | None = None) -> int:
        """Bytes into ``dst``: all of it, or ``valid`` = (rows, column fractals) of it (a
        ragged instance: its rows, each in whole C0 blocks of 32 bytes)."""
        return self.window_facts().moved_bytes(valid)

    def gm_burst_bytes(self, valid: tuple[int, int] | None = None) -> int | None:
        """The GM runs of the whole window, or of ``valid`` (as :meth:`moved_bytes`)."""
        return self.window_facts().gm_burst_bytes(valid)

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


FRACTAL_OPS = (Nd2NzOp, Nz2NdOp, Load2dOp, Load3dOp)
