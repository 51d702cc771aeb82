"""Data movement between memory scopes: window copies and the NCHW <-> NC1HWC0 DMA.

=================  ============  ===========================================================
op                 pipe          what it moves
=================  ============  ===========================================================
``tile.copy``      by path       a window between two buffers of equal rank (GM->UB/L1 on
                                 MTE2, UB->GM on MTE3, L1->UB on MTE1); out-of-bounds parts
                                 of the window are cut, the rest of a loaded buffer is filled
                                 with ``pad``
``tile.copy_flat`` by path       a run of consecutive elements (a reshape of contiguous data;
                                 ``partial``: one row of a tile, a gather's)
``tile.load_5hd``  MTE2          an NCHW GM window into an NC1HWC0 tile (TransData on the
                                 way in); ``tile.store_5hd`` (MTE3) the way back
=================  ============  ===========================================================

The fractal moves of the cube path (nd2nz, nz2nd, load2d, load3d, fixpipe) are in
:mod:`tilegraph.dialects.tile.fractal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    UnitAttr,
    f64,
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
    memref_element,
    memref_shape,
    memref_strides,
    require_scope,
    scope_of,
    verify_same_rank,
)
from tilegraph.dialects.tile.padding import RuntimePadding

COPY_PATHS = {
    ("GM", "UB"): "MTE2",
    ("GM", "L1"): "MTE2",
    ("UB", "GM"): "MTE3",
    ("L1", "UB"): "MTE1",
    ("UB", "L1"): "MTE3",
    ("L1", "GM"): "MTE3",
    ("UB", "UB"): "V",
}


def int_values(attr: Any) -> tuple[int, ...]:
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


class PathCopyOp(TileOp):
    """Base of the copies whose pipe and cost follow their (source, destination) scopes."""

    def path(self) -> tuple[str, str]:
        return scope_of(self.operands[0]), scope_of(self.written() or self.operands[-1])

    def pipe(self) -> str:
        return COPY_PATHS.get(self.path(), "MTE2")

    def verify_(self) -> None:
        path = self.path()
        if path not in COPY_PATHS:
            raise VerifyException(
                f"'{self.name}': no DMA path from {path[0]} to {path[1]} "
                f"(paths: {', '.join(f'{a}->{b}' for a, b in COPY_PATHS)})"
            )


@irdl_op_definition
class CopyOp(RuntimePadding, PathCopyOp):
    """``tile.copy %src[offsets] to %dst[offsets] [pad %v] {pad = 0.0}``: copy a window.

    The window has the shape of the on-chip buffer — the destination's, except for a store
    to GM, where it is the source's — and starts at the given offsets in each buffer; parts
    outside either buffer are cut (ragged tails, halos above an image). A load (from GM, or
    into UB) first fills the whole destination with ``pad`` (default 0), or with the
    run-time index operand ``pad`` (:mod:`.padding`), so lanes the window did not reach
    hold a known value.
    """

    name = "tile.copy"
    src = operand_def(MemRefType)
    src_offsets = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_offsets = var_operand_def(IndexType)
    pad_scalar = opt_operand_def(IndexType)
    pad = opt_prop_def(FloatAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $src_offsets `]` `to` $dst `[` $dst_offsets `]` (`pad` $pad_scalar^)? "
        "attr-dict `:` type($src) `to` type($dst)"
    )

    def __init__(self, src, src_offsets, dst, dst_offsets, pad: float | SSAValue | None = None):
        props: dict[str, Any] = {}
        if pad is not None and not isinstance(pad, SSAValue):
            props["pad"] = FloatAttr(pad, f64)
        runtime = [pad] if isinstance(pad, SSAValue) else []
        super().__init__(operands=[src, src_offsets, dst, dst_offsets, runtime], properties=props)

    def static_padding(self) -> float:
        return self.pad.value.data if self.pad is not None else 0.0

    def has_static_padding(self) -> bool:
        return self.pad is not None

    def verify_(self) -> None:
        super().verify_()
        self.verify_padding()
        verify_same_rank(self, self.src, self.dst, "source and destination")
        rank = len(memref_shape(self.src))
        if len(self.src_offsets) != rank or len(self.dst_offsets) != rank:
            raise VerifyException(f"'{self.name}': expected {rank} offsets on each side")

    def moved_bytes(self, window: Sequence[int] | None = None) -> int:
        """Bytes of the whole window, or of ``window`` (its extents per dim: the part of a
        window cut at its GM tensor's end that the DMA moves, the cycle model's)."""
        local = self.src if scope_of(self.dst) == "GM" else self.dst
        if window is None:
            return buffer_bytes(local)
        return prod(window) * element_bytes(memref_element(local))

    def gm_burst_bytes(self, window: Sequence[int] | None = None) -> int | None:
        """The GM runs of the whole window, or of ``window`` (as :meth:`moved_bytes`)."""
        gm, local = (self.dst, self.src) if scope_of(self.dst) == "GM" else (self.src, self.dst)
        if scope_of(gm) != "GM":
            return None
        return contiguous_run(
            memref_shape(local) if window is None else window,
            memref_shape(gm),
            element_bytes(memref_element(gm)),
            memref_strides(gm),
        )

    def gm_offsets(self) -> tuple[SSAValue, ...]:
        offsets = self.dst_offsets if scope_of(self.dst) == "GM" else self.src_offsets
        return tuple(offsets)

    def gm_window(self) -> tuple[int, ...] | None:
        on_chip = self.src if scope_of(self.dst) == "GM" else self.dst
        return memref_shape(on_chip)


@irdl_op_definition
class CopyFlatOp(PathCopyOp):
    """``tile.copy_flat %src[%i] to %dst[%j] {count}``: ``count`` consecutive elements,
    whatever the buffers' shapes (a DMA moves bytes; a reshape of contiguous data is a
    flat copy). The run is cut where it leaves either buffer; a load fills the rest of the
    destination with zeros first, unless ``partial``: then the rest keeps its contents
    (one row of a tile, as Ascend C's ``DataCopy(dst[j], src[i], count)`` writes: a
    gather fills its tile row by row).

    ``atomic`` (a store from UB to GM only: ``"add"``, ``"max"`` or ``"min"``): each element
    is combined with the one it lands on instead of replacing it — the DMA's atomic
    write (Ascend C ``SetAtomicType<T>()`` with ``SetAtomicAdd`` / ``SetAtomicMax`` /
    ``SetAtomicMin`` before ``DataCopy``); the store reads its destination. Which element
    types a chip combines: :attr:`~tilegraph.hardware.HardwareModel.dma_atomic_types`."""

    name = "tile.copy_flat"
    src = operand_def(MemRefType)
    src_offset = operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_offset = operand_def(IndexType)
    count = prop_def(IntegerAttr)
    partial = opt_prop_def(UnitAttr)
    atomic = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $src_offset `]` `to` $dst `[` $dst_offset `]` attr-dict "
        "`:` type($src) `to` type($dst)"
    )

    ATOMIC_KINDS: ClassVar[tuple[str, ...]] = ("add", "max", "min")

    def __init__(
        self,
        src,
        src_offset,
        dst,
        dst_offset,
        count: int,
        partial: bool = False,
        atomic: str | None = None,
    ):
        props: dict[str, Any] = {"count": IntegerAttr(count, i64)}
        if partial:
            props["partial"] = UnitAttr()
        if atomic is not None:
            props["atomic"] = StringAttr(atomic)
        super().__init__(operands=[src, src_offset, dst, dst_offset], properties=props)

    @property
    def combine(self) -> str | None:
        """The atomic store's combination (``atomic``), None for a plain copy."""
        return None if self.atomic is None else self.atomic.data

    def read(self) -> tuple[SSAValue, ...]:
        """An atomic store reads the GM elements it combines with, too."""
        return (self.src, self.dst) if self.atomic is not None else super().read()

    def verify_(self) -> None:
        super().verify_()
        if self.count.value.data < 1:
            raise VerifyException(f"'{self.name}': count must be positive")
        if self.combine is not None:
            if self.combine not in self.ATOMIC_KINDS:
                raise VerifyException(
                    f"'{self.name}': atomic must be one of {list(self.ATOMIC_KINDS)}"
                )
            if scope_of(self.dst) != "GM" or scope_of(self.src) == "GM":
                raise VerifyException(f"'{self.name}': an atomic copy stores on-chip data to GM")

    def moved_bytes(self) -> int:
        t = self.src.type
        assert isinstance(t, MemRefType)
        return self.count.value.data * buffer_bytes(t) // max(1, prod(memref_shape(t)))

    def gm_offsets(self) -> tuple[SSAValue, ...]:
        return (self.src_offset,) if scope_of(self.src) == "GM" else (self.dst_offset,)


