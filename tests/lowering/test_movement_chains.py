"""Chains of data-movement ops as one kernel (tiling/movement_maps.py), each level against
the one above it (the harness of :mod:`tests.lowering.test_tile_differential`): graph ->
macro kernels -> tiled loops on both executors, on the ``test`` preset (odd sizes, ragged
tails, several tiles). A chain whose maps compose is one vector kernel; a refused one is
split into runs and still matches."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    run_levels,
)


def _slice(g: Graph, x, starts, ends, axes, steps=None) -> SSAValue:
    step = None if steps is None else g.ints(steps)
    return g.op("slice", x, g.ints(starts), g.ints(ends), g.ints(axes), step)


def _roll(g: Graph, x, shift: int, axis: int, n: int) -> SSAValue:
    """``torch.roll`` as exported: the last ``shift`` along ``axis``, then the rest."""
    tail = _slice(g, x, [n - shift], [n], [axis])
    head = _slice(g, x, [0], [n - shift], [axis])
    return g.op("concat", tail, head, axis=axis)


def _pad(g: Graph, x, pads, value: float | None = None, mode: str = "constant") -> SSAValue:
    fill = None if value is None else g.b.constant(np.array(value, np.float32))
    return g.op("pad", x, g.ints(pads), fill, mode=mode)


def roll(g: Graph) -> list[SSAValue]:
    return [_roll(g, g.input([3, 13, 7]), 4, 1, 13)]


def roll_two_axes(g: Graph) -> list[SSAValue]:
    """Swin's cyclic shift: a roll along H, then one along W of its result."""
    x = g.input([2, 11, 9, 5])
    return [_roll(g, _roll(g, x, 3, 1, 11), 3, 2, 9)]


def three_blocks(g: Graph) -> list[SSAValue]:
    """LongT5's ``_concatenate_3_blocks``: pad the blocks axis by one each side, then the
    previous, current and next block side by side (a pad value that is not 0)."""
    x = g.input([3, 5, 7, 6])
    padded = _pad(g, x, [0, 1, 0, 0, 0, 1, 0, 0], 1.5)
    blocks = [_slice(g, padded, [i], [i + 5], [1]) for i in range(3)]
    return [g.op("concat", *blocks, axis=2)]


def reflect_reversed(g: Graph) -> list[SSAValue]:
    """A reflect pad read backwards in steps of 2, beside the input itself."""
    x = g.input([2, 9, 13])
    padded = _pad(g, x, [0, 0, 3, 0, 0, 4], mode="reflect")  # 20 columns
    back = _slice(g, padded, [-1], [-100], [2], [-2])  # 10 columns
    return [g.op("concat", back, _slice(g, x, [0], [10], [2]), axis=1)]


def pad_of_pad(g: Graph) -> list[SSAValue]:
    """A constant pad of a cropping pad (the same value): one box, the crop composed; the
    outer borders lie beside the inner's (the DMA fills both past the source's edges)."""
    x = g.input([3, 17, 10])
    inner = _pad(g, x, [0, -2, 1, 0, 3, -1])
    return [_pad(g, inner, [0, 0, 2, 0, 1, 0])]


def crop_then_pad(g: Graph) -> list[SSAValue]:
    """Refused: a border padded where the inner pad cropped reads past the crop, into
    data the DMA would load instead of the fill."""
    x = g.input([3, 17, 10])
    return [_pad(g, _pad(g, x, [0, -2, 0, 0, 0, 0]), [0, 1, 0, 0, 0, 0])]


def pads_of_two_values(g: Graph) -> list[SSAValue]:
    """Refused: the outer pad's border would need another fill than the inner's."""
    x = g.input([3, 17, 10])
    return [_pad(g, _pad(g, x, [0, 1, 0, 0, 1, 0], 2.0), [0, 0, 2, 0, 0, 1], 1.0)]


