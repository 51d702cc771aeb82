"""1-D convolutions, conv_transposes, STFTs, DFTs and grouped convolutions of any grouping
on the cube.

``conv-forms`` (the first pass of ``format``) rewrites a 1-D convolution into conv2d with
H = 1, a conv_transpose into the conv2d of its zero-inserted input with the flipped,
transposed filter, an STFT into a strided conv2d with the windowed DFT basis, a DFT
into a matmul with the basis, a strided convolution of a one-channel signal into one over
its hops as channels (:mod:`tilegraph.passes.conv_forms`); grouped convolutions whose groups do
not align to C0 take FRACTAL_Z's groups rule (block-diagonal blocks of ``e`` groups padded
to C0). Each case is lowered on the ``test`` preset (small buffers: ragged row, column and
channel tails) and run by both executors with NaN in the padding lanes, against the graph
level of the module *before* any rewrite; no kernel may stay on the host.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import (
    CUBE,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_tiled,
    assert_units,
    run_levels,
)
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime import run_reference

NAN = float("nan")


def conv1d_strided(g: Graph) -> list:
    """Stride 2, dilation 2, asymmetric pads, 3 groups of 4 channels (not aligned to C0),
    bias and GELU after it; L = 37 leaves ragged column tails."""
    x = g.input([2, 12, 37])
    y = g.op("conv", x, g.const([21, 4, 3]), g.const([21]), strides=[2], dilations=[2],
             pads=[1, 2], group=3)  # fmt: skip
    return [g.op("gelu", y)]


def conv1d_depthwise(g: Graph) -> list:
    """wav2vec2's positional convolution in small: depthwise, SAME padding, 20 channels."""
    return [g.op("conv", g.input([1, 20, 45]), g.const([20, 1, 5]), group=20, pads=[2, 2])]


def conv1d_chain(g: Graph) -> list:
    """whisper's stem in small: two 1-D convolutions (the second stride 2) with GELU."""
    x = g.input([1, 10, 40])
    y = g.op("gelu", g.op("conv", x, g.const([24, 10, 3]), g.const([24]), pads=[1, 1]))
    return [g.op("conv", y, g.const([24, 24, 3]), strides=[2], pads=[1, 1])]


def conv1d_stack(g: Graph) -> list:
    """silero's encoder in small: three 1-D convolutions with ReLUs (the second stride 2)
    and a residual add of the last two; C = 20 leaves a ragged channel block. Weights in
    [-0.5, 0.5) keep three layers' sums of the order of the input."""
    x = g.input([2, 8, 37])
    w1, w2, w3 = (g.const(shape, low=-0.5) for shape in ([20, 8, 3], [20, 20, 5], [20, 20, 3]))
    y = g.op("relu", g.op("conv", x, w1, g.const([20]), pads=[1, 1]))
    y = g.op("relu", g.op("conv", y, w2, strides=[2], pads=[2, 2]))
    return [g.op("add", g.op("conv", y, w3, pads=[1, 1]), y)]


def conv1d_snake(g: Graph) -> list:
    """DAC's residual unit in small: Snake (``x + sin(a·x)²``, a per channel) before a
    dilated 1-D convolution and a 1x1 one (channels-first: it stays a convolution), the
    unit's input added back."""
    x = g.input([2, 20, 29])
    a = g.const([1, 20, 1], low=0.5)

    def snake(v):
        s = g.op("pow", g.op("sin", g.op("mul", a, v)), g.b.constant(np.float32(2.0)))
        return g.op("add", v, s)

    y = g.op("conv", snake(x), g.const([20, 20, 7], low=-0.5), dilations=[3], pads=[9, 9])
    y = g.op("conv", snake(y), g.const([20, 20, 1], low=-0.5))
    return [g.op("add", x, y)]


def transpose_upsample(g: Graph) -> list:
    """PaddleOCR's detector head: 2x2 stride-2 upsamplers with bias and ReLU."""
    x = g.input([1, 20, 7, 9], "NCHW")
    y = g.op("relu", g.op("conv_transpose", x, g.const([20, 12, 2, 2]), g.const([12]),
                          strides=[2, 2]))  # fmt: skip
    return [g.op("conv_transpose", y, g.const([12, 4, 2, 2]), strides=[2, 2])]


def transpose_padded(g: Graph) -> list:
    """Stride 2, 3x3, asymmetric pads, output_padding, 2 groups."""
    x = g.input([1, 6, 5, 7], "NCHW")
    w, b = g.const([6, 9, 3, 3]), g.const([18])
    return [
        g.op("conv_transpose", x, w, b, strides=[2, 2], pads=[1, 0, 1, 2],
             output_padding=[1, 1], group=2)
    ]  # fmt: skip