@irdl_op_definition
class Load5hdOp(RuntimePadding, TileOp):
    """``tile.load_5hd %src[n, c, h, w] to %dst [pad %v]``: an NCHW window of GM into an
    NC1HWC0 buffer ``(N, C1, H, W, C0)`` on chip — the DMA does TransData's work on the way
    in. Positions outside ``src`` read as ``pad`` (default 0, or the run-time index operand
    ``pad``, :mod:`.padding`; channels beyond C always as 0). A 3-D ``src`` is CHW (N = 1)."""

    name = "tile.load_5hd"
    PIPE: ClassVar[str] = "MTE2"
    src = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    pad_scalar = opt_operand_def(IndexType)
    pad = opt_prop_def(FloatAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $offsets `]` `to` $dst (`pad` $pad_scalar^)? attr-dict "
        "`:` type($src) `to` type($dst)"
    )

    def __init__(self, src, offsets, dst, pad: float | SSAValue | None = None):
        props = {} if pad is None or isinstance(pad, SSAValue) else {"pad": FloatAttr(pad, f64)}
        runtime = [pad] if isinstance(pad, SSAValue) else []
        super().__init__(operands=[src, offsets, dst, runtime], properties=props)

    def static_padding(self) -> float:
        return self.pad.value.data if self.pad is not None else 0.0

    def has_static_padding(self) -> bool:
        return self.pad is not None

    def verify_(self) -> None:
        self.verify_padding()
        require_scope(self, self.src, ("GM",), "the source")
        require_scope(self, self.dst, ("L1", "UB"), "the destination")
        if len(memref_shape(self.src)) not in (3, 4) or len(memref_shape(self.dst)) != 5:
            raise VerifyException(f"'{self.name}': moves an NCHW window into a 5-D buffer")
        if len(self.offsets) != 4:
            raise VerifyException(f"'{self.name}': expected 4 offsets (n, c, h, w)")

    def moved_bytes(self) -> int:
        return buffer_bytes(self.dst)

    def gm_window(self) -> tuple[int, ...] | None:
        n, c1, h, w, c0 = memref_shape(self.dst)
        return (n, c1 * c0, h, w)

    def gm_moved_bytes(self) -> int:
        n, c1, h, w, c0 = memref_shape(self.dst)
        channels = min(c1 * c0, memref_shape(self.src)[1])
        return n * channels * h * w * element_bytes(memref_element(self.src))


