"""The convolution strategy of cube kernels (see :mod:`.cube` for the tiling scheme)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.quantized_cube import Int8ConvBase
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.tile import (
    CopyOp,
    GetValueOp,
    Load2dOp,
    Load3dOp,
    Load5hdOp,
    MmadOp,
)
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.conv_output import conv_output
from tilegraph.lowering.conversion.tiling.conv_tiles import (
    ConvGeometry,
    ConvTiles,
    chosen_conv_tiles,
    conv_geometry,
)
from tilegraph.lowering.conversion.tiling.cube import (
    FRACTAL,
    CubeKernel,
    Epilogue,
    F,
    accumulator_type,
    requantisation,
)


def _flat_bias_source(prologue: list[Operation], bias: SSAValue) -> bool:
    """Whether ``bias`` is converted in the prologue from a 1-D ``[C]`` tensor into
    NC1HWC0 (``reshape_type`` C): channel ``c`` sits at element ``c`` in both, so the
    conversion is the flat load of the channel tile (zeros past C)."""
    convert = next((op for op in prologue if op.results[0] is bias), None)
    if not isinstance(convert, TransDataOp):
        return False
    source, target = tensor_of(convert.input), tensor_of(convert.output)
    return (
        source.rank == 1
        and source.storage_format == source.origin_format
        and target.storage_format == F.NC1HWC0
        and target.element_type == source.element_type
    )


def emit_conv(body: KernelBody, kernel: CubeKernel, b: KernelBuilder) -> str | None:
    conv = kernel.anchor
    assert isinstance(conv, Conv2dOp | Int8ConvBase)
    # int8: the scale of each output channel rides with the bias into fixpipe (deq, or
    # requant to int8: then the multiplier)
    scale = conv.scale if isinstance(conv, Int8ConvBase) else None
    # int8 with a data zero point: the padding holds it (the copy's fill, load3d's pad),
    # a constant or read at run time (below)
    pad: int | SSAValue = int(conv.attr("pad_value")) if isinstance(conv, Int8ConvBase) else 0
    pad_arg = None
    if isinstance(conv, Int8ConvBase) and conv.pad_zero is not None:
        pad_arg = body.source(conv.pad_zero)
        if pad_arg is None:
            return "the run-time padding value is not a kernel input"
    epilogue = Epilogue(body, kernel)
    reason = epilogue.unsupported()
    if reason:
        return reason
    if requantisation(conv) is not None and epilogue.ops:
        return "an epilogue on a requantised (int8) convolution result"
    data_value = conv.input
    prologue = list(kernel.prologue)
    bias_value = conv.bias
    flat_bias = bias_value is not None and _flat_bias_source(prologue, bias_value)
    if flat_bias:
        # a run-time bias (int8: the zero point's term) converted from its [C] vector: the
        # same elements, so the load copies it flat (the padding lanes zero)
        assert bias_value is not None
        convert_bias = next(op for op in prologue if op.results[0] is bias_value)
        prologue.remove(convert_bias)
        bias_value = convert_bias.operands[0]
    convert = False
    if prologue:
        if (
            len(prologue) != 1
            or not isinstance(prologue[0], TransDataOp)
            or prologue[0].output is not data_value
        ):
            return "a cube prologue other than one TransData of the data (and of a [C] bias)"
        convert = True
        source = tensor_of(prologue[0].input)
        if source.storage_format != F.NCHW:
            return f"a {source.storage_format} -> {tensor_of(data_value).storage_format} prologue"
        data_arg = body.source(prologue[0].input)
    else:
        data_arg = body.source(data_value)
    weight_arg = body.source(conv.weight)
    bias_arg = body.source(bias_value) if bias_value is not None else None
    scale_arg = body.source(scale) if scale is not None else None
    if (
        data_arg is None
        or weight_arg is None
        or (conv.bias is not None and bias_arg is None)
        or (scale is not None and scale_arg is None)
    ):
        return "convolution operands are not kernel inputs"
    geometry = conv_geometry(conv, tensor_of(data_value))
    if isinstance(geometry, str):
        return geometry
    g = geometry
    element = tensor_of(conv.input).element_type
    out_element = tensor_of(conv.output).element_type
    chosen = chosen_conv_tiles(b, g, element, epilogue, out_element)
    if isinstance(chosen, str):
        return chosen
    tiles, stationary = chosen
    if b.dry_run:
        return None
    acc_type = accumulator_type(element)
    m1 = tiles.m1(g)
    cube = b.cube_element(element)
    fmap_shape = [1, tiles.window_c1(g), tiles.window_rows(g), tiles.window_cols(g), g.in_c0]
    fmap = b.buffer(fmap_shape, cube, "L1", "fmap_l1")
    w_rows = g.block_k1 if stationary else tiles.k1
    w_l1 = b.buffer([w_rows, tiles.n1, FRACTAL, g.c0], cube, "L1", "w_l1")
    a_l0 = b.buffer([m1, tiles.k1, FRACTAL, g.c0], cube, "L0A", "a_l0a")
    b_l0 = b.buffer([tiles.k1, tiles.n1, FRACTAL, g.c0], cube, "L0B", "b_l0b")
    c_l0 = b.buffer([tiles.n1, m1, FRACTAL, FRACTAL], acc_type, "L0C", "c_l0c")
    bias_type = tensor_of(conv.bias).element_type if conv.bias is not None else element
    out_tile = [1, tiles.n1, tiles.rows, tiles.tile_width(g), FRACTAL]
    output = conv_output(
        b, epilogue, out_tile, out_element, rows=tiles.rows, cols=tiles.cols,
        bias=None if bias_arg is None else (bias_arg, bias_type), scale_arg=scale_arg,
        requant=requantisation(conv), flat_bias=flat_bias,
    )  # fmt: skip
    zero = b.index(0)
    out_arg = epilogue.out_arg
    if pad_arg is not None:
        pad = read_scalar(b, pad_arg, "pad")
    fill = pad if isinstance(pad, SSAValue) else float(pad) if pad else None

    def load_fmap(
        n_iv: SSAValue, blk: SSAValue, oh: SSAValue, ow: SSAValue, kc: SSAValue | None = None
    ) -> None:
        """The input window of output tile (oh, ow) (C1 chunk ``kc``) into L1: top and
        bottom padding as zero rows; with width tiles, left and right padding as zero
        columns too (the load fills what lies outside the image)."""
        h_start = b.affine(oh, g.strides[0], -g.pad_top)
        in_c1 = b.affine(blk, g.in_c1_step)
        if kc is not None:
            in_c1 = b.add_index(in_c1, kc)
        w_start = zero if tiles.cols is None else b.affine(ow, g.strides[1], -g.pad_left)
        if convert:
            at = [n_iv, b.affine(in_c1, g.in_c0), h_start, w_start]
            b.add(Load5hdOp(data_arg, at, fmap, pad=fill))
        else:
            at = [n_iv, in_c1, h_start, w_start, zero]
            b.add(CopyOp(data_arg, at, fmap, [zero] * 5, fill))

    def load_weights(blk: SSAValue, co: SSAValue, k: SSAValue) -> None:
        w_row = b.add_index(b.affine(blk, g.w_k_step), k)
        w_col = b.add_index(b.affine(blk, g.w_n_step), co)
        b.add(CopyOp(weight_arg, [w_row, w_col, zero, zero], w_l1, [zero] * 4))

    def load_bias(blk: SSAValue, co: SSAValue) -> None:
        output.load_bias(b.add_index(b.affine(blk, g.out_c1_step), co))

    def output_tile(
        n_iv: SSAValue, blk: SSAValue, oh: SSAValue, ow: SSAValue, co: SSAValue
    ) -> None:
        valid = None
        if g.blocks * g.block_channels > g.in_channels:
            # The last group block is ragged: its slab's lanes past C are padding.
            rest = b.add(
                arith.SubiOp(b.index(g.in_channels), b.affine(blk, g.block_channels))
            ).results[0]
            valid = b.add(arith.MinSIOp(rest, b.index(g.block_channels))).results[0]

        def k_step(k: SSAValue, k_global: SSAValue, first: SSAValue, lanes) -> None:
            b.add(load3d_step(fmap, k, a_l0, g, tiles, lanes, pad))
            if stationary:
                b.add(Load2dOp(w_l1, k_global, zero, b_l0, "copy"))
            else:
                load_weights(blk, co, k_global)
                b.add(Load2dOp(w_l1, zero, zero, b_l0, "copy"))
            b.add(MmadOp(a_l0, b_l0, c_l0, first))

        if tiles.kc1 is None:
            b.accumulation(g.block_k1, tiles.k1, "k", lambda k, f: k_step(k, k, f, valid))
        else:
            chunk_reduction(b, g, tiles, valid, lambda kc: load_fmap(n_iv, blk, oh, ow, kc), k_step)
        out_c1 = b.add_index(b.affine(blk, g.out_c1_step), co)
        output.write(c_l0, out_arg, [n_iv, out_c1, oh, ow, zero])

    # With C1 chunks the feature map is loaded per chunk, inside the K reduction.
    whole_window = tiles.kc1 is None
    width = tiles.tile_width(g)  # one "ow" iteration (no loop) without width tiles
    with b.loop(g.batch, 1, "n", True) as n_iv, b.loop(g.blocks, 1, "blk", True) as blk:
        if stationary:
            with b.loop(g.block_n1, tiles.n1, "co", True) as co:
                load_weights(blk, co, zero)
                load_bias(blk, co)
                with (
                    b.loop(g.out_h, tiles.rows, "oh", True) as oh,
                    b.loop(g.out_w, width, "ow", True) as ow,
                ):
                    if whole_window:
                        load_fmap(n_iv, blk, oh, ow)
                    output_tile(n_iv, blk, oh, ow, co)
        else:
            with (
                b.loop(g.out_h, tiles.rows, "oh", True) as oh,
                b.loop(g.out_w, width, "ow", True) as ow,
            ):
                if whole_window:
                    load_fmap(n_iv, blk, oh, ow)
                with b.loop(g.block_n1, tiles.n1, "co", True) as co:
                    load_bias(blk, co)
                    output_tile(n_iv, blk, oh, ow, co)
    b.tiles = (
        g.batch
        * g.blocks
        * -(-g.out_h // tiles.rows)
        * -(-g.out_w // width)
        * -(-g.block_n1 // tiles.n1)
    )
    return None


def read_scalar(b: KernelBuilder, source: SSAValue, name: str) -> SSAValue:
    """The one element of the GM tensor ``source`` (an integer), read on the scalar unit
    once, before the kernel's loops (``tile.get_value`` of GM: a cube kernel has no UB)."""
    at = [b.index(0)] * len(memref_shape(source))
    value = b.add(GetValueOp(source, at)).results[0]
    value.name_hint = name
    return value