def transpose_1d(g: Graph) -> list:
    """1-D, stride 3, dilation 2, pads that crop, output_padding."""
    x = g.input([1, 6, 9])
    return [g.op("conv_transpose", x, g.const([6, 5, 4]), strides=[3], pads=[2, 1],
                 dilations=[2], output_padding=[1])]  # fmt: skip


def grouped_unaligned(g: Graph) -> list:
    """5 groups of 6 channels, 3 outputs each: neither side aligns to C0 or 16."""
    x = g.input([1, 30, 9, 7], "NCHW")
    return [g.op("relu", g.op("conv2d", x, g.const([15, 6, 3, 3]), group=5, pads=[1, 1, 1, 1]))]


def grouped_blocks(g: Graph) -> list:
    """12 groups of 10 channels, 8 outputs each: FRACTAL_Z packs 8 groups a block (two
    blocks, the second ragged)."""
    x = g.input([1, 120, 6, 5], "NCHW")
    return [g.op("conv2d", x, g.const([96, 10, 3, 3]), group=12, strides=[2, 1])]


def stft_hann(g: Graph) -> list:
    """A real [B, N] signal (onnx-asr's spelling) through a 20-sample Hann window every 6
    samples, onesided: 11 bins, 9 frames over 12 hops of 6 channels (2 zeros padded), as
    a conv2d of kernel [1, 4] and 22 output channels."""
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(20) / 20)
    window = g.b.constant(hann.astype(np.float32))
    return [g.op("stft", g.input([2, 70]), g.b.constant(np.array(6)), window, onesided=1)]


def stft_two_sided(g: Graph) -> list:
    """A [B, N, 1] signal, no window, frame_length 16 every 8 samples, both sides: 6 frames
    read 7 hops, the last 4 samples cut (the Kaldi-style tail no frame reaches)."""
    x, hop, length = g.input([1, 60, 1]), g.b.constant(np.array(8)), g.b.constant(np.array(16))
    return [g.op("stft", x, hop, None, length, onesided=0)]


def dft_padded(g: Graph) -> list:
    """A real [2, 3, 20, 1] signal along axis -2, dft_length 32 (a zero-padded tail),
    onesided: 17 bins, a [20, 34] basis."""
    x = g.input([2, 3, 20, 1])
    return [g.op("dft", x, g.b.constant(np.array(32)), axis=-2, onesided=1)]


def dft_cut(g: Graph) -> list:
    """dft_length 40 of a 48-sample signal (the transform cuts the last 8), both sides,
    the axis as an input (DFT-20's form): a [37, 48] x [48, 80] matmul."""
    x, length, axis = g.input([37, 48, 1]), g.b.constant(np.array(40)), g.b.constant(np.array(1))
    return [g.op("dft", x, length, axis)]


def dft_one_signal(g: Graph) -> list:
    """A lone [24, 1] signal (no batch dims), the default length, onesided."""
    return [g.op("dft", g.input([24, 1]), onesided=1)]


def dft_complex_first_axis(g: Graph) -> list:
    """A complex [12, 3, 5, 2] signal along axis 0 (swapped next to the parts and back):
    a [15, 24] x [24, 24] matmul."""
    return [g.op("dft", g.input([12, 3, 5, 2]), None, g.b.constant(np.array(0)))]


def dft_fft2(g: Graph) -> list:
    """FNet's mixing as the dynamo exporter writes ``torch.fft.fft2(x).real``: x [2, 7, 9]
    made complex (a Concat with zeros), transformed along the hidden axis then the
    sequence, the real part taken."""
    x = g.op("unsqueeze", g.input([2, 7, 9]), g.b.constant(np.array([-1])))
    z = g.op("concat", x, g.b.constant(np.zeros((2, 7, 9, 1), np.float32)), axis=-1)
    y = g.op("dft", z, None, g.b.constant(np.array(2)))
    y = g.op("dft", y, None, g.b.constant(np.array(1)))
    return [g.op("gather", y, g.b.constant(np.array(0)), axis=3)]


def dft_inverse(g: Graph) -> list:
    """An inverse transform of a complex [3, 40, 2] spectrum, dft_length 32 (the last 8
    bins cut; a [3, 80] x [80, 64] matmul), and of a real [4, 6, 1] signal."""
    spectrum, length = g.input([3, 40, 2]), g.b.constant(np.array(32))
    return [g.op("dft", spectrum, length, inverse=1), g.op("dft", g.input([4, 6, 1]), inverse=1)]


