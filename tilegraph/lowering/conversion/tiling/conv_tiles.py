"""Convolution tiles: the geometry of a convolution kernel, the heuristic's tiles (whole
output rows, else width tiles and C1 chunks; spread over the cube cores) and the same
choices as tiling parameters (:func:`chosen_conv_tiles`). :mod:`.conv` emits the loops."""

from __future__ import annotations

from dataclasses import dataclass, replace

from xdsl.ir import Attribute

from tilegraph.cost_model.tile_costs import img2col_bytes_per_cycle
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.graph.quantized_cube import Int8ConvBase
from tilegraph.dialects.graph.windows import window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.formats.shape import group_plan
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.tuning_params import param_values, powers_of_two
from tilegraph.lowering.conversion.kernel_body import tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import (
    BASE_M,
    FRACTAL,
    Epilogue,
    F,
)


@dataclass(frozen=True)
class ConvGeometry:
    batch: int
    c1_in: int
    height: int
    width: int
    c0: int
    out_c1: int
    out_h: int
    out_w: int
    kernel: tuple[int, int]
    strides: tuple[int, int]
    dilations: tuple[int, int]
    pad_top: int
    pad_left: int
    blocks: int
    """Group blocks run one after the other (1 when not grouped)."""
    block_c1: int
    """Input C1 fractals of one block."""
    block_k1: int
    """K fractals of one block: block_c1 · kh · kw (C04: ceil(4 · kh · kw, c0))."""
    block_n1: int
    """Output channel fractals of one block."""
    block_channels: int
    """Input channels of one block (the valid lanes of its slab)."""
    in_channels: int
    """Input channels of the whole tensor."""
    in_c1_step: int
    out_c1_step: int
    w_k_step: int
    w_n_step: int
    """Per block: where its input slab, output slab and weight fractals start."""
    in_c0: int
    """Lanes of the feature map's C0 axis: ``c0``, or 4 for small-channel data."""
    c04: bool
    """Small-channel (NC1HWC0_C04 data, FRACTAL_Z_C04 weight): K = (kh, kw, c) over 4
    channels, ``block_k1 = ceil(4·kh·kw, c0)`` fractals that each mix kernel positions."""


def conv_geometry(conv: Conv2dOp | Int8ConvBase, data: TensorType) -> ConvGeometry | str:
    x, w, out = data, tensor_of(conv.weight), tensor_of(conv.output)
    c04 = x.storage_format == F.NC1HWC0_C04
    if x.storage_format not in (F.NC1HWC0, F.NC1HWC0_C04) or out.storage_format != F.NC1HWC0:
        return "convolution data not in NC1HWC0 (run the format engine: -p O2)"
    if w.storage_format != (F.FRACTAL_Z_C04 if c04 else F.FRACTAL_Z):
        return f"convolution weight not in {'FRACTAL_Z_C04' if c04 else 'FRACTAL_Z'}"
    if c04 and conv.attr("group") != 1:
        return "a grouped convolution on small-channel (C04) data"
    if conv.bias is not None:
        b = tensor_of(conv.bias)
        if b.storage_format != F.NC1HWC0 or len(b.storage_shape) != 5:
            return "convolution bias not in NC1HWC0"
    n, c1, h, wd, in_c0 = (int(d) for d in x.storage_shape)
    c0 = int(w.storage_shape[3])  # the cube's lanes (C04 data has 4, its weight c0)
    _, oc1, oh, ow, _ = (int(d) for d in out.storage_shape)
    kh, kw = (int(d) for d in w.origin_shape[2:])
    axes = window(type(conv), conv.properties, [h, wd], [kh, kw])
    grouping = group_blocks(conv.attr("group"), w, c0, c1, int(x.origin_shape[1]), kh * kw)
    if isinstance(grouping, str):
        return grouping
    blocks, block_c1, block_n1, block_channels, steps = grouping
    block_k1 = int(w.storage_shape[0]) if c04 else block_c1 * kh * kw
    return ConvGeometry(
        n, c1, h, wd, c0, oc1, oh, ow, (kh, kw),
        (axes[0].stride, axes[1].stride), (axes[0].dilation, axes[1].dilation),
        axes[0].begin, axes[1].begin,
        blocks, block_c1, block_k1, block_n1, block_channels,
        int(x.origin_shape[1]), *steps, in_c0, c04,
    )  # fmt: skip


