"""The scale and bias tiles of a normalisation kernel: per trailing dims or per channel.

Layer norm's ``scale`` / ``B`` have the normalised (trailing) dims' shape: their tile is
the input tile's trailing dims, at the tile's trailing offsets. Instance norm's are per
channel (dim 1 of ``[N, C, spatial...]``): their tile is the input tile with every dim but
the channel one (and NC1HWC0's C0 lanes) kept as 1, so a broadcast ``vmul`` / ``vadd``
applies it to the whole tile —

* a plain ``[C]`` parameter (NCHW / ND input) is loaded with one flat copy of the tile's
  channels, starting at the tile's channel offset (cut at the end of a ragged last tile);
* a parameter of the input's rank (``[1, C1, 1, 1, C0]`` beside an NC1HWC0 input) is a
  window copy at the tile's offsets in its non-unit dims.

Shared by the one-tile reductions (:mod:`.reduction`) and the chunked ones
(:mod:`.reduction_chunks`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from tilegraph.dialects.tile import CopyFlatOp, CopyOp, memref_shape
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder


def param_tile_shape(
    param_shape: Sequence[int], tile: Sequence[int], per_channel: bool
) -> list[int]:
    """The UB tile of a parameter shaped ``param_shape`` beside an input tile ``tile``."""
    if not per_channel:
        return list(tile[len(tile) - len(param_shape) :])
    if len(param_shape) == len(tile):
        return [t if p != 1 else 1 for p, t in zip(param_shape, tile, strict=True)]
    return [tile[1] if d == 1 else 1 for d in range(len(tile))]


def load_param(
    b: KernelBuilder,
    param: SSAValue,
    tile: SSAValue,
    offsets: Sequence[SSAValue],
    per_channel: bool,
) -> None:
    """Copy the part of ``param`` (GM) beside the input tile at ``offsets`` into ``tile``."""
    zero = b.index(0)
    shape = memref_shape(param)
    rank = len(shape)
    if not per_channel:
        b.add(CopyOp(param, list(offsets[len(offsets) - rank :]), tile, [zero] * rank))
    elif rank == len(offsets):
        at = [o if d != 1 else zero for o, d in zip(offsets, shape, strict=True)]
        b.add(CopyOp(param, at, tile, [zero] * rank))
    else:
        b.add(CopyFlatOp(param, offsets[1], tile, zero, memref_shape(tile)[1]))