def chunk_reduction(
    b: KernelBuilder,
    g: ConvGeometry,
    tiles: ConvTiles,
    valid: SSAValue | None,
    load_chunk: Callable[[SSAValue], None],
    k_step: Callable[[SSAValue, SSAValue, SSAValue, SSAValue | None], None],
    k_origin: SSAValue | None = None,
) -> None:
    """The K reduction of a tile whose feature map comes in C1 chunks: per chunk of
    ``kc1`` C1 slices, ``load_chunk(kc)`` then its K steps, ``k_step(k in the chunk, k in
    the block, first, valid lanes of the chunk)``; ``first`` only on the first step of the
    first chunk (the accumulator starts once). ``k_origin``: where this reduction starts
    in the accumulator's sum (a 3-D convolution's later depth taps add to the earlier
    ones': ``first`` only where ``k_origin`` + k in the block is 0)."""
    assert tiles.kc1 is not None
    chunk_k = tiles.chunk_k1(g)
    with b.loop(g.block_c1, tiles.kc1, "kc") as kc:
        load_chunk(kc)
        # Lanes of the block's channels past this chunk's first C1 slice (a count past the
        # chunk's own lanes reads them all).
        block_lanes = valid if valid is not None else b.index(g.block_channels)
        lanes = b.add(arith.SubiOp(block_lanes, b.affine(kc, g.in_c0))).results[0]
        k_base = b.affine(kc, g.kernel[0] * g.kernel[1])
        with b.loop(chunk_k, tiles.k1, "k") as k:
            k_block = b.add_index(k_base, k)
            k_sum = k_block if k_origin is None else b.add_index(k_origin, k_block)
            # The sum's first K step (index arithmetic only: what the kernel walk reads).
            first = b.add(arith.CmpiOp(k_sum, b.index(0), "eq")).results[0]
            first.name_hint = "first"
            k_step(k, k_block, first, lanes)


def load3d_step(
    fmap: SSAValue,
    k: SSAValue,
    dst: SSAValue,
    g: ConvGeometry,
    tiles: ConvTiles,
    valid: SSAValue | None,
    pad: int | SSAValue = 0,
) -> Load3dOp:
    """The img2col of K step ``k`` of ``fmap`` (its padding read as ``pad``, a constant or
    a value read at run time). Width tiles
    hold their padding columns in the window already, so they load with no left padding,
    ``cols`` pixels a row."""
    return Load3dOp(
        fmap,
        k,
        dst,
        valid_channels=valid,
        kernel_shape=g.kernel,
        strides=g.strides,
        dilations=g.dilations,
        pad_left=g.pad_left if tiles.cols is None else 0,
        out_width=tiles.tile_width(g),
        channels=g.block_channels,
        c04=g.c04,
        pad_value=pad,
    )