GroupBlocks = tuple[int, int, int, int, tuple[int, int, int, int]]
"""(blocks, block_c1, block_n1, block_channels, (in_c1_step, out_c1_step, w_k_step,
w_n_step)): see :class:`ConvGeometry`."""


def group_blocks(
    groups: int, w: TensorType, c0: int, c1: int, channels: int, positions: int
) -> GroupBlocks | str:
    """How a convolution's groups run on the cube: one block of all channels when not
    grouped; by FRACTAL_Z's (or FRACTAL_Z_3D's) groups rule, blocks of ``e`` groups whose
    block-diagonal filters are stacked along K (each ``block_c1 · positions`` fractals,
    ``positions`` the weight's kernel positions: kh·kw, or kd·kh·kw in 3-D); or, for a
    dense filter (a storage type without groups) whose groups align to C0 and 16, one block
    per group reading all K rows and its own output columns. Or why none of these apply.
    ``c1`` and ``channels``: the data's C1 fractals and channels."""
    m, cg = (int(d) for d in w.origin_shape[:2])
    k_total, n1_w = int(w.storage_shape[0]), int(w.storage_shape[1])
    if groups == 1:
        return 1, c1, n1_w, channels, (0, 0, 0, 0)
    if w.groups.data == groups:
        plan = group_plan(m, cg, c0, groups)
        if plan is None or plan.enlarge is None:
            return "grouped convolution whose weight ignores groups"
        e = plan.enlarge
        blocks = plan.blocks or 1
        if blocks > 1 and ((cg * e) % c0 or (plan.n_per_group * e) % FRACTAL):
            return "grouped convolution with group blocks not aligned to C0"
        block_c1 = k_total // (blocks * positions)
        steps = (cg * e // c0, plan.n_per_group * e // FRACTAL, block_c1 * positions, 0)
        return blocks, block_c1, n1_w, cg * e, steps
    per_group = m // groups
    if cg % c0 or per_group % FRACTAL:
        return "grouped convolution with groups not aligned to C0 (weight without groups)"
    block_c1, block_n1 = cg // c0, per_group // FRACTAL
    return groups, block_c1, block_n1, cg, (block_c1, block_n1, 0, block_n1)


@dataclass(frozen=True)
class ConvTiles:
    """Output tile ``rows`` x ``cols`` pixels x ``n1`` channel fractals, K in steps of
    ``k1`` fractals. ``cols`` None: whole output rows (the feature-map window spans the
    input width, Load3D adds the left/right padding); else the output width is cut in
    tiles of ``cols`` columns (width tiling). ``kc1`` None: a tile's window holds all of
    its block's input C1 in L1; else it is loaded ``kc1`` C1 slices at a time, one K chunk
    of ``kc1 · kh · kw`` fractals each (``kc1`` divides the block's C1)."""

    rows: int
    n1: int
    k1: int
    cols: int | None = None
    kc1: int | None = None

    def tile_width(self, g: ConvGeometry) -> int:
        """Output pixels per tile row."""
        return g.out_w if self.cols is None else self.cols

    def m1(self, g: ConvGeometry) -> int:
        return -(-(self.rows * self.tile_width(g)) // FRACTAL)

    def window_rows(self, g: ConvGeometry) -> int:
        return (self.rows - 1) * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1

    def window_cols(self, g: ConvGeometry) -> int:
        """Input columns of a tile's window: the whole input row, or the columns (halo and
        padding included) that ``cols`` output columns read."""
        if self.cols is None:
            return g.width
        return (self.cols - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1] + 1

    def window_c1(self, g: ConvGeometry) -> int:
        return g.block_c1 if self.kc1 is None else self.kc1

    def chunk_k1(self, g: ConvGeometry) -> int:
        """K fractals of one feature-map load: the block's, or one C1 chunk's."""
        return g.block_k1 if self.kc1 is None else self.kc1 * g.kernel[0] * g.kernel[1]

    def fmap_bytes(self, g: ConvGeometry, element_bytes: int) -> int:
        return (
            self.window_c1(g) * self.window_rows(g) * self.window_cols(g) * g.in_c0 * element_bytes
        )


def balanced(extent: int, tile: int) -> int:
    """The smallest tile that covers ``extent`` in as few tiles as ``tile`` does."""
    count = -(-extent // tile)
    return -(-extent // count)


def choose_conv_tiles(
    g: ConvGeometry,
    hw: HardwareModel,
    element: Attribute,
    epilogue: Epilogue,
    out_element: Attribute | None = None,
) -> ConvTiles | None:
    """Tiles of whole output rows; when not even one row fits L0 or L1 (its img2col, its
    accumulator, its input window), :func:`choose_narrow_tiles`. None when nothing fits
    (one row whose epilogue does not fit UB is not cut narrower: the fusion then keeps the
    epilogue out of the kernel, as on the presets whose rows fit). ``element`` is the
    cube's input type, ``out_element`` the output tile's (default: the same)."""
    out_element = element if out_element is None else out_element
    eb = element_bytes(element)
    frac = FRACTAL * g.c0 * eb
    l0a, l0b, l0c = (hw.capacity(s) // 2 for s in ("L0A", "L0B", "L0C"))
    l1 = hw.capacity("L1") // 2
    n1 = min(g.block_n1, max(1, l0b // frac // 2), 16)
    for rows in range(max(1, min(g.out_h, BASE_M // max(1, g.out_w) or 1)), 0, -1):
        t = ConvTiles(rows, n1, 1)
        m1 = t.m1(g)
        while n1 > 1 and m1 * n1 * FRACTAL * FRACTAL * 4 > l0c:
            n1 -= 1
        if g.blocks > 1:
            # A ragged channel tile would write into the next group block's channels.
            while g.block_n1 % n1:
                n1 -= 1
        if m1 * n1 * FRACTAL * FRACTAL * 4 > l0c or m1 * frac > l0a:
            if rows == 1:
                return choose_narrow_tiles(g, hw, element, epilogue, out_element)
            continue
        rows_s, n1_s = spread_over_cores(g, rows, n1, hw, eb)
        t = ConvTiles(rows_s, n1_s, 1)
        m1 = t.m1(g)
        k1 = max(1, min(g.block_k1, l0a // (m1 * frac), l0b // (n1_s * frac)))
        fmap = g.block_c1 * t.window_rows(g) * g.width * g.in_c0 * eb
        while k1 > 1 and fmap + k1 * n1_s * frac + n1_s * FRACTAL * 4 > l1:
            k1 -= 1  # fewer weight fractals per K step, to fit L1 beside the feature map
        if fmap + k1 * n1_s * frac + n1_s * FRACTAL * 4 > l1:
            if rows == 1:
                return choose_narrow_tiles(g, hw, element, epilogue, out_element)
            continue
        out_tile = [1, n1_s, rows_s, g.out_w, FRACTAL]
        if epilogue.ub_bytes(hw, out_tile, out_element) > hw.ub_bytes // 2:
            continue
        # As many steps as the largest tiles need, but tiles of equal size: a ragged last
        # step would compute as much padding as the tail lacks (K = 4 fractals in steps
        # of 3 costs 6 fractals of work, in steps of 2 costs 4).
        return ConvTiles(
            balanced(g.out_h, rows_s), balanced(g.block_n1, n1_s), balanced(g.block_k1, k1)
        )
    return None


def choose_narrow_tiles(
    g: ConvGeometry,
    hw: HardwareModel,
    element: Attribute,
    epilogue: Epilogue,
    out_element: Attribute | None = None,
) -> ConvTiles | None:
    """Tiles for a convolution of which not even one whole output row fits (small buffers,
    wide or deep feature maps): the output width is cut in tiles of ``cols`` columns whose
    input window (halo and padding included) fits, as Ascend's convolution tiling splits
    W (Load3D takes the window's width and left padding per load), and when even a
    one-pixel window of all the input channels is too big for L1, the channels are
    loaded in chunks of C1 slices, each a part of the K reduction (CANN's kAL1 split).
    Of the tiles that fit, the one of most output pixels (ties: the wider), with the most
    C1 per load. No spreading over cores: tiles this small are many already."""
    out_element = element if out_element is None else out_element
    eb = element_bytes(element)
    frac = FRACTAL * g.c0 * eb
    l0a, l0b, l0c = (hw.capacity(s) // 2 for s in ("L0A", "L0B", "L0C"))
    l1 = hw.capacity("L1") // 2
    n1_max = min(g.block_n1, max(1, l0b // frac // 2), 16)
    chunks = [d for d in range(g.block_c1, 0, -1) if g.block_c1 % d == 0]
    shapes = [
        (rows, cols)
        for cols in range(min(g.out_w, BASE_M), 0, -1)
        for rows in range(1, min(g.out_h, BASE_M // cols) + 1)
    ]
    shapes.sort(key=lambda rc: (-rc[0] * rc[1], -rc[1]))
    for rows, cols in shapes:
        width = None if cols == g.out_w else cols
        m1 = ConvTiles(rows, 1, 1, width).m1(g)
        n1 = n1_max
        while n1 > 1 and (
            m1 * n1 * FRACTAL * FRACTAL * 4 > l0c or g.block_n1 % n1 and g.blocks > 1
        ):
            n1 -= 1
        if m1 * n1 * FRACTAL * FRACTAL * 4 > l0c or m1 * frac > l0a:
            continue
        out_tile = [1, n1, rows, cols, FRACTAL]
        if epilogue.ub_bytes(hw, out_tile, out_element) > hw.ub_bytes // 2:
            continue
        for kc1 in chunks:
            t = ConvTiles(rows, n1, 1, width, None if kc1 == g.block_c1 else kc1)
            chunk = t.chunk_k1(g)
            k1 = max(1, min(chunk, l0a // (m1 * frac), l0b // (n1 * frac)))
            fmap = t.fmap_bytes(g, eb)
            while k1 > 1 and fmap + k1 * n1 * frac + n1 * FRACTAL * 4 > l1:
                k1 -= 1
            if fmap + k1 * n1 * frac + n1 * FRACTAL * 4 > l1:
                continue
            return ConvTiles(
                balanced(g.out_h, rows),
                balanced(g.block_n1, n1),
                balanced(chunk, k1),
                None if width is None else balanced(g.out_w, width),
                t.kc1,
            )
    return None


def spread_over_cores(
    g: ConvGeometry, rows: int, n1: int, hw: HardwareModel, itemsize: int = 2
) -> tuple[int, int]:
    """Output tiles (rows, channel fractals) that spread the kernel over more cube cores
    when there are fewer tiles than cores (a late ResNet layer at batch 1: 14 x 14 x 256
    is one or two tiles), as CANN's convolution tiling splits the batch, the output
    channels (N) and the output rows (M) over the cores. ``split-cores`` shares out the
    batch x channel-tile loops, the row loop inside them, or all of them collapsed. Fewer
    rows divide each tile's img2col (MTE1) and cube work but every tile loads all of its
    channel tile's weights; fewer channels divide the weights and the cube work but every
    tile still builds the whole img2col of its rows. Of the smaller tiles down to enough
    for every core, this takes the one whose busiest core has the least to do on its
    busiest pipe: MTE1 (A bytes / img2col rate + B bytes / L1->L0B rate per tile), MTE2
    (each tile's input window, and the weights with each tile when they stream through L1,
    else once) or the cube (fractal MACs), for its share of the tiles (ties: the larger
    tile). Smaller tiles fit wherever the larger ones did."""
    cores = max(1, hw.cube_cores)
    frac = FRACTAL * g.c0 * itemsize  # 512 B for fp16 (16 x 16) and fp32 (16 x 8)
    mac_cycles = 2 if itemsize == 4 else 1  # an fp32 fractal product takes two
    a_rate = img2col_bytes_per_cycle(g.out_w, g.strides[1])
    b_rate = hw.dma_bytes_per_cycle.get("L1->L0B", 128.0)
    gm_rate = hw.dma_bytes_per_cycle.get("GM->L1", 64.0)
    half_l1 = hw.capacity("L1") // 2

    def busiest_core(tile: tuple[int, int]) -> float:
        rows, n1 = tile
        whole_rows = ConvTiles(rows, n1, 1)
        m1 = whole_rows.m1(g)
        outer, row_tiles = g.batch * -(-g.block_n1 // n1), -(-g.out_h // rows)
        share = min(-(-trips // cores) / trips for trips in (outer, row_tiles, outer * row_tiles))
        tiles = outer * row_tiles * share
        loads = m1 * g.block_k1 * frac / a_rate + g.block_k1 * n1 * frac / b_rate
        # MTE2: each tile's input window; the channel tile's weights with every tile when
        # they stream through L1 by K steps, else once per core
        fmap = whole_rows.fmap_bytes(g, itemsize)
        weights = g.block_k1 * n1 * frac
        streamed = fmap + weights > half_l1
        mte2 = (tiles * (fmap + weights) if streamed else tiles * fmap + weights) / gm_rate
        return max(tiles * loads, mte2, tiles * m1 * g.block_k1 * n1 * mac_cycles)

    channel_tiles = [n1]
    while g.batch * -(-g.block_n1 // channel_tiles[-1]) < cores and channel_tiles[-1] > 1:
        smaller = channel_tiles[-1] - 1
        while g.blocks > 1 and g.block_n1 % smaller:
            smaller -= 1  # a ragged channel tile would write into the next group block
        channel_tiles.append(smaller)
    row_tiles = [rows]
    while -(-g.out_h // row_tiles[-1]) < cores and row_tiles[-1] > 1:
        row_tiles.append(row_tiles[-1] - 1)
    candidates = [(r, n) for r in row_tiles for n in channel_tiles]
    return min(candidates, key=lambda t: (busiest_core(t), -t[0] * t[1]))


WEIGHT_PLACES = ("resident", "streamed")
"""``conv.weights``: a channel tile's weights loaded into L1 once for all of its output
tiles, or streamed through L1 per K step."""


def weights_fit_resident(
    g: ConvGeometry, tiles: ConvTiles, hw: HardwareModel, eb: int, taps: int = 1
) -> bool:
    """The heuristic's rule: the weights stay in L1 when a block's worth (of all ``taps``
    depth taps of a 3-D convolution) fits beside the feature map in half of L1 (Ascend C
    keeps several base blocks in L1)."""
    frac = FRACTAL * g.c0 * eb
    weights = taps * g.block_k1 * tiles.n1 * frac
    return tiles.fmap_bytes(g, eb) + weights <= hw.capacity("L1") // 2


def chosen_conv_tiles(
    b: KernelBuilder,
    g: ConvGeometry,
    element: Attribute,
    epilogue: Epilogue,
    out_element: Attribute,
    taps: int = 1,
) -> tuple[ConvTiles, bool] | str:
    """The convolution's tiles and whether its weights stay in L1, as tiling parameters
    (default: :func:`choose_conv_tiles` and :func:`weights_fit_resident`): ``conv.rows``,
    ``conv.cols`` (0: whole rows), ``conv.n1``, ``conv.k1``, ``conv.kc1`` (0: all input
    C1 per load) and ``conv.weights``. A combination whose buffers do not fit (L0 whole,
    L1 beside its other buffers, the epilogue in half of UB) or that breaks the tiling's
    rules is a failure naming it. ``taps``: the depth taps of a 3-D convolution, whose
    resident weights are all of them (``g`` is then the geometry of one depth plane)."""
    hw = b.hw
    heuristic = choose_conv_tiles(g, hw, element, epilogue, out_element)
    if heuristic is None:
        return "no convolution tile fits the on-chip buffers"
    if odd_int8_channel_tile(g, heuristic.n1, out_element):
        heuristic = replace(heuristic, n1=heuristic.n1 - 1 if heuristic.n1 > 1 else 2)
    eb = element_bytes(element)
    resident = weights_fit_resident(g, heuristic, hw, eb, taps)
    rows = b.choose_int(
        "conv.rows",
        param_values(*powers_of_two(g.out_h), default=heuristic.rows, upper=g.out_h),
        heuristic.rows,
        "output rows per tile",
    )
    widths = param_values(*powers_of_two(BASE_M), default=heuristic.cols or 1, upper=g.out_w - 1)
    cols = b.choose_int(
        "conv.cols",
        (0, *widths) if g.out_w > 1 else (0,),
        heuristic.cols or 0,
        "output columns per tile (width tiling); 0: whole output rows",
    )
    n1 = b.choose_int(
        "conv.n1",
        param_values(*powers_of_two(g.block_n1), default=heuristic.n1, upper=g.block_n1),
        heuristic.n1,
        "output channel fractals per tile (N)",
    )
    k1 = b.choose_int(
        "conv.k1",
        param_values(*powers_of_two(g.block_k1), default=heuristic.k1, upper=g.block_k1),
        heuristic.k1,
        "K fractals per cube step (input channels x kernel taps)",
    )
    chunks = [] if g.c04 else [d for d in range(1, g.block_c1) if g.block_c1 % d == 0]
    kc1 = b.choose_int(
        "conv.kc1",
        (0, *chunks),
        heuristic.kc1 or 0,
        "input C1 slices per feature-map load into L1 (CANN's kAL1); 0: all of them",
    )
    weights = b.choose(
        "conv.weights",
        WEIGHT_PLACES,
        "resident" if resident else "streamed",
        "weights of a channel tile resident in L1 for all its output tiles, or streamed",
    )
    tiles = ConvTiles(rows, n1, k1, cols or None, kc1 or None)
    resident = weights == "resident"
    return tiles_failure(g, tiles, resident, hw, eb, epilogue, out_element, taps) or (
        tiles,
        weights == "resident",
    )


def odd_int8_channel_tile(g: ConvGeometry, n1: int, out_element: Attribute) -> bool:
    """An int8 output (C0 = 32: two accumulator fractals a C1 slice) cut in channel tiles
    of an odd number of fractals, or in group blocks of an odd number of fractals
    (``fold-requant`` makes none: :func:`~tilegraph.passes.fold_requant.
    int8_groups_fill_slices`), so that a tile would start inside a C1 slice."""
    if str(out_element) != "i8":
        return False
    return (n1 % 2 == 1 and n1 < g.block_n1) or (g.blocks > 1 and g.out_c1_step % 2 == 1)


def tiles_failure(
    g: ConvGeometry,
    t: ConvTiles,
    resident: bool,
    hw: HardwareModel,
    eb: int,
    epilogue: Epilogue,
    out_element: Attribute,
    taps: int = 1,
) -> str | None:
    """Why tiles ``t`` cannot run convolution ``g`` (None when they can): the rules of the
    loops and what every scope must hold at once (resident weights: of all ``taps``)."""
    frac = FRACTAL * g.c0 * eb
    if g.blocks > 1 and g.block_n1 % t.n1:
        return f"conv.n1 = {t.n1} does not divide a group block's {g.block_n1} fractals"
    if odd_int8_channel_tile(g, t.n1, out_element):
        return (
            f"conv.n1 = {t.n1} or a group block's fractals are odd: int8 output tiles "
            "fill C1 slices of 32 channels"
        )
    if t.k1 > t.chunk_k1(g):
        return f"conv.k1 = {t.k1} exceeds the {t.chunk_k1(g)} K fractals of one load"
    m1 = t.m1(g)
    need = {
        "L0A": m1 * t.k1 * frac,
        "L0B": t.k1 * t.n1 * frac,
        "L0C": m1 * t.n1 * FRACTAL * FRACTAL * 4,
        "L1": t.fmap_bytes(g, eb)
        + (taps * g.block_k1 if resident else t.k1) * t.n1 * frac
        + 2 * t.n1 * FRACTAL * 4,  # bias and dequantisation scales
    }
    over = [f"{s} {v} B > {hw.capacity(s)} B" for s, v in need.items() if v > hw.capacity(s)]
    if over:
        return f"the convolution tiles {t} do not fit ({', '.join(over)})"
    out_tile = [1, t.n1, t.rows, t.tile_width(g), FRACTAL]
    if epilogue.ub_bytes(hw, out_tile, out_element) > hw.ub_bytes // 2:
        return f"the convolution epilogue of tiles {t} does not fit half of UB"
    return None
