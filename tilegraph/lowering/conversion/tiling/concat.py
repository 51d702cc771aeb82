"""Concatenation as DMA into the output's slices, with the inputs' and output's fused ops.

A concat kernel runs one loop nest per concatenated input. Each nest tiles that input's
region of the output: it computes the input (its fused producers, e.g. a ReLU or a TransData
from NC1HWC0), applies the fused ops after the concat to that region (their other operands,
such as per-channel parameters, are read at the region's place in the output), and stores
the tile at the input's offset along the concat axis. An NCHW output takes any channel
offset (``tile.store_5hd`` writes channels); an NC1HWC0 one needs offsets on C0 blocks.
Tiles along the concat axis divide their region (:func:`within_region`), so no tile
stores past its region's end, and a 5HD tile stored into an NCHW output drops the channels
past its region's end (``channel_end`` of ``tile.store_5hd``): a region whose channel count
stops inside a C0 block would otherwise store that block's padding lanes over the next
region's first channels. Program order overwrites them, but the blocks of a multi-core
launch run the nests' tiles in no fixed order (``split-cores`` shares every nest out), so a
block may store into a region after another block wrote it.

A kernel of several concats, or of one this form refuses (its inputs made through slices
or views), is tiled as a concat tree instead (:mod:`.concat_tree`): each input's boxes
stored into strided views of the output.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.tile import memref_shape
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats import Format
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.concat_tree import emit_concat_tree_kernel
from tilegraph.lowering.conversion.tiling.concat_tree import producers as producers_of
from tilegraph.lowering.conversion.tiling.data_movement import open_nest
from tilegraph.lowering.conversion.tiling.elementwise import (
    Chain,
    TilePlan,
    choose_tile,
    tile_loops,
)
from tilegraph.lowering.conversion.tiling.nhwc_out import (
    ChannelsLast,
    concat_region,
    emit_channels_last,
)

CONCAT_LEAST_SHARE_BYTES = 2048
"""The least data a concat tile keeps when it shrinks to occupy more cores: CANN's Concat
tiling splits a core's columns further only while its tile holds at least twice
``MIN_RESERVED_SIZE`` (2 KiB) of data (docs/hardware.md, "Data movement over the cores")."""


def within_region(plan: TilePlan, along: int) -> TilePlan:
    """``plan`` with tiles along the concat axis that divide the region: a ragged last tile
    would store its whole window past the region's end. The next region overwrites that in
    program order, but the blocks of a multi-core launch run the nests' tiles in no fixed
    order, so a block may store past its region after another block wrote the next one."""
    if plan.axis != along or not plan.shape or plan.shape[along] % plan.size == 0:
        return plan
    size = max(d for d in range(1, plan.size + 1) if plan.shape[along] % d == 0)
    return TilePlan(plan.shape, plan.axis, size)


def emit_concat_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """One concat with its inputs' and output's fused ops (module docstring), else a tree
    of concats and views (:mod:`.concat_tree`); returns why not (None when emitted)."""
    concats = [op for op in body.ops if isinstance(op, ConcatOp)]
    reason = _emit_one_concat(body, b, concats) if len(concats) == 1 else None
    if len(concats) == 1 and reason is None:
        return None
    least = CONCAT_LEAST_SHARE_BYTES // element_bytes(tensor_of(body.writes[0][0]).element_type)
    tree = emit_concat_tree_kernel(body, b, least)
    return tree if tree is None or reason is None else reason


def _emit_one_concat(body: KernelBody, b: KernelBuilder, concats: list[ConcatOp]) -> str | None:
    if len(body.writes) != 1:
        return "a concat kernel with several outputs"
    concat = concats[0]
    index = body.ops.index(concat)
    before, after = body.ops[:index], body.ops[index + 1 :]
    value, out_arg = body.writes[0]
    result = concat.concat_result
    out_type = tensor_of(result)
    rank = out_type.rank
    axis = concat.attr("axis") % rank
    fmt = out_type.storage_format
    if fmt not in (out_type.origin_format, Format.ND) and not (
        fmt == Format.NC1HWC0 and out_type.origin_format == Format.NCHW
    ):
        return f"a concat in {fmt} of an {out_type.origin_format} tensor"
    after_inputs = {v for op in after for v in op.operands}
    regions: list[tuple[SSAValue, Chain | ChannelsLast, int]] = []
    offset = 0
    for operand in concat.inputs:
        extent = int(tensor_of(operand).origin_shape[axis])
        producers = producers_of(operand, before)
        channels_last = None if after else concat_region(body, producers, axis, b)
        if isinstance(channels_last, ChannelsLast):
            regions.append((operand, channels_last, offset))
            offset += extent
            continue
        ops = [*producers, *after]
        chain = Chain(
            body,
            ops,
            tuple(int(d) for d in tensor_of(operand).storage_shape),
            aliases={result: operand},
            space_value=operand,
        )
        if operand not in {r for op in chain.ops for r in op.results} and (
            operand not in chain.inputs
        ):
            chain.inputs.append(operand)  # copied as it is
        # Along C, a 5HD tile space steps in C1 blocks; along N, H or W its axes are NCHW's.
        channels = axis == 1 and (chain.space == "5hd" or fmt == Format.NC1HWC0)
        unit = chain.out_shape[-1] if channels else 1
        shifted = [v for v in chain.inputs if v in after_inputs and v is not result]
        full = list(chain.out_shape)
        if channels:
            full[1] = -(-int(out_type.origin_shape[1]) // chain.out_shape[-1])
        else:
            full[axis] = int(out_type.origin_shape[axis])
        reason = (
            chain.set_shift(offset, axis, unit, shifted, full, extent if channels else None)
            or chain.unsupported()
        )
        if reason:
            return reason
        if offset % unit and not (chain.space == "5hd" and len(memref_shape(out_arg)) == 4):
            return "a concat offset inside a C0 block of an NC1HWC0 output"
        regions.append((operand, chain, offset))
        offset += extent
    plans: list[TilePlan | None] = []
    least = CONCAT_LEAST_SHARE_BYTES // element_bytes(out_type.element_type)
    for _, chain, _ in regions:
        if isinstance(chain, ChannelsLast):
            plans.append(None)  # planned by :func:`~.nhwc_out.concat_region`
            continue
        plan = choose_tile(
            chain.out_shape,
            lambda t, c=chain: c.ub_bytes(b.hw, t),
            b.ub_budget(),
            depth=b.split_depth(),
            cores=b.hw.vector_cores,
            least=least,
        )
        if plan is None:
            return "no tile of a concat input fits UB"
        plans.append(within_region(plan, axis))
    if b.dry_run:
        return None
    total = 0
    for (operand, chain, start), plan in zip(regions, plans, strict=True):
        if isinstance(chain, ChannelsLast):
            rows = int(out_type.origin_shape[axis])
            emit_channels_last(b, chain, out_arg, rows, start, len(regions) > 1)
            total += chain.count()
            continue
        assert plan is not None
        chain.allocate(b, plan.tile_shape())
        stack, offsets = tile_loops(b, plan)
        open_nest(b, stack, len(regions) > 1 and plan.count() == 1)
        with stack:
            for v in chain.input_tiles:
                chain.load(b, v, offsets)
            tiles = chain.compute(b, {}, dict(chain.input_tiles))
            written = value if value is not result else operand
            chain.store(b, tiles[written], out_arg, offsets)
        total += plan.count()
    b.tiles = total
    return None
