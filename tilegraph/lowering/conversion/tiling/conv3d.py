"""The 3-D convolution strategy of cube kernels: ``graph.conv`` on NDC1HWC0 data and a
FRACTAL_Z_3D weight (GE's Conv3D layouts), as a sum of 2-D convolutions over depth taps.

NDC1HWC0 ``[N, D, C1, H, W, C0]`` is, byte for byte, ``[N, D·C1, H, W, C0]`` (the depth
planes' C1 slices one after the other) and ``[N·D_out, C1, H, W, C0]`` for the output: the
NC1HWC0 tensor of its depth planes; FRACTAL_Z_3D ``[KD·C1·KH·KW, N1, 16, C0]`` stacks the
FRACTAL_Z weights of the ``KD`` depth taps along K (its K order is (kd, c1, kh, kw)). So
the kernel addresses the data, the output and the bias through those views
(``tile.strided_view``, row-major: no byte moves) and runs the 2-D machinery of
:mod:`.conv` (its tiles, :mod:`.conv_tiles`; its img2col ``load3d``; its way out,
:mod:`.conv_output`) per output depth: output tile (n, d_out, rows, columns, channels)
accumulates, for each depth tap ``kd``, the 2-D convolution of input plane
``d_out·sd − pd + kd·dd`` with tap ``kd``'s FRACTAL_Z weight into the same L0C (``mmad``'s
``first`` flag only on the first tap's first K step). A tap in the depth padding would read
a plane outside the data (zeros: no contribution), so where some window reaches the
padding the tap loop runs only the taps that read a plane (:func:`valid_taps`, computed in
the kernel from ``d_out``: :func:`tap_bounds`); at least one, so that a plane whose window
lies wholly in the padding still starts its accumulator (on zeros). That loop's trip count
varies with the output plane (``tile.varying_trips``): ``inject-sync`` then proves the
flags it drops on the full walk of every block, not its short walk. Bias and ReLU leave
through fixpipe as in 2-D.

Grouped and depthwise 3-D convolutions run as the 2-D ones do (:func:`.conv_tiles.group_blocks`):
FRACTAL_Z_3D stores a grouped filter by the groups rule, blocks of ``e`` groups (each a
block-diagonal filter) outermost along K, each block's depth taps inside it; the kernel
runs one loop nest per block (its input C1 slab, its weight rows and columns, its output
C1 slab; the last block's lanes past C are cut by ``load3d``'s valid channels).

Not here (the kernel stays whole on the host side of the split, with the reason): a
TransData prologue (NCDHW -> NDC1HWC0 is a kernel of its own,
:mod:`.transdata`) and epilogues other than ReLU.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.nn import ConvOp
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import CopyOp, Load2dOp, MmadOp, StridedViewOp
from tilegraph.dialects.tile.workspace import strided_memref
from tilegraph.lowering.analysis.kernel_attrs import VARYING_TRIPS_ATTR
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.conv import chunk_reduction, load3d_step
from tilegraph.lowering.conversion.tiling.conv_output import conv_output
from tilegraph.lowering.conversion.tiling.conv_tiles import (
    ConvGeometry,
    chosen_conv_tiles,
    group_blocks,
)
from tilegraph.lowering.conversion.tiling.cube import (
    FRACTAL,
    CubeKernel,
    Epilogue,
    F,
    accumulator_type,
)


@dataclass(frozen=True)
class DepthTaps:
    """The depth axis of a 3-D convolution: ``depth`` input planes, ``out_depth`` output
    planes, ``taps`` kernel taps of stride ``stride``, dilation ``dilation`` and
    ``pad_front`` planes of padding before the first."""

    depth: int
    out_depth: int
    taps: int
    stride: int
    dilation: int
    pad_front: int


def conv3d_geometry(conv: ConvOp, data: TensorType) -> tuple[ConvGeometry, DepthTaps] | str:
    """The 2-D geometry of one depth plane (its batch: the ``N · D_out`` output planes)
    and the depth taps of a 3-D convolution, or why the strategy cannot run it."""
    x, w, out = data, tensor_of(conv.weight), tensor_of(conv.output)
    if x.storage_format != F.NDC1HWC0 or out.storage_format != F.NDC1HWC0:
        return "3-D convolution data not in NDC1HWC0 (run the format engine: -p O2)"
    if w.storage_format != F.FRACTAL_Z_3D:
        return "3-D convolution weight not in FRACTAL_Z_3D"
    if conv.bias is not None:
        bias = tensor_of(conv.bias)
        if bias.storage_format != F.NDC1HWC0 or len(bias.storage_shape) != 6:
            return "3-D convolution bias not in NDC1HWC0"
    n, d, c1, h, wd, c0 = (int(v) for v in x.storage_shape)
    _, od, oc1, oh, ow, _ = (int(v) for v in out.storage_shape)
    _, _, kd, kh, kw = (int(v) for v in w.origin_shape)
    depth, rows, cols = window(type(conv), conv.properties, [d, h, wd], [kd, kh, kw])
    channels = int(x.origin_shape[1])
    # FRACTAL_Z_3D's K axis: group blocks outermost, then the depth taps (kd, c1, kh, kw)
    grouping = group_blocks(conv.attr("group"), w, c0, c1, channels, kd * kh * kw)
    if isinstance(grouping, str):
        return f"3-D: {grouping}"
    blocks, block_c1, block_n1, block_channels, steps = grouping
    taps = DepthTaps(d, od, kd, depth.stride, depth.dilation, depth.begin)
    plane = ConvGeometry(
        n * od, c1, h, wd, c0, oc1, oh, ow, (kh, kw), (rows.stride, cols.stride),
        (rows.dilation, cols.dilation), rows.begin, cols.begin,
        blocks, block_c1, block_c1 * kh * kw, block_n1, block_channels, channels,
        *steps, c0, False,
    )  # fmt: skip
    return plane, taps


def taps_in_padding(taps: DepthTaps) -> bool:
    """Some output plane's depth window reaches into the padding (a tap reads no plane)."""
    last_start = (taps.out_depth - 1) * taps.stride - taps.pad_front
    return taps.pad_front > 0 or last_start + (taps.taps - 1) * taps.dilation >= taps.depth