def expand_then_slices(g: Graph) -> list[SSAValue]:
    x = g.input([3, 1, 11])
    wide = g.op("expand", x, g.ints([3, 9, 11]))
    rows = _slice(g, wide, [2], [7], [1])
    back = _slice(g, wide, [0, 10], [5, -100], [1, 2], [1, -3])  # columns 10, 7, 4, 1
    return [g.op("concat", rows, back, axis=2)]


def tile_then_slice(g: Graph) -> list[SSAValue]:
    x = g.input([5, 7])
    return [_slice(g, g.op("tile", x, g.ints([3, 2])), [4, 3], [13, 12], [0, 1], [1, 2])]


def split_swapped(g: Graph) -> list[SSAValue]:
    x = g.input([4, 19, 6])
    first, second = g.b.op_results("split", x, g.ints([7, 12]), axis=1)
    return [g.op("concat", second, first, axis=1)]


def focus(g: Graph) -> list[SSAValue]:
    """YOLOv5's Focus: the four phases of a 2 x 2 space-to-depth, concatenated on C."""
    x = g.input([1, 3, 14, 18], "NCHW")
    phases = [_slice(g, x, [h, w], [14, 18], [2, 3], [2, 2]) for w in (0, 1) for h in (0, 1)]
    return [g.op("concat", *phases, axis=1)]


def reshaped_ends(g: Graph) -> list[SSAValue]:
    """A reshape of the input (read as a view) and of the output (written as one)."""
    x = g.input([6, 35])
    rows = g.op("reshape", x, g.ints([6, 5, 7]))
    rolled = _roll(g, rows, 2, 1, 5)
    return [g.op("reshape", rolled, g.ints([30, 7]))]


def reshape_between_pads(g: Graph) -> list[SSAValue]:
    """Refused inside: the padded axis is split by the reshape (LongT5's blocks)."""
    x = g.input([2, 11, 4])
    padded = _pad(g, x, [0, 0, 0, 0, 1, 0])  # 12 rows
    blocks = g.op("reshape", padded, g.ints([2, 3, 4, 4]))
    return [_pad(g, blocks, [0, 1, 0, 0, 0, 1, 0, 0])]


Builder = Callable[[Graph], Sequence[SSAValue]]
ONE_KERNEL: dict[str, Builder] = {
    "roll": roll,
    "roll_two_axes": roll_two_axes,
    "three_blocks": three_blocks,
    "reflect_reversed": reflect_reversed,
    "pad_of_pad": pad_of_pad,
    "expand_then_slices": expand_then_slices,
    "tile_then_slice": tile_then_slice,
    "split_swapped": split_swapped,
    "focus": focus,
    "reshaped_ends": reshaped_ends,
}
REFUSED: dict[str, Builder] = {
    "crop_then_pad": crop_then_pad,
    "pads_of_two_values": pads_of_two_values,
    "reshape_between_pads": reshape_between_pads,
}


def _levels(build: Builder):
    g = Graph()
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)
    return levels


@pytest.mark.parametrize("name", list(ONE_KERNEL))
def test_chain_is_one_vector_kernel(name: str):
    """Every level agrees, and the whole chain is one vector kernel."""
    levels = _levels(ONE_KERNEL[name])
    assert [k.unit for k in levels.tiled_kernels] == ["vector"], levels.tiled_kernels


@pytest.mark.parametrize("name", list(REFUSED))
def test_refused_chain_is_split_and_still_matches(name: str):
    levels = _levels(REFUSED[name])
    assert len(levels.tiled_kernels) > 1
    assert all(k.unit == "vector" for k in levels.tiled_kernels), levels.tiled_kernels


