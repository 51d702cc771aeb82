"""Several concats and the views between them as one kernel (tiling/concat_tree.py).

YOLOv8's detection head: per scale, the box and class maps (conv outputs, NC1HWC0)
concatenated on C, flattened to ``[N, C, H·W]``; the scales concatenated on the anchors.
Before, the group split into a kernel per concat and per reshape; now each conv output is
one nest of one kernel, stored through a view of the final output. Each level (graph,
macro kernels, both tile executors) against the one above, with NaN in the 5HD padding
lanes and channel counts that stop inside a C0 block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_nhwc_out import zoo_report
from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    run_levels,
)


def _conv(g: Graph, x: SSAValue, cin: int, cout: int) -> SSAValue:
    w = g.const([cout, cin, 1, 1], "NCHW")
    return g.op("conv2d", x, w)


def yolo_head(g: Graph, box: int = 7, cls: int = 5, sizes=((6, 5), (3, 3))) -> list[SSAValue]:
    """Per scale box ++ cls maps (NC1HWC0 inputs) on C, reshaped to [N, C, H*W]; scales
    on axis 2. The reshapes share their shape operand (one ``[N, C, -1]`` constant, as
    YOLOv8's export has it): a shape read twice is no value of the tree read twice."""
    rows = g.ints([2, box + cls, -1])
    flat = []
    for h, w in sizes:
        joined = g.op(
            "concat", g.input([2, box, h, w], "NCHW"), g.input([2, cls, h, w], "NCHW"), axis=1
        )
        flat.append(g.op("reshape", joined, rows))
    return [g.op("concat", *flat, axis=2)]


def flattened_scales(g: Graph) -> list[SSAValue]:
    """PP-YOLOE's scales: NCHW maps from conv outputs flattened, then concatenated."""
    flat = []
    for h, w in ((5, 7), (3, 2)):
        x = g.input([1, 4, h, w], "NCHW")
        flat.append(g.op("reshape", g.op("relu", _conv(g, x, 4, 9)), g.ints([1, 9, h * w])))
    return [g.op("concat", *flat, axis=2)]


def concat_of_concats(g: Graph) -> list[SSAValue]:
    """Row-major inputs: a concat on the last axis of two concats on the first, one input
    computed (an add)."""
    a, c = g.input([3, 5]), g.input([4, 5])
    inner = g.op("concat", g.op("add", a, g.input([3, 5])), g.input([2, 5]), axis=0)
    return [g.op("concat", inner, g.op("concat", c, g.input([1, 5]), axis=0), axis=1)]


def _slice(g: Graph, x: SSAValue, start: int, end: int, axis: int) -> SSAValue:
    return g.op("slice", x, g.ints([start]), g.ints([end]), g.ints([axis]), None)


def _roll(g: Graph, x: SSAValue, shift: int, axis: int, n: int) -> SSAValue:
    """``torch.roll`` as exported: the last ``shift`` along ``axis``, then the rest."""
    return g.op(
        "concat", _slice(g, x, n - shift, n, axis), _slice(g, x, 0, n - shift, axis), axis=axis
    )


SWIN = (2, 8, 12, 5, 4, 2)
"""Batch, H, W, C, window, shift: the shift cuts every window row (8 / 4 rows of 4)."""


def window_partition(g: Graph, swin: tuple[int, ...] = SWIN) -> list[SSAValue]:
    """Swin's shifted windows: tokens to a map, a roll along H then W, the map cut into
    windows (``reshape, transpose, reshape``): the rolls' parts cross window rows."""
    b, h, w, c, win, s = swin
    x = g.op("reshape", g.input([b, h * w, c]), g.ints([b, h, w, c]))
    x = _roll(g, _roll(g, x, s, 1, h), s, 2, w)
    x = g.op("reshape", x, g.ints([b, h // win, win, w // win, win, c]))
    x = g.op("transpose", x, perm=[0, 1, 3, 2, 4, 5])
    return [g.op("reshape", x, g.ints([b * (h // win) * (w // win), win * win, c]))]


def window_reverse(g: Graph, swin: tuple[int, ...] = SWIN) -> list[SSAValue]:
    """The windows back into a map, then the roll back (Swin's block end)."""
    b, h, w, c, win, s = swin
    x = g.input([b * (h // win) * (w // win), win, win, c])
    x = g.op("reshape", x, g.ints([b, h // win, w // win, win, win, c]))
    x = g.op("reshape", g.op("transpose", x, perm=[0, 1, 3, 2, 4, 5]), g.ints([b, h, w, c]))
    return [_roll(g, _roll(g, x, h - s, 1, h), w - s, 2, w)]


def selected_frame_tokens(g: Graph) -> list[SSAValue]:
    """TimeSformer's class token: ``x[:, :, :1]`` then ``select`` (a Gather of one
    constant index), unsqueezed and reshaped, before the patch tokens."""
    b, t, n, d = 2, 3, 5, 16
    x = _slice(g, g.input([b, t, n + 1, d]), 0, 1, 2)
    first = g.op("gather", x, g.b.constant(np.array(0, np.int64)), axis=2)
    cls = g.op("reshape", g.op("unsqueeze", first, g.ints([1])), g.ints([b, 1, t, d]))
    return [g.op("concat", cls, g.input([b, 4, t, d]), axis=1)]


def repeated_class_token(g: Graph) -> list[SSAValue]:
    """TimeSformer's space attention input: the class token repeated per frame
    (``tile``) before each frame's patch tokens (``[B, N·T, D]`` regrouped by frame:
    ``reshape, transpose, reshape``); the tile's boxes read the one token (the index
    modulo 1)."""
    b, t, n, d = 2, 3, 5, 16
    cls = g.op("tile", g.input([b, 1, d]), g.ints([1, t, 1]))
    cls = g.op("reshape", cls, g.ints([b * t, 1, d]))
    tokens = g.op("reshape", g.input([b, n * t, d]), g.ints([b, n, t, d]))
    tokens = g.op("transpose", tokens, perm=[0, 2, 1, 3])
    return [g.op("concat", cls, g.op("reshape", tokens, g.ints([b * t, n, d])), axis=1)]


def patch_tokens(g: Graph) -> list[SSAValue]:
    """ViViT's tokens: the patch embeddings ``[B, D, T', H', W']`` flattened and
    transposed (``flatten(2).transpose(1, 2)``) after the class token: the patches' rows
    run along the tokens, so each tile is transposed on UB."""
    b, d, t, h, w = 2, 20, 2, 3, 5
    x = g.op("reshape", g.input([b, d, t, h, w]), g.ints([b, d, t * h * w]))
    return [g.op("concat", g.input([b, 1, d]), g.op("transpose", x, perm=[0, 2, 1]), axis=1)]


def sine_embedding(g: Graph) -> list[SSAValue]:
    """DETR's sine position embedding: sin / cos pairs stacked on a new last axis and
    interleaved by a reshape, the y and x halves concatenated, moved to channels first."""
    b, h, w, d = 2, 3, 5, 6
    pairs = [g.op("unsqueeze", g.input([b, h, w, d]), g.ints([4])) for _ in range(4)]
    halves = [
        g.op("reshape", g.op("concat", s, c, axis=4), g.ints([b, h, w, 2 * d]))
        for s, c in (pairs[:2], pairs[2:])
    ]
    joined = g.op("concat", *halves, axis=3)
    return [g.op("transpose", joined, perm=[0, 3, 1, 2])]


def _concat_kernels(levels) -> list[tuple[str, ...]]:
    return [k.ops for k in levels.tiled_kernels if "graph.concat" in k.ops]


@pytest.mark.parametrize(
    "build, concats",
    [
        (yolo_head, [2, 1]),
        (flattened_scales, [1]),
        (concat_of_concats, [3]),
        (window_partition, [1, 1]),
        (window_reverse, [2]),
        (selected_frame_tokens, [1]),
        (repeated_class_token, [1]),
        (patch_tokens, [1]),
        (sine_embedding, [1, 1, 1]),
    ],
    ids=[
        "yolo_head",
        "flattened_scales",
        "concat_of_concats",
        "partition",
        "reverse",
        "select",
        "tile",
        "patches",
        "sine",
    ],
)
def test_concat_tree_is_one_kernel(build, concats: list[int]):
    """Every level agrees with NaN in the padding lanes, and each group of concats is one
    kernel, not split (on the ``test`` preset: small UB, ragged tiles, several cores).
    (``fuse-ops`` leaves the head's last concat a group of its own here, the window
    partition's first roll, and each half of the sine embedding.)"""
    g = Graph(padded=True)
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = _concat_kernels(levels)
    assert [k.count("graph.concat") for k in kernels] == concats, kernels
    assert kernels == [k.ops for k in levels.macro_kernels if "graph.concat" in k.ops]
    assert all(k.unit != "host" for k in levels.tiled_kernels)


@pytest.mark.parametrize(
    "swin",
    [(1, 6, 6, 3, 3, 1), (2, 9, 6, 4, 3, 4), (1, 4, 8, 2, 2, 1), (1, 6, 6, 3, 6, 5)],
    ids=["shift-1", "shift-past-a-window", "windows-of-2", "one-window"],
)
def test_shifted_windows_of_other_sizes(swin: tuple[int, ...]):
    """The window partition and reverse of other maps, windows and shifts (a shift of
    more than a window, windows of 2, one window) match exactly, each group whole."""
    for build in (window_partition, window_reverse):
        g = Graph()
        module = g.b.build(*build(g, swin))
        levels = run_levels(module, g.arrays, "test")
        assert_matches(levels, rtol=0, atol=0)
        kernels = _concat_kernels(levels)
        assert kernels == [k.ops for k in levels.macro_kernels if "graph.concat" in k.ops]


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_yolo_head_on_the_presets(platform: str):
    g = Graph(padded=True)
    module = g.b.build(*yolo_head(g, box=64, cls=80, sizes=((8, 8), (4, 4), (2, 2))))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    kernels = _concat_kernels(levels)
    assert sum(k.count("graph.concat") for k in kernels) == 4, kernels
    assert kernels == [k.ops for k in levels.macro_kernels if "graph.concat" in k.ops]


@pytest.mark.parametrize("name", ["yolov8", "swin", "detr_pos"])
def test_zoo_lowering_section_lists_no_concat_split(name: str, tmp_path: Path):
    """tilegraph-run on YOLOv8 (its C2f concats of a sliced half, a bottleneck's TransData
    and the other half; its head's concat tree), Swin (its cyclic shifts with the window
    partition / reverse) and DETR's sine position embedding lowers no concat group split,
    and the outputs match onnxruntime."""
    from tests.zoo.zoo import MODELS, MODELS_DIR

    if not (MODELS_DIR / MODELS[name].file).exists():
        pytest.skip(f"{MODELS[name].file} is not exported")
    split = zoo_report(name, tmp_path)["lowering"]["split_groups"]
    assert not [g for g in split if any(op["op"] == "graph.concat" for op in g["ops"])], split


def _random_tree(g: Graph, rng: np.random.Generator) -> SSAValue:
    """A map rolled on random axes, cut into random windows (``reshape, transpose,
    reshape``) and concatenated with a slice of another input: boxes cut at random
    offsets inside window rows."""
    h, w = (int(v) for v in rng.choice([4, 6, 8, 9], size=2))
    win_h = int(rng.choice([d for d in (2, 3) if h % d == 0]))
    win_w = int(rng.choice([d for d in (2, 3) if w % d == 0]))
    x = g.op("reshape", g.input([2, h * w, 3]), g.ints([2, h, w, 3]))
    for axis, n in ((1, h), (2, w)):
        if rng.random() < 0.8:
            x = _roll(g, x, int(rng.integers(1, n)), axis, n)
    x = g.op("reshape", x, g.ints([2, h // win_h, win_h, w // win_w, win_w, 3]))
    x = g.op("transpose", x, perm=[0, 1, 3, 2, 4, 5])
    x = g.op("reshape", x, g.ints([2 * (h // win_h) * (w // win_w), win_h * win_w, 3]))
    rows = int(rng.integers(1, 4))
    extra = _slice(g, g.input([2 * (h // win_h) * (w // win_w), 5, 3]), 5 - rows, 5, 1)
    return g.op("concat", x, extra, axis=1) if rng.random() < 0.5 else x


@pytest.mark.parametrize("seed", range(6))
def test_random_trees_match(seed: int):
    """Random rolls, windows and a concat with a slice: every level agrees exactly and
    no group is split."""
    g = Graph(seed=seed)
    module = g.b.build(_random_tree(g, np.random.default_rng(seed)))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)
    assert all(k.unit == "vector" for k in levels.tiled_kernels)
    assert [k.ops for k in levels.tiled_kernels] == [k.ops for k in levels.macro_kernels]


def test_swin_t_window_reverse_splits_its_tiles_inside_the_box():
    """torchvision's Swin-T at 64 x 64 (a 14 x 14 map of 192 channels, windows of 7, shift
    3) on the 910B: the tiles split the windows' box below the output's rank (a 6-d view
    of a 4-d output), which must not be compared with the output's dims."""
    g = Graph()
    module = g.b.build(*window_reverse(g, (2, 14, 14, 192, 7, 3)))
    levels = run_levels(module, g.arrays, "ascend910b")
    assert_matches(levels, rtol=0, atol=0)
    assert _concat_kernels(levels) == [
        k.ops for k in levels.macro_kernels if "graph.concat" in k.ops
    ]