def signal_by_hops(g: Graph) -> list:
    """basic-pitch's constant-Q filters in small: a one-channel [2, 1, 1, 61] signal, 12
    filters of 10 taps every 4 samples with 3 zeros in front and 2 behind, bias, ReLU:
    over hops of 4 channels (3 taps, the last hop's 2 filter places zero)."""
    x = g.input([2, 1, 1, 61], "NCHW")
    w, b = g.const([12, 1, 1, 10]), g.const([12])
    y = g.op("conv2d", x, w, b, strides=[1, 4], pads=[0, 3, 0, 2], kernel_shape=[1, 10])
    return [g.op("relu", y)]


def signal_by_wide_hops(g: Graph) -> list:
    """A 1-D conv of one channel whose stride passes its taps (5 taps every 8 samples, 3
    filters: decimating low-passes): hops of 8 channels, one tap, the tail cut."""
    return [g.op("conv", g.input([2, 1, 403]), g.const([3, 1, 5]), strides=[8])]


CASES = {
    "signal_by_hops": signal_by_hops,
    "signal_by_wide_hops": signal_by_wide_hops,
    "conv1d_strided": conv1d_strided,
    "conv1d_depthwise": conv1d_depthwise,
    "conv1d_chain": conv1d_chain,
    "conv1d_stack": conv1d_stack,
    "conv1d_snake": conv1d_snake,
    "transpose_upsample": transpose_upsample,
    "transpose_padded": transpose_padded,
    "transpose_1d": transpose_1d,
    "grouped_unaligned": grouped_unaligned,
    "grouped_blocks": grouped_blocks,
    "stft_hann": stft_hann,
    "stft_two_sided": stft_two_sided,
    "dft_padded": dft_padded,
    "dft_cut": dft_cut,
    "dft_one_signal": dft_one_signal,
    "dft_complex_first_axis": dft_complex_first_axis,
    "dft_fft2": dft_fft2,
    "dft_inverse": dft_inverse,
}


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("name", list(CASES))
def test_runs_on_the_cube_and_matches_the_graph(name: str):
    g = Graph(padded=True)
    module = g.b.build(*CASES[name](g))
    original = run_reference(module.clone(), g.arrays)  # before conv-forms rewrites it
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    anchor = "graph.matmul" if name.startswith("dft") else "graph.conv2d"
    assert_units(levels.tiled_kernels, {anchor: CUBE}, "tile-kernels")
    assert not any(op in ("graph.conv", "graph.stft", "graph.dft") or "conv_transpose" in op
                   for k in levels.tiled_kernels for op in k.ops)  # fmt: skip
    assert levels.splits()
    assert_tiled(levels.module)
    assert_no_nan(levels)
    assert_matches(levels)
    for got, want in zip(levels.outputs["fast"], original, strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


def test_a_1d_conv_stack_keeps_nc1hwc0_between_its_convolutions():
    """The ReLUs and the residual add run in the convolutions' epilogues and nothing runs
    between two convolutions: the one vector kernel left views the input as rows, and
    one squeezes the result (before conv-forms moved the ReLUs onto the conv2d results
    and dropped the squeeze / unsqueeze pairs, each ReLU was a kernel of its own between
    two TransData kernels)."""
    g = Graph()
    module = g.b.build(*conv1d_stack(g))
    levels = run_levels(module, g.arrays, "test")
    kernels = [k.ops for k in levels.tiled_kernels]
    with_conv = [ops for ops in kernels if "graph.conv2d" in ops]
    assert len(with_conv) == 3
    assert all(op not in ops for ops in kernels if ops not in with_conv
               for op in ("graph.relu", "graph.add"))  # fmt: skip
    assert len(kernels) - len(with_conv) <= 2
    assert_matches(levels)


def test_a_snake_unit_keeps_nc1hwc0_between_its_convolutions():
    """Between the two convolutions only the Snake's elementwise ops run, on NC1HWC0 data
    (no TransData, squeeze or unsqueeze: the squeezed result was read twice, by the
    Snake's region over it alone), and the 1x1 convolution is a conv2d (channels-first
    data: not a transposed product)."""
    g = Graph()
    module = g.b.build(*conv1d_snake(g))
    levels = run_levels(module, g.arrays, "test")
    kernels = [k.ops for k in levels.tiled_kernels]
    first, second = (i for i, ops in enumerate(kernels) if "graph.conv2d" in ops)
    between = {op for ops in kernels[first + 1 : second] for op in ops}
    assert between and between <= {"graph.mul", "graph.sin", "graph.pow", "graph.add"}
    assert not any("graph.matmul" in ops for ops in kernels)
    assert_matches(levels)


def test_a_1d_conv_costs_what_its_2d_form_does():
    """The cycle model charges a 1-D convolution as the conv2d with H = 1 it runs as: its
    cube kernel takes about what that conv2d written by hand does (ascend910b, 64 -> 64
    channels, L = 400: 2.9 us against 3.3 us, whose mix kernel also stores NCHW on its
    AIVs; the 1-D form's unsqueeze and squeeze are vector kernels of their own)."""

    def estimate(build) -> float:
        """Microseconds of the kernel that runs the conv2d (on ascend910b)."""
        g = Graph()
        module = g.b.build(*build(g))
        run_pipeline("set-target{platform=ascend910b},O2", make_context(), module)
        run_pipeline(lowering_pipeline(), make_context(), module)
        (kernel,) = [k for k in simulate_module(module).kernels if "graph.conv2d" in k.ops]
        return kernel.us

    conv1d = estimate(
        lambda g: [g.op("conv", g.input([1, 64, 400]), g.const([64, 64, 3]), pads=[1, 1])]
    )
    conv2d = estimate(
        lambda g: [
            g.op("conv2d", g.input([1, 64, 1, 400], "NCHW"), g.const([64, 64, 1, 3], "NCHW"),
                 pads=[0, 1, 0, 1])
        ]
    )  # fmt: skip
    assert 0.8 * conv2d <= conv1d <= 1.05 * conv2d


@pytest.mark.parametrize(
    ("name", "weight"), [("signal_by_hops", [12, 4, 1, 3]), ("signal_by_wide_hops", [3, 8, 1, 1])]
)
def test_a_strided_one_channel_conv_runs_over_its_hops(name: str, weight: list[int]):
    """The filter of the rewritten conv2d: ``[O, hop, 1, ceil(L / hop)]``, stride 1."""
    g = Graph()
    module = g.b.build(*CASES[name](g))
    run_pipeline("conv-forms", make_context(), module)
    (conv,) = [op for op in module.walk() if op.name == "graph.conv2d"]
    assert list(conv.operands[1].type.origin_shape) == weight  # type: ignore[union-attr]
    assert list(conv.attr("strides")) == [1, 1]  # type: ignore[attr-defined]


def pool1d_average(g: Graph) -> list:
    """SEW-D's squeeze of the time axis in small: AvgPool1d, kernel = stride = 2, after a
    1-D convolution (its result read by the pool in NC1HWC0); L = 37 leaves a ragged tail."""
    y = g.op("conv", g.input([2, 12, 37]), g.const([20, 12, 3]), pads=[1, 1])
    return [g.op("avg_pool", y, kernel_shape=[2], strides=[2])]


def pool1d_average_padded(g: Graph) -> list:
    """ceil_mode and count_include_pad: the last window past the end, the pads counted."""
    x = g.input([1, 20, 23])
    return [g.op("avg_pool", x, kernel_shape=[3], strides=[3], pads=[1, 1], ceil_mode=1,
                 count_include_pad=1)]  # fmt: skip


def pool1d_max_same(g: Graph) -> list:
    """MaxPool1d with SAME_UPPER padding and a dilation."""
    x = g.input([2, 5, 30])
    return [g.op("max_pool", x, kernel_shape=[3], strides=[2], dilations=[2],
                 auto_pad="SAME_UPPER")]  # fmt: skip


POOL_CASES = {
    "pool1d_average": pool1d_average,
    "pool1d_average_padded": pool1d_average_padded,
    "pool1d_max_same": pool1d_max_same,
}


@pytest.mark.parametrize("name", list(POOL_CASES))
def test_a_1d_pooling_runs_as_a_2d_one_and_matches_the_graph(name: str):
    """``pool1d-as-pool2d``: the pooling strategy tiles NC1HWC0, which a rank-3 tensor has
    not; as a 2-D pool with H = 1 no kernel stays on the host."""
    g = Graph(padded=True)
    module = g.b.build(*POOL_CASES[name](g))
    original = run_reference(module.clone(), g.arrays)
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    pool = "graph.max_pool" if "max" in name else "graph.avg_pool"
    assert_units(levels.tiled_kernels, {pool: "vector"}, "tile-kernels")
    assert_no_nan(levels)
    assert_matches(levels)
    for got, want in zip(levels.outputs["fast"], original, strict=True):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