def test_chain_of_a_5hd_input_reads_its_nchw_copy():
    """Focus on an NCHW input held as NC1HWC0 with NaN in its padding lanes: the chain
    reads the NCHW copy the TransData kernel writes (movement ops see origin formats only),
    one kernel, and no NaN leaks."""
    g = Graph(padded=True)
    module = g.b.build(*focus(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    chains = [k for k in levels.tiled_kernels if "graph.concat" in k.ops]
    assert [k.ops.count("graph.slice") for k in chains] == [4]


def test_a_roll_is_one_kernel_through_the_whole_pipeline():
    """Swin's two-axis roll on ascend910b: one vector kernel launched over several blocks,
    run by both executors, costed by the cycle model with every output byte moved once in
    and once out (no intermediate round trip through GM)."""
    from tilegraph.cost_model.cycles import simulate_module
    from tilegraph.cost_model.kernel_report import kernel_report
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
    from tilegraph.runtime.tiles import run_tiles

    g = Graph()
    x = g.input([2, 56, 56, 96])
    module = g.b.build(_roll(g, _roll(g, x, 3, 1, 56), 3, 2, 56))
    ctx = make_context()
    run_pipeline("set-target{platform=ascend910b},O2", ctx, module)
    run_pipeline(lowering_pipeline(), ctx, module)
    (kernel,) = kernel_report(module)
    assert kernel.unit == "vector" and kernel.ops.count("graph.concat") == 2
    want = np.roll(g.arrays[0], (3, 3), axis=(1, 2))
    for executor in ("interpret", "fast"):
        (got,) = run_tiles(module, g.arrays, executor=executor)
        np.testing.assert_array_equal(got, want, err_msg=executor)
    (cycles,) = simulate_module(module).kernels
    assert cycles.unit == "vector" and cycles.cycles > 0
    moved = sum(cycles.bytes_per_path.values())
    assert 2 * want.nbytes <= moved < 3 * want.nbytes


def _random_chain(seed: int) -> Builder:
    """A seeded chain of 3 movement ops on a tensor of odd sizes (several tiles on the
    `test` preset): slices with any step
    (negative ones too), constant pads (crops too, one value), edge / reflect pads, and a
    concat of the value with a slice of itself."""
    rng = np.random.default_rng(seed)

    def build(g: Graph) -> list[SSAValue]:
        shape = [int(n) for n in rng.integers(3, 24, size=int(rng.integers(2, 4)))]
        v = g.input(shape)
        for _ in range(3):
            axis = int(rng.integers(len(shape)))
            kind = rng.choice(["slice", "pad", "border", "concat"])
            n = shape[axis]
            if kind == "slice" and n > 1:
                step = int(rng.choice([1, 2, -1, -2]))
                start, end = (0, n) if step > 0 else (n - 1, -n - 1)
                start += int(np.sign(step)) * int(rng.integers(0, max(n // 3, 1)))
                v = _slice(g, v, [start], [end], [axis], [step])
                shape[axis] = len(range(start % n, end if step > 0 else -1, step))
            elif kind == "pad":
                before, after = int(rng.integers(-1, 3)), int(rng.integers(0, 3))
                pads = [0] * (2 * len(shape))
                pads[axis], pads[axis + len(shape)] = before, after
                v = _pad(g, v, pads, 1.5)
                shape[axis] += before + after
            elif kind == "border" and n > 2:
                pads = [0] * (2 * len(shape))
                pads[axis], pads[axis + len(shape)] = 1, 2
                v = _pad(g, v, pads, mode=str(rng.choice(["edge", "reflect"])))
                shape[axis] += 3
            else:
                half = _slice(g, v, [n // 2], [n], [axis])
                v = g.op("concat", half, v, axis=axis)
                shape[axis] += n - n // 2
        return [v]

    return build


@pytest.mark.parametrize("seed", range(12))
def test_random_chain_matches_every_level(seed: int):
    """Whatever a random chain composes into (one kernel, or runs where it is refused),
    every level agrees exactly and every kernel runs on the vector unit."""
    levels = _levels(_random_chain(seed))
    assert all(k.unit == "vector" for k in levels.tiled_kernels), levels.tiled_kernels