def valid_taps(taps: DepthTaps, d_out: int) -> range:
    """The depth taps of output plane ``d_out`` that read a data plane (input plane
    ``d_out·stride − pad_front + kd·dilation`` in ``[0, depth)``), at least one (a plane
    whose window lies wholly in the padding runs one tap of zeros: its accumulator must
    start). What :func:`tap_bounds` computes in the kernel."""
    start = d_out * taps.stride - taps.pad_front
    lo = min(max(0, -(start // taps.dilation)), taps.taps - 1)  # ceil(-start / dilation)
    hi = min(taps.taps, (taps.depth - 1 - start) // taps.dilation + 1)
    return range(lo, max(hi, lo + 1))


def tap_bounds(
    b: KernelBuilder, taps: DepthTaps, d_out: SSAValue
) -> tuple[SSAValue | None, SSAValue | None]:
    """The first and the end of output plane ``d_out``'s taps that read data
    (:func:`valid_taps`), computed in the kernel; (None, None) when no window reaches the
    padding (every plane runs every tap: a loop of constant bounds)."""
    if not taps_in_padding(taps):
        return None, None
    start = b.affine(d_out, taps.stride, -taps.pad_front)
    dilation = b.index(taps.dilation)
    # lo = clamp(ceil(-start / dilation), 0, taps - 1)
    neg = b.add(arith.SubiOp(b.index(0), start)).results[0]
    lo = b.add(arith.CeilDivSIOp(neg, dilation)).results[0]
    lo = b.add(arith.MaxSIOp(lo, b.index(0))).results[0]
    lo = b.add(arith.MinSIOp(lo, b.index(taps.taps - 1))).results[0]
    # hi = max(min(floor((depth - 1 - start) / dilation) + 1, taps), lo + 1)
    rest = b.add(arith.SubiOp(b.index(taps.depth - 1), start)).results[0]
    hi = b.add(arith.FloorDivSIOp(rest, dilation)).results[0]
    hi = b.add(arith.MinSIOp(b.affine(hi, 1, 1), b.index(taps.taps))).results[0]
    hi = b.add(arith.MaxSIOp(hi, b.affine(lo, 1, 1))).results[0]
    return lo, hi


@contextmanager
def tap_loop(
    b: KernelBuilder, taps: DepthTaps, first: SSAValue | None, end: SSAValue | None
) -> Iterator[SSAValue]:
    """The loop over the depth taps: every tap (constant bounds), or ``[first, end)``."""
    if first is None or end is None:
        with b.loop(taps.taps, 1, "kd") as kd:
            yield kd
        return
    with b.loop_over(first, end, b.index(1), "kd") as kd:
        loop = kd.owner.parent_op()
        assert loop is not None
        loop.attributes[VARYING_TRIPS_ATTR] = UnitAttr()
        yield kd


def plane_view(b: KernelBuilder, arg: SSAValue, shape: list[int]) -> SSAValue:
    """``arg`` (a row-major GM argument) addressed as ``shape`` of the same elements."""
    strides = [prod(shape[i + 1 :]) for i in range(len(shape))]
    view = b.hoist(StridedViewOp(arg, strided_memref(arg.type, shape, strides)))
    return view.results[0]


def emit_conv3d(body: KernelBody, kernel: CubeKernel, b: KernelBuilder) -> str | None:
    conv = kernel.anchor
    assert isinstance(conv, ConvOp)
    if kernel.prologue:
        return "a cube prologue before a 3-D convolution"
    epilogue = Epilogue(body, kernel)
    if epilogue.chain is not None:
        return "a 3-D convolution epilogue other than ReLU"
    reason = epilogue.unsupported()
    if reason:
        return reason
    data_arg, weight_arg = body.source(conv.input), body.source(conv.weight)
    bias_arg = body.source(conv.bias) if conv.bias is not None else None
    if data_arg is None or weight_arg is None or (conv.bias is not None and bias_arg is None):
        return "convolution operands are not kernel inputs"
    geometry = conv3d_geometry(conv, tensor_of(conv.input))
    if isinstance(geometry, str):
        return geometry
    g, taps = geometry
    element = tensor_of(conv.input).element_type
    out_element = tensor_of(conv.output).element_type
    chosen = chosen_conv_tiles(b, g, element, epilogue, out_element, taps.taps)
    if isinstance(chosen, str):
        return chosen
    tiles, stationary = chosen
    if b.dry_run:
        return None
    batch = g.batch // taps.out_depth
    data = plane_view(b, data_arg, [batch, taps.depth * g.c1_in, g.height, g.width, g.c0])
    out_arg = plane_view(b, epilogue.out_arg, [g.batch, g.out_c1, g.out_h, g.out_w, FRACTAL])
    bias = None
    if bias_arg is not None and conv.bias is not None:
        bias_view = plane_view(b, bias_arg, [1, g.out_c1, 1, 1, FRACTAL])
        bias = (bias_view, tensor_of(conv.bias).element_type)
    # One C1 chunk of all the channels when the window holds them: the chunked reduction
    # then is the whole one, loaded per tap.
    chunked = replace(tiles, kc1=tiles.kc1 or g.block_c1)
    m1 = tiles.m1(g)
    cube = b.cube_element(element)
    fmap_shape = [1, chunked.window_c1(g), tiles.window_rows(g), tiles.window_cols(g), g.c0]
    fmap = b.buffer(fmap_shape, cube, "L1", "fmap_l1")
    w_rows = taps.taps * g.block_k1 if stationary else tiles.k1
    w_l1 = b.buffer([w_rows, tiles.n1, FRACTAL, g.c0], cube, "L1", "w_l1")
    a_l0 = b.buffer([m1, tiles.k1, FRACTAL, g.c0], cube, "L0A", "a_l0a")
    b_l0 = b.buffer([tiles.k1, tiles.n1, FRACTAL, g.c0], cube, "L0B", "b_l0b")
    c_l0 = b.buffer([tiles.n1, m1, FRACTAL, FRACTAL], accumulator_type(element), "L0C", "c_l0c")
    width = tiles.tile_width(g)
    output = conv_output(
        b, epilogue, [1, tiles.n1, tiles.rows, width, FRACTAL], out_element,
        rows=tiles.rows, cols=tiles.cols, bias=bias, scale_arg=None,
    )  # fmt: skip
    zero = b.index(0)

    def block_lanes(blk: SSAValue) -> SSAValue | None:
        """Valid input lanes of group block ``blk`` (None: all of a block's): the last
        block is ragged when the blocks' channels overrun the tensor's."""
        if g.blocks * g.block_channels <= g.in_channels:
            return None
        rest = b.add(arith.SubiOp(b.index(g.in_channels), b.affine(blk, g.block_channels)))
        return b.add(arith.MinSIOp(rest.results[0], b.index(g.block_channels))).results[0]

    def output_tile(nd: SSAValue, blk: SSAValue, oh: SSAValue, ow: SSAValue, co: SSAValue) -> None:
        n_iv, d_out = nd, zero
        if taps.out_depth > 1:
            out_depth = b.index(taps.out_depth)
            n_iv = b.add(arith.FloorDivSIOp(nd, out_depth)).results[0]
            d_out = b.add(arith.RemSIOp(nd, out_depth)).results[0]
        valid = block_lanes(blk)
        block_c1 = b.affine(blk, g.in_c1_step)  # the block's first C1 in a plane
        w_block = b.affine(blk, g.w_k_step)  # the block's first weight row (K fractal)
        w_col = b.add_index(b.affine(blk, g.w_n_step), co)
        first_tap, taps_end = tap_bounds(b, taps, d_out)
        with tap_loop(b, taps, first_tap, taps_end) as kd:
            d_in = b.add_index(
                b.affine(d_out, taps.stride, -taps.pad_front), b.affine(kd, taps.dilation)
            )
            # the plane's (and block's) first C1 in the merged D·C1 axis
            plane_c1 = b.add_index(b.affine(d_in, g.c1_in), block_c1)
            w_tap = b.affine(kd, g.block_k1)  # the tap's first row within the block
            # the accumulator starts at the first tap that runs
            k_origin = w_tap
            if first_tap is not None:
                k_origin = b.add(arith.SubiOp(kd, first_tap)).results[0]
                k_origin = b.affine(k_origin, g.block_k1)

            def load_chunk(kc: SSAValue) -> None:
                h_start = b.affine(oh, g.strides[0], -g.pad_top)
                w_start = zero if tiles.cols is None else b.affine(ow, g.strides[1], -g.pad_left)
                c1_at = b.add_index(plane_c1, kc)
                b.add(CopyOp(data, [n_iv, c1_at, h_start, w_start, zero], fmap, [zero] * 5))

            def k_step(k: SSAValue, k_tap: SSAValue, first: SSAValue, lanes) -> None:
                b.add(load3d_step(fmap, k, a_l0, g, tiles, lanes))
                w_row = b.add_index(w_tap, k_tap)
                if stationary:
                    b.add(Load2dOp(w_l1, w_row, zero, b_l0, "copy"))
                else:
                    w_at = [b.add_index(w_block, w_row), w_col, zero, zero]
                    b.add(CopyOp(weight_arg, w_at, w_l1, [zero] * 4))
                    b.add(Load2dOp(w_l1, zero, zero, b_l0, "copy"))
                b.add(MmadOp(a_l0, b_l0, c_l0, first))

            chunk_reduction(b, g, chunked, valid, load_chunk, k_step, k_origin=k_origin)
        out_c1 = b.add_index(b.affine(blk, g.out_c1_step), co)
        output.write(c_l0, out_arg, [nd, out_c1, oh, ow, zero])

    def load_bias(blk: SSAValue, co: SSAValue) -> None:
        output.load_bias(b.add_index(b.affine(blk, g.out_c1_step), co))

    with b.loop(g.batch, 1, "nd", True) as nd, b.loop(g.blocks, 1, "blk", True) as blk:
        if stationary:
            with b.loop(g.block_n1, tiles.n1, "co", True) as co:
                w_at = [b.affine(blk, g.w_k_step), b.add_index(b.affine(blk, g.w_n_step), co)]
                b.add(CopyOp(weight_arg, [*w_at, zero, zero], w_l1, [zero] * 4))
                load_bias(blk, co)
                with (
                    b.loop(g.out_h, tiles.rows, "oh", True) as oh,
                    b.loop(g.out_w, width, "ow", True) as ow,
                ):
                    output_tile(nd, blk, oh, ow, co)
        else:
            with (
                b.loop(g.out_h, tiles.rows, "oh", True) as oh,
                b.loop(g.out_w, width, "ow", True) as ow,
                b.loop(g.block_n1, tiles.n1, "co", True) as co,
            ):
                load_bias(blk, co)
                output_tile(nd, blk, oh, ow, co)
    b.tiles = (
        g.batch
        * g.blocks
        * -(-g.out_h // tiles.rows)
        * -(-g.out_w // width)
        * -(-g.block_n1 // tiles.n1)
    )
    return None
