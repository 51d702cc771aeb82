"""Data movement between memory scopes: window copies and the NCHW <-> NC1HWC0 DMA.

=================  ============  ===========================================================
op                 pipe          what it moves
=================  ============  ===========================================================
``tile.copy``      by path       a window between two buffers of equal rank (GM->UB/L1 on
                                 MTE2, UB->GM on MTE3, L1->UB on MTE1); out-of-bounds parts
                                 of the window are cut, the rest of a loaded buffer is filled
                                 with ``pad``
``tile.copy_flat`` by path       a run of consecutive elements (a reshape of contiguous data)
``tile.load_5hd``  MTE2          an NCHW GM window into an NC1HWC0 tile (TransData on the
                                 way in); ``tile.store_5hd`` (MTE3) the way back
=================  ============  ===========================================================

The fractal moves of the cube path (nd2nz, nz2nd, load2d, load3d, fixpipe) are in
:mod:`tilegraph.dialects.tile.fractal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil, prod
from typing import Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    f64,
    i64,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import (
    Kernel,
    TileOp,
    buffer_bytes,
    contiguous_run,
    copy_cut_items,
    copy_whole_windows,
    element_bytes,
    memref_element,
    memref_shape,
    require_scope,
    scope_of,
    verify_same_rank,
    window,
)
from tilegraph.hardware import HardwareModel

_DMA_HEAD_CYCLES = 16
"""Issue latency of one DMA instruction (cycle model; see docs/tile-level.md)."""

COPY_PATHS = {
    ("GM", "UB"): "MTE2",
    ("GM", "L1"): "MTE2",
    ("UB", "GM"): "MTE3",
    ("L1", "UB"): "MTE1",
    ("UB", "L1"): "MTE3",
    ("L1", "GM"): "MTE3",
    ("UB", "UB"): "V",
}


def dma_cycles(hw: HardwareModel, path: str, nbytes: int, burst: int | None = None) -> int:
    """Cycles of one DMA of ``nbytes`` on ``path``; a GM side made of ``burst``-byte runs
    that are not 512 B multiples moves at :attr:`HardwareModel.gm_misaligned_efficiency`."""
    rate = hw.dma_bytes_per_cycle.get(path, 64.0)
    if "GM" in path:
        rate *= hw.gm_efficiency(burst)
    return _DMA_HEAD_CYCLES + ceil(nbytes / rate)


def int_values(attr: Any) -> tuple[int, ...]:
    assert isinstance(attr, DenseArrayBase)
    return tuple(int(v) for v in attr.get_values())


def cast_into(dst: np.ndarray, index: Any, values: np.ndarray) -> None:
    dst[index] = values.astype(dst.dtype, copy=False)


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

    def cost(self, hw: HardwareModel) -> int:
        a, b = self.path()
        return dma_cycles(hw, f"{a}->{b}", self.moved_bytes(), self.gm_burst_bytes())


@irdl_op_definition
class CopyOp(PathCopyOp):
    """``tile.copy %src[offsets] to %dst[offsets] {pad = 0.0}``: copy a window.

    The window has the shape of the on-chip buffer — the destination's, except for a store
    to GM, where it is the source's — and starts at the given offsets in each buffer; parts
    outside either buffer are cut (ragged tails, halos above an image). A load (from GM, or
    into UB) first fills the whole destination with ``pad`` (default 0), so lanes the window
    did not reach hold a known value.
    """

    name = "tile.copy"
    src = operand_def(MemRefType)
    src_offsets = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_offsets = var_operand_def(IndexType)
    pad = opt_prop_def(FloatAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $src_offsets `]` `to` $dst `[` $dst_offsets `]` attr-dict "
        "`:` type($src) `to` type($dst)"
    )

    def __init__(self, src, src_offsets, dst, dst_offsets, pad: float | None = None):
        props: dict[str, Any] = {}
        if pad is not None:
            props["pad"] = FloatAttr(pad, f64)
        super().__init__(operands=[src, src_offsets, dst, dst_offsets], properties=props)

    def verify_(self) -> None:
        super().verify_()
        verify_same_rank(self, self.src, self.dst, "source and destination")
        rank = len(memref_shape(self.src))
        if len(self.src_offsets) != rank or len(self.dst_offsets) != rank:
            raise VerifyException(f"'{self.name}': expected {rank} offsets on each side")

    def moved_bytes(self) -> int:
        return buffer_bytes(self.src if scope_of(self.dst) == "GM" else self.dst)

    def gm_burst_bytes(self) -> int | None:
        gm, local = (self.dst, self.src) if scope_of(self.dst) == "GM" else (self.src, self.dst)
        if scope_of(gm) != "GM":
            return None
        return contiguous_run(
            memref_shape(local), memref_shape(gm), element_bytes(memref_element(gm))
        )

    def kernel(self) -> Kernel:
        rank = len(memref_shape(self.src))
        fill = self.pad.value.data if self.pad is not None else 0.0
        loads = scope_of(self.src) == "GM" or scope_of(self.dst) == "UB"
        stores = scope_of(self.dst) == "GM"
        windows: dict[tuple[Any, ...], tuple[Any, bool]] = {}

        def run(src: np.ndarray, *rest: Any) -> tuple[()]:
            dst = rest[rank]
            key = (*rest[:rank], *rest[rank + 1 :])
            cached = windows.get(key)
            if cached is None:
                extent = src.shape if stores else dst.shape
                found = window(extent, dst.shape, src.shape, rest[rank + 1 :], rest[:rank])
                whole = found is not None and all(
                    s.stop - s.start == n for s, n in zip(found[0], dst.shape, strict=True)
                )
                if len(windows) < 4096:
                    windows[key] = (found, whole)
            else:
                found, whole = cached
            if loads and not whole:
                dst.fill(fill)
            if found is not None:
                cast_into(dst, found[0], src[found[1]])
            return ()

        return run

    def batched_kernel(self, batched: Sequence[bool]) -> Kernel | None:
        rank = len(memref_shape(self.src))
        src_batched, dst_batched = batched[0], batched[rank + 1]
        stores = scope_of(self.dst) == "GM"
        single = self.kernel()

        def run(src: np.ndarray, *rest: Any) -> tuple[()]:
            src_offsets, dst, dst_offsets = rest[:rank], rest[rank], rest[rank + 1 :]
            count = next(len(a) for a, m in zip((src, *rest), batched, strict=True) if m)
            item = src.shape[src_batched:] if stores else dst.shape[dst_batched:]
            cut = copy_whole_windows(
                count, item, src, src_offsets, src_batched, dst, dst_offsets, dst_batched
            )
            copy_cut_items(single, (src, *rest), batched, cut)
            return ()

        return run


@irdl_op_definition
class CopyFlatOp(PathCopyOp):
    """``tile.copy_flat %src[%i] to %dst[%j] {count}``: ``count`` consecutive elements,
    whatever the buffers' shapes (a DMA moves bytes; a reshape of contiguous data is a
    flat copy). The run is cut where it leaves either buffer; a load fills the rest of the
    destination with zeros first."""

    name = "tile.copy_flat"
    src = operand_def(MemRefType)
    src_offset = operand_def(IndexType)
    dst = operand_def(MemRefType)
    dst_offset = operand_def(IndexType)
    count = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$src `[` $src_offset `]` `to` $dst `[` $dst_offset `]` attr-dict "
        "`:` type($src) `to` type($dst)"
    )

    def __init__(self, src, src_offset, dst, dst_offset, count: int):
        super().__init__(
            operands=[src, src_offset, dst, dst_offset],
            properties={"count": IntegerAttr(count, i64)},
        )

    def verify_(self) -> None:
        super().verify_()
        if self.count.value.data < 1:
            raise VerifyException(f"'{self.name}': count must be positive")

    def moved_bytes(self) -> int:
        t = self.src.type
        assert isinstance(t, MemRefType)
        return self.count.value.data * buffer_bytes(t) // max(1, prod(memref_shape(t)))

    def kernel(self) -> Kernel:
        count = self.count.value.data
        loads = scope_of(self.src) == "GM" or scope_of(self.dst) == "UB"

        def run(src: np.ndarray, i: int, dst: np.ndarray, j: int) -> tuple[()]:
            flat_src, flat_dst = src.reshape(-1), dst.reshape(-1)
            if loads:
                dst.fill(0)
            found = window((count,), flat_dst.shape, flat_src.shape, (j,), (i,))
            if found is not None:
                flat_dst[found[0]] = flat_src[found[1]]
            return ()

        return run


@irdl_op_definition
class Load5hdOp(TileOp):
    """``tile.load_5hd %src[n, c, h, w] to %dst``: an NCHW window of GM into an NC1HWC0
    buffer ``(N, C1, H, W, C0)`` on chip — the DMA does TransData's work on the way in.
    Positions outside ``src`` read as ``pad`` (default 0; channels beyond C always as 0).
    A 3-D ``src`` is CHW (N = 1)."""

    name = "tile.load_5hd"
    PIPE: ClassVar[str] = "MTE2"
    src = operand_def(MemRefType)
    offsets = var_operand_def(IndexType)
    dst = operand_def(MemRefType)
    pad = opt_prop_def(FloatAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$src `[` $offsets `]` `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def __init__(self, src, offsets, dst, pad: float | None = None):
        props = {} if pad is None else {"pad": FloatAttr(pad, f64)}
        super().__init__(operands=[src, offsets, dst], properties=props)

    def verify_(self) -> None:
        require_scope(self, self.src, ("GM",), "the source")
        require_scope(self, self.dst, ("L1", "UB"), "the destination")
        if len(memref_shape(self.src)) not in (3, 4) or len(memref_shape(self.dst)) != 5:
            raise VerifyException(f"'{self.name}': moves an NCHW window into a 5-D buffer")
        if len(self.offsets) != 4:
            raise VerifyException(f"'{self.name}': expected 4 offsets (n, c, h, w)")

    def moved_bytes(self) -> int:
        return buffer_bytes(self.dst)

    def cost(self, hw: HardwareModel) -> int:
        # Channel-strided reads: at most C0 contiguous elements per burst.
        return dma_cycles(hw, f"GM->{scope_of(self.dst)}", 2 * self.moved_bytes())

    def kernel(self) -> Kernel:
        fill = self.pad.value.data if self.pad is not None else 0.0

        def run(src: np.ndarray, n: int, c: int, h: int, w: int, dst: np.ndarray) -> tuple[()]:
            nn, c1, hh, ww, c0 = dst.shape
            if src.ndim == 3:
                src = src.reshape(1, *src.shape)
            staged = np.full((nn, c1 * c0, hh, ww), fill, dst.dtype)
            staged[:, max(0, src.shape[1] - c) :] = 0  # channels past C: padding lanes, zero
            found = window(staged.shape, staged.shape, src.shape, [0, 0, 0, 0], [n, c, h, w])
            if found is not None:
                staged[found[0]] = src[found[1]]
            dst[...] = staged.reshape(nn, c1, c0, hh, ww).transpose(0, 1, 3, 4, 2)
            return ()

        return run


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

    def cost(self, hw: HardwareModel) -> int:
        return dma_cycles(hw, f"{scope_of(self.src)}->GM", 2 * self.moved_bytes())

    def kernel(self) -> Kernel:
        end = None if self.channel_end is None else self.channel_end.value.data

        def run(src: np.ndarray, dst: np.ndarray, n: int, c: int, h: int, w: int) -> tuple[()]:
            nn, c1, hh, ww, c0 = src.shape
            planar = src.transpose(0, 1, 4, 2, 3).reshape(nn, c1 * c0, hh, ww)
            target = dst if end is None else dst[:, :end]
            found = window(planar.shape, planar.shape, target.shape, [0, 0, 0, 0], [n, c, h, w])
            if found is not None:
                cast_into(target, found[1], planar[found[0]])
            return ()

        return run


DMA_OPS = (CopyOp, CopyFlatOp, Load5hdOp, Store5hdOp)