@irdl_op_definition
class Store5hdOp(TileOp):
    """``tile.store_5hd %src to %dst[n, c, h, w] {channel_end = E}``: an NC1HWC0 tile
    ``(N, C1, H, W, C0)`` from UB into a window of an NCHW GM buffer; channels beyond
    ``dst`` (padding lanes) are dropped on the way out, and so are those at or past
    ``channel_end`` when it is given — the end of the channel region the store fills (a
    concat input whose channel count stops inside a C0 block: its last block's padding
    lanes would land on the next input's channels)."""

    name = "tile.store_5hd"
    PIPE: ClassVar[str] = "MTE3"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    channel_end = opt_prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$src `to` $dst `[` $offsets `]` attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, dst, offsets, channel_end: int | None = None):
        super().__init__(
            operands=[src, dst, offsets],
            properties={}
            if channel_end is None
            else {"channel_end": IntegerAttr(channel_end, i64)},
        )

    def verify_(self) -> None:
        require_scope(self, self.src, ("UB", "L1"), "the source")
        require_scope(self, self.dst, ("GM",), "the destination")
        if len(memref_shape(self.src)) != 5 or len(memref_shape(self.dst)) != 4:
            raise VerifyException(f"'{self.name}': moves a 5-D tile into a 4-D NCHW buffer")
        if len(self.offsets) != 4:
            raise VerifyException(f"'{self.name}': expected 4 offsets (n, c, h, w)")
        if self.channel_end is not None and self.channel_end.value.data < 0:
            raise VerifyException(f"'{self.name}': channel_end must not be negative")

    def moved_bytes(self) -> int:
        return buffer_bytes(self.src)


DMA_OPS = (CopyOp, CopyFlatOp, Load5hdOp, Store5hdOp)
