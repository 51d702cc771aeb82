"""Differential tests of the tile level: each level against the one above it.

graph (``run_reference`` after O2) -> macro kernels (``lower-graph-to-kernels``, run as is)
-> tiled loops (``tile-kernels``) with both executors (``interpret`` and ``fast``), on

* the random graphs of :mod:`tests.passes.random_graphs`, on the ``test`` preset (tiny
  buffers: many ragged tiles) and on ``ascend910b``;
* hand-built cases that exercise every tiling strategy with ragged tails on the ``test``
  preset (channels off multiples of C0 = 16, rows off the tile height, M / N / K off 16).
  Each case also states the unit its kernels run on: none may fall back to the host.

Every hand-built case runs a second time with its NCHW graph inputs held as NC1HWC0 and NaN
in their padding lanes (``pad_value``): a kernel that reads padding shows up as NaN.
Random convolution / pooling / matmul geometry (hypothesis) checks the numbers on the test
preset beyond the hand-built shapes; ``precision=fp16`` is held to rtol 1e-2 / atol 1e-3.

The bugs these tests found (host fallbacks, a NaN leak in ragged group blocks, rounding of
float -> int casts, a batched broadcast in the fast executor, a LayerNorm recomposition
absorbing a full-shape shift) are fixed; the cases stay as regression tests. A new bug gets
a strict xfail with its reason until it is fixed.
fp32 tolerance: rtol 1e-4, atol 1e-5.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.passes.random_graphs import graphs
from tests.passes.semantics import seeded_inputs
from tilegraph.builder import GraphBuilder
from tilegraph.cost_model.kernel_report import KernelInfo, kernel_report
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR, TILES_ATTR
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.runtime.tile_interpreter import TileCounters
from tilegraph.runtime.tiles import run_tiles

NAN = float("nan")
CUBE, VECTOR = "cube", "vector"
RTOL, ATOL = 1e-4, 1e-5
EXECUTORS = ("interpret", "fast")


class UnitMismatch(AssertionError):
    """A kernel runs on another unit than the case expects (e.g. it fell back to the host)."""


# ---- running the levels -------------------------------------------------------------------


@dataclass
class Levels:
    """The outputs of every level of one module, and its kernels at both tile levels."""

    reference: list[np.ndarray]
    outputs: dict[str, list[np.ndarray]]
    """"macro", "interpret", "fast" -> outputs."""
    macro_kernels: list[KernelInfo]
    tiled_kernels: list[KernelInfo]
    module: ModuleOp
    counters: TileCounters
    """What the interpreter ran of the tiled module."""

    def splits(self) -> bool:
        """Some kernel runs several output tiles, or several K steps on the cube."""
        cube = sum(1 for k in self.tiled_kernels if k.unit == CUBE)
        return (
            max((k.tiles for k in self.tiled_kernels), default=0) > 1
            or self.counters.ops.get("tile.mmad", 0) > cube
        )


def run_levels(
    module: ModuleOp,
    inputs: Sequence[np.ndarray] | dict[str, np.ndarray],
    platform: str = "test",
    precision: str = "origin",
    pad_value: float | None = None,
    small_channel: bool = False,
    o2_options: str = "",
) -> Levels:
    """Optimise (O2, in small-channel mode when asked, with ``o2_options`` such as
    ``coupled-attention=always``), lower and tile ``module`` in place, running every level
    on ``inputs``."""
    options = " ".join(o for o in ("small-channel=true" if small_channel else "", o2_options) if o)
    with _collector_paused():
        return _run_levels(module, inputs, platform, precision, pad_value, options)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """run_pipeline ends every outermost pipeline with a full gc.collect() unless the caller
    pauses the collector; three pipelines per case made that most of this file's time."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _run_levels(module, inputs, platform, precision, pad_value, o2_options) -> Levels:
    ctx = make_context()
    o2 = f"O2{{{o2_options}}}" if o2_options else "O2"
    run_pipeline(f"set-target{{platform={platform} precision={precision}}},{o2}", ctx, module)
    reference = run_reference(module, inputs, pad_value=pad_value)
    run_pipeline("lower-graph-to-kernels", ctx, module)
    module.verify()
    macro_kernels = kernel_report(module)
    outputs = {"macro": run_tiles(module, inputs, pad_value=pad_value)}
    run_pipeline("tile-kernels", ctx, module)
    module.verify()
    counters = TileCounters()
    for executor in EXECUTORS:
        outputs[executor] = run_tiles(
            module,
            inputs,
            executor=executor,
            pad_value=pad_value,
            counters=counters if executor == "interpret" else None,
        )
    return Levels(reference, outputs, macro_kernels, kernel_report(module), module, counters)


def assert_matches(levels: Levels, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Macro against the graph, tiled (both executors) against the macro kernels."""
    above = {"macro": ("graph", levels.reference), "interpret": ("macro", levels.outputs["macro"])}
    above["fast"] = above["interpret"]
    for level, got in levels.outputs.items():
        name, want = above[level]
        assert len(got) == len(want), f"{level}: {len(got)} outputs, {name} has {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert a.shape == b.shape, f"{level} output {i}: shape {a.shape} != {b.shape}"
            assert a.dtype == b.dtype, f"{level} output {i}: dtype {a.dtype} != {b.dtype}"
            np.testing.assert_allclose(
                a, b, rtol=rtol, atol=atol, equal_nan=True,
                err_msg=f"{level} output {i} differs from the {name} level",
            )  # fmt: skip
            # and transitively from the graph (the tolerance is per level: allow it twice)
            np.testing.assert_allclose(
                a, levels.reference[i], rtol=2 * rtol, atol=2 * atol, equal_nan=True,
                err_msg=f"{level} output {i} differs from the graph level",
            )  # fmt: skip


def assert_no_nan(levels: Levels) -> None:
    """No level's output holds NaN (run with NaN in the inputs' padding lanes)."""
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        for i, out in enumerate(outputs):
            assert not np.isnan(out).any(), f"{level} output {i}: NaN from the padding lanes"


def assert_units(kernels: list[KernelInfo], expected: dict[str, str], level: str) -> None:
    """No kernel on the host; every kernel computing an op of ``expected`` on its unit."""
    problems = [
        f"@{k.name} ({','.join(k.ops)}) runs on the host: {k.reason}"
        for k in kernels
        if k.unit == "host"
    ]
    for op, unit in expected.items():
        found = [k for k in kernels if op in k.ops]
        if not found:
            problems.append(f"no kernel computes {op}")
        # a mix kernel (decoupled presets) runs its cube op on its AIC part
        units = [(k, CUBE if k.unit == "mix" else k.unit) for k in found]
        problems += [f"@{k.name} computes {op} on {u}, not {unit}" for k, u in units if u != unit]
    if problems:
        raise UnitMismatch(f"after {level}: " + "; ".join(problems))


def estimated_cycles(build: Callable[[Graph], Sequence[SSAValue]], platform: str = "test") -> float:
    """The cycle model's total over the kernels of ``build``'s graph, lowered for
    ``platform`` (a strategy's cost: > 0, and growing with the work)."""
    from tilegraph.cost_model.cycles import simulate_module

    g = Graph()
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, platform)
    return sum(k.cycles for k in simulate_module(levels.module).kernels)


def assert_single_host_kernel(build: Callable[[Graph], SSAValue], reason: str) -> None:
    """The graph ``build`` makes is one kernel that stays on the host saying ``reason``, and
    every level still computes it (the host kernel runs the reference)."""
    g = Graph()
    module = g.b.build(build(g))
    levels = run_levels(module, g.arrays, "test")
    assert_matches(levels, rtol=0, atol=0)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "host" and kernel.reason is not None and reason in kernel.reason


def assert_tiled(module: ModuleOp) -> None:
    """Tiled kernels keep no graph op and record their tile count; host ones keep theirs."""
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp) or KERNEL_ATTR not in fn.attributes:
            continue
        unit = fn.attributes[KERNEL_ATTR].data  # type: ignore[attr-defined]
        graph_ops = [op.name for op in fn.walk() if op.name.startswith(("graph.", "layout."))]
        if unit == "host":
            assert graph_ops, f"@{fn.sym_name.data}: a host kernel without its macro body"
        else:
            assert not graph_ops, f"@{fn.sym_name.data} ({unit}) still has {graph_ops}"
            assert fn.attributes[TILES_ATTR].value.data >= 1  # type: ignore[attr-defined]


# ---- random graphs ----------------------------------------------------------------------


class Printed:
    """A drawn module whose repr is its MLIR text (readable falsifying examples), with its
    inputs (None: seeded ones) and whether they are held padded (run with NaN padding)."""

    def __init__(self, module: ModuleOp, inputs=None, padded: bool = False):
        self.module, self.inputs, self.padded = module, inputs, padded

    def __repr__(self) -> str:
        return f"<padded={self.padded}\n{self.module}\n>"


@st.composite
def printed(draw, strategy) -> Printed:
    """``strategy``'s module (or (Graph, outputs, padded)) as a :class:`Printed` (a composite:
    ``.map`` would show the ModuleOp's dataclass repr)."""
    drawn = draw(strategy)
    if isinstance(drawn, ModuleOp):
        return Printed(drawn)
    g, outputs, padded = drawn
    return Printed(g.b.build(*outputs), g.arrays, padded)


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@settings(max_examples=150)
@given(graph=printed(graphs()))
def test_random_graphs_every_level_agrees(platform: str, graph: Printed):
    """NaN fills the padding lanes of every storage-layout input (as test_differential)."""
    module = graph.module.clone()
    levels = run_levels(module, seeded_inputs(module), platform, pad_value=NAN)
    assert_tiled(levels.module)
    assert_matches(levels)


# ---- hand-built cases -------------------------------------------------------------------


class Graph:
    """A GraphBuilder with seeded data that records the input arrays it makes.

    ``padded``: NCHW feature-map inputs are held as NC1HWC0, NCDHW ones as NDC1HWC0 (their
    padding lanes can hold NaN). ``dtype``: the float type of the inputs and constants."""

    def __init__(self, padded: bool = False, seed: int = 0, dtype: str = "float32"):
        self.b = GraphBuilder()
        self.rng = np.random.default_rng(seed)
        self.padded = padded
        self.dtype = np.dtype(dtype)
        self.arrays: list[np.ndarray] = []

    def input(self, shape: Sequence[int], fmt: str = "ND") -> SSAValue:
        name = f"in{len(self.arrays)}"
        blocked = {("NCHW", 4): "NC1HWC0", ("NCDHW", 5): "NDC1HWC0"}.get((fmt, len(shape)))
        storage = blocked if self.padded else None
        t = TensorType(list(shape), element_type_of(self.dtype), fmt, storage)
        arg = self.b.block.insert_arg(t, len(self.b.block.args))
        arg.name_hint = name
        self.arrays.append(self.rng.standard_normal(shape).astype(self.dtype))
        return arg

    def const(self, shape: Sequence[int], fmt: str | None = None, low: float | None = None):
        """Standard normal data, or uniform in [low, low + 1)."""
        data = (
            self.rng.standard_normal(shape)
            if low is None
            else self.rng.uniform(low, low + 1.0, shape)
        )
        return self.b.constant(data.astype(self.dtype), fmt)

    def ints(self, values: Sequence[int]) -> SSAValue:
        return self.b.constant(np.array(values, np.int64))

    def op(self, kind: str, *operands: SSAValue | None, **attrs) -> SSAValue:
        return self.b.op(kind, *operands, **attrs)


Builder = Callable[[Graph], Sequence[SSAValue]]


@dataclass(frozen=True)
class Case:
    """``build`` returns the outputs; ``units``: op name -> the unit of every kernel that
    computes it (at least one must). ``xfail``: a known bug of the plain run (a host
    fallback, see ``raises``); ``nan_xfail``: one of the NaN-padding run."""

    id: str
    build: Builder
    units: dict[str, str]
    xfail: str | None = None
    nan_xfail: str | None = None
    raises: type[Exception] = UnitMismatch
    """What the plain run's xfail raises: a host fallback fails the unit check
    (UnitMismatch), wrong numbers an AssertionError, a crash its exception."""
    splits: bool = True
    """Some kernel loops over tiles on the test preset (False: the whole tensor is one
    tile by design, e.g. a reduction over every axis)."""

    def module(self, padded: bool = False) -> tuple[ModuleOp, list[np.ndarray]]:
        g = Graph(padded)
        outputs = self.build(g)
        return g.b.build(*outputs), g.arrays


CONV = {"graph.conv2d": CUBE}

# ---- convolution ------------------------------------------------------------------------
# name: (input shape, weight shape, conv attributes)
CONVS: dict[str, tuple[list[int], list[int], dict]] = {
    "stride2": ([1, 20, 11, 11], [24, 20, 3, 3], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "dilation2": ([1, 12, 10, 9], [20, 12, 3, 3], {"dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    "asym_pads": ([1, 18, 9, 10], [20, 18, 3, 3], {"pads": [0, 2, 1, 0]}),
    "1x1": ([1, 36, 7, 9], [40, 36, 1, 1], {}),
    "7x7": ([1, 3, 17, 11], [18, 3, 7, 7], {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    "7x7_wide": ([1, 3, 17, 15], [18, 3, 7, 7], {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    "group2": ([1, 20, 9, 9], [24, 10, 3, 3], {"group": 2, "pads": [1, 1, 1, 1]}),
    "group2_aligned": ([1, 32, 9, 9], [32, 16, 3, 3], {"group": 2, "pads": [1, 1, 1, 1]}),
    "group4": ([1, 24, 9, 7], [24, 6, 3, 3], {"group": 4, "pads": [1, 1, 1, 1]}),
    "depthwise": ([1, 20, 9, 9], [20, 1, 3, 3], {"group": 20, "pads": [1, 1, 1, 1]}),
    "depthwise_s2": (
        [1, 24, 11, 11],
        [24, 1, 3, 3],
        {"group": 24, "strides": [2, 2], "pads": [1, 1, 1, 1]},
    ),  # fmt: skip
    "depthwise_aligned": ([1, 32, 9, 7], [32, 1, 3, 3], {"group": 32, "pads": [1, 1, 1, 1]}),
    # Rows that do not fit the test preset: a 70-pixel row's img2col is too big for L0A, so
    # the width is cut (tiles of 24 columns, a ragged tail of 22) and the two C1 of the
    # window are loaded one at a time (see also conv_deep_channels).
    "wide_rows": ([1, 20, 5, 70], [24, 20, 3, 3], {"pads": [1, 1, 1, 1]}),
    "wide_rows_s2": ([1, 3, 9, 61], [18, 3, 7, 7], {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
}


def _conv_out(x: Sequence[int], w: Sequence[int], attrs: dict) -> list[int]:
    s, d = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    spans = [(w[2 + i] - 1) * d[i] + 1 for i in range(2)]
    return [x[0], w[0], *((x[2 + i] + p[i] + p[2 + i] - spans[i]) // s[i] + 1 for i in range(2))]


def conv_case(name: str, epilogue: str) -> Case:
    x_shape, w_shape, attrs = CONVS[name]

    def build(g: Graph) -> list[SSAValue]:
        x = g.input(x_shape, "NCHW")
        bias = g.const([w_shape[0]]) if epilogue == "bias_relu" else None
        y = g.op("conv2d", x, g.const(w_shape, "NCHW"), bias, **attrs)
        if epilogue == "residual":
            y = g.op("add", y, g.input(_conv_out(x_shape, w_shape, attrs), "NCHW"))
        return [g.op("relu", y)]

    return Case(f"conv_{name}_{epilogue}", build, CONV)


def conv_deep_channels(g: Graph) -> list[SSAValue]:
    """250 channels (16 C1, the last with 10 valid lanes): even a one-pixel 3x3 window of
    them is too big for the test preset's L1, so the window comes in chunks of 8 C1, each a
    part of the K reduction. Small weights: a 2250-term fp32 sum of unit terms would differ
    between accumulation orders by more than the tolerance."""
    x = g.input([1, 250, 4, 6], "NCHW")
    w = g.b.constant((0.01 * g.rng.standard_normal([20, 250, 3, 3])).astype(np.float32), "NCHW")
    return [g.op("relu", g.op("conv2d", x, w, pads=[1, 1, 1, 1]))]


def conv_residual_chain(g: Graph) -> list[SSAValue]:
    """conv -> per-channel scale and shift -> + block input -> relu (ResNet's block end)."""
    x = g.input([1, 20, 9, 7], "NCHW")
    y = g.op("conv2d", x, g.const([20, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1])
    y = g.op("add", g.op("mul", y, g.const([20, 1, 1], low=0.5)), g.const([20, 1, 1]))
    return [g.op("relu", g.op("add", y, x))]


def conv_conv(g: Graph) -> list[SSAValue]:
    """Two convolutions in a row: the second reads the first's NC1HWC0 result from GM."""
    x = g.input([1, 20, 9, 9], "NCHW")
    y = g.op("relu", g.op("conv2d", x, g.const([24, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1]))
    return [g.op("conv2d", y, g.const([8, 24, 3, 3], "NCHW"), strides=[2, 2])]


def conv_per_channel_epilogue(g: Graph) -> list[SSAValue]:
    """conv -> * per-channel -> + per-channel -> sigmoid: a vector epilogue on UB."""
    x = g.input([1, 20, 9, 9], "NCHW")
    c = g.op("conv2d", x, g.const([24, 20, 1, 1], "NCHW"))
    y = g.op("add", g.op("mul", c, g.const([24, 1, 1], low=0.5)), g.const([24, 1, 1]))
    return [g.op("sigmoid", y)]


# ---- matmul / gemm ----------------------------------------------------------------------
def matmul_2d(g: Graph) -> list[SSAValue]:
    return [g.op("matmul", g.input([37, 45]), g.const([45, 29]))]


def matmul_2d_small_m(g: Graph) -> list[SSAValue]:
    return [g.op("matmul", g.input([19, 45]), g.const([45, 50]))]


def matmul_2d_inputs(g: Graph) -> list[SSAValue]:
    return [g.op("matmul", g.input([19, 40]), g.input([40, 75]))]


def matmul_relu(g: Graph) -> list[SSAValue]:
    return [g.op("relu", g.op("matmul", g.input([23, 20]), g.const([20, 18])))]


def matmul_batched_broadcast(g: Graph) -> list[SSAValue]:
    return [g.op("matmul", g.input([3, 1, 19, 21]), g.const([4, 21, 18]))]


def matmul_batched_inputs(g: Graph) -> list[SSAValue]:
    """Batched, the right operand broadcast along the batch."""
    return [g.op("matmul", g.input([2, 17, 20]), g.input([1, 20, 37]))]


def gemm_transb_bias(g: Graph) -> list[SSAValue]:
    return [g.op("gemm", g.input([20, 33]), g.const([57, 33]), g.const([57]), transB=1)]


def gemm_alpha_beta_full_c(g: Graph) -> list[SSAValue]:
    a, b, c = g.input([20, 33]), g.const([33, 27]), g.const([20, 27])
    return [g.op("gemm", a, b, c, alpha=0.5, beta=2.0)]


def gemm_small_alpha_beta_full_c(g: Graph) -> list[SSAValue]:
    """M, N < 16: one base block; alpha / beta / a full C on UB."""
    a, b, c = g.input([9, 33]), g.const([33, 13]), g.input([9, 13])
    return [g.op("gemm", a, b, c, alpha=1.5, beta=-0.5)]


def gemm_transa_row_c(g: Graph) -> list[SSAValue]:
    """transA, and a C of one row broadcast down the columns with beta."""
    a, b, c = g.input([33, 9]), g.const([33, 11]), g.const([1, 11])
    return [g.op("gemm", a, b, c, beta=0.5, transA=1)]


def linear_sigmoid(g: Graph) -> list[SSAValue]:
    """Gemm + bias + an epilogue the fixpipe cannot do (sigmoid on UB)."""
    y = g.op("gemm", g.input([9, 40]), g.const([37, 40]), g.const([37]), transB=1)
    return [g.op("sigmoid", y)]


def linear_one_element_sigmoid(g: Graph) -> list[SSAValue]:
    """A one-element output ([1, 1]: a classifier head's last Gemm) with a vector epilogue:
    the epilogue runs on the cube's padded 16x16 accumulator tile (on a decoupled preset the
    AIVs' shares of it), not on a one-element tile of its own."""
    y = g.op("gemm", g.input([1, 40]), g.const([1, 40]), g.const([1]), transB=1)
    scale = g.b.constant(np.array(0.05, np.float32))
    zero = g.b.constant(np.array(128, np.uint8))
    q = g.op("quantize_linear", y, scale, zero)  # a QDQ model's head (Smart Turn's)
    return [g.op("sigmoid", g.op("dequantize_linear", q, scale, zero))]


# ---- elementwise ------------------------------------------------------------------------
def eltwise_per_channel(g: Graph) -> list[SSAValue]:
    """(x * s + b) -> relu -> sigmoid with per-channel constants on an NCHW map."""
    x = g.input([1, 20, 17, 9], "NCHW")
    y = g.op("add", g.op("mul", x, g.const([20, 1, 1], low=0.5)), g.const([20, 1, 1]))
    return [g.op("sigmoid", g.op("relu", y))]


def eltwise_per_channel_4d_constants(g: Graph) -> list[SSAValue]:
    """The same chain with [1, C, 1, 1] constants (same rank as the map)."""
    x = g.input([1, 20, 17, 9], "NCHW")
    y = g.op("add", g.op("mul", x, g.const([1, 20, 1, 1], low=0.5)), g.const([1, 20, 1, 1]))
    return [g.op("sigmoid", g.op("relu", y))]


def eltwise_on_5hd(g: Graph) -> list[SSAValue]:
    """A per-channel chain on the NC1HWC0 result of a max pool (a kernel of its own)."""
    x = g.input([1, 20, 9, 9], "NCHW")
    c = g.op("relu", g.op("conv2d", x, g.const([24, 20, 1, 1], "NCHW")))
    p = g.op("max_pool", c, kernel_shape=[2, 2])
    y = g.op("tanh", g.op("mul", p, g.const([24, 1, 1], low=0.5)))
    return [g.op("sub", g.op("max", p, g.const([24, 1, 1])), y)]


def eltwise_2d_broadcast(g: Graph) -> list[SSAValue]:
    x = g.input([33, 50])
    y = g.op("div", g.op("add", x, g.const([50])), g.const([33, 1], low=0.5))
    return [g.op("tanh", g.op("sub", y, g.input([33, 50])))]


def cast_round_trip(g: Graph) -> list[SSAValue]:
    """float32 -> int32 -> float32 (truncation toward zero, as ONNX Cast)."""
    x = g.input([9, 37])
    return [g.op("cast", g.op("cast", g.op("mul", x, g.const([37], low=1.0)), to=6), to=1)]


def eltwise_two_inputs_4d(g: Graph) -> list[SSAValue]:
    a, b = g.input([2, 20, 5, 7], "NCHW"), g.input([2, 20, 5, 7], "NCHW")
    return [g.op("min", g.op("mul", a, b), g.op("exp", a))]


# ---- pooling, reductions ----------------------------------------------------------------
def pool_case(kind: str, shape: Sequence[int], after_conv: bool = False, **attrs) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        x = g.input(shape, "NCHW")
        if after_conv:
            x = g.op("relu", g.op("conv2d", x, g.const([20, shape[1], 3, 3], "NCHW")))
        return [g.op(kind, x, **attrs)]

    return build


def unary_case(kind: str, shape: Sequence[int], fmt: str = "ND", **attrs) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        return [g.op(kind, g.input(shape, fmt), **attrs)]

    return build


def reduce_case(kind: str, shape: Sequence[int], axes: Sequence[int], keepdims: int) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        return [g.op(kind, g.input(shape), g.ints(axes), keepdims=keepdims)]

    return build


def reduce_all_case(kind: str, shape: Sequence[int], keepdims: int) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        return [g.op(kind, g.input(shape), keepdims=keepdims)]

    return build


def layer_norm(g: Graph) -> list[SSAValue]:
    x = g.input([6, 5, 48])
    return [g.op("layer_norm", x, g.const([48], low=0.5), g.const([48]), axis=-1)]


def layer_norm_two_axes(g: Graph) -> list[SSAValue]:
    x = g.input([3, 7, 5, 9])
    return [g.op("layer_norm", x, g.const([5, 9], low=0.5), g.const([5, 9]), axis=2)]


def rms_norm(g: Graph) -> list[SSAValue]:
    x = g.input([6, 5, 48])
    return [g.op("rms_norm", x, g.const([48], low=0.5), axis=-1, epsilon=1e-6)]


def rms_norm_two_axes(g: Graph) -> list[SSAValue]:
    x = g.input([3, 7, 5, 9])
    return [g.op("rms_norm", x, g.const([5, 9], low=0.5), axis=2)]


def global_avg_after_conv(g: Graph) -> list[SSAValue]:
    x = g.input([1, 20, 7, 9], "NCHW")
    y = g.op("relu", g.op("conv2d", x, g.const([24, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1]))
    return [g.op("global_avg_pool", y)]


# ---- concat, reshape ----------------------------------------------------------------------
def concat_case(epilogues: bool, first: int, second: int) -> Builder:
    """Two convolutions' NC1HWC0 results concatenated along channels (a ReLU and a
    sigmoid before it, or none)."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input([1, 20, 9, 7], "NCHW")
        a = g.op("conv2d", x, g.const([first, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1])
        b = g.op("conv2d", x, g.const([second, 20, 1, 1], "NCHW"))
        if epilogues:
            a, b = g.op("relu", a), g.op("sigmoid", b)
        return [g.op("concat", a, b, axis=1)]

    return build


def concat_then_conv(g: Graph) -> list[SSAValue]:
    """The concat result feeds another convolution."""
    x = g.input([1, 16, 7, 7], "NCHW")
    a = g.op("relu", g.op("conv2d", x, g.const([16, 16, 1, 1], "NCHW")))
    b = g.op("relu", g.op("conv2d", x, g.const([32, 16, 3, 3], "NCHW"), pads=[1, 1, 1, 1]))
    c = g.op("concat", a, b, axis=1)
    return [g.op("conv2d", c, g.const([20, 48, 1, 1], "NCHW"))]


def concat_2d(g: Graph) -> list[SSAValue]:
    a, b = g.input([37, 19]), g.input([37, 30])
    return [g.op("relu", g.op("concat", a, b, axis=1))]


def flatten_after_conv(g: Graph) -> list[SSAValue]:
    x = g.input([1, 20, 7, 5], "NCHW")
    y = g.op("relu", g.op("conv2d", x, g.const([24, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1]))
    return [g.op("flatten", y, axis=1)]


def reshape_after_conv(g: Graph) -> list[SSAValue]:
    x = g.input([2, 20, 5, 5], "NCHW")
    y = g.op("conv2d", x, g.const([18, 20, 3, 3], "NCHW"))
    return [g.op("reshape", y, g.ints([2, 18, 9]))]


def flatten_gemm(g: Graph) -> list[SSAValue]:
    """conv -> flatten -> Linear: the classifier head of the light models."""
    x = g.input([1, 20, 5, 5], "NCHW")
    y = g.op("relu", g.op("conv2d", x, g.const([20, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1]))
    f = g.op("flatten", y, axis=1)
    return [g.op("gemm", f, g.const([10, 500]), g.const([10]), transB=1)]


def reshape_2d(g: Graph) -> list[SSAValue]:
    x = g.input([30, 47])
    return [g.op("reshape", g.op("exp", x), g.ints([3, 10, 47]))]


POOLS = {
    "max_pool_3x3_s2": ("max_pool", [1, 20, 11, 11], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "max_pool_ceil": ("max_pool", [1, 20, 10, 9], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "max_pool_2x2_batch2": ("max_pool", [2, 7, 9, 9], {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "avg_pool_exclude_pad": ("avg_pool", [1, 20, 9, 10], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0}),
    "avg_pool_include_pad": ("avg_pool", [1, 20, 9, 10], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    "avg_pool_ceil": ("avg_pool", [1, 18, 10, 11], {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "avg_pool_ceil_include_pad": ("avg_pool", [1, 18, 10, 11], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1, "count_include_pad": 1}),
    # a ceil_mode window far larger than the image (efficientnet's AvgPool2d(1280) over 5x5):
    # the taps that only see padding are cut, so the window fits UB
    "avg_pool_window_past_image": ("avg_pool", [2, 16, 5, 5], {"kernel_shape": [1280, 1280], "strides": [1280, 1280], "ceil_mode": 1, "count_include_pad": 1}),
    "max_pool_window_past_image": ("max_pool", [2, 16, 5, 7], {"kernel_shape": [600, 600], "strides": [600, 600], "ceil_mode": 1}),
}  # fmt: skip
WIDE_POOLS = {
    # After a convolution (NC1HWC0, 16 lanes of 4 B) rows wider than the test preset's UB
    # holds (3 input rows x ~40 columns x 64 B): the output width is cut into column tiles,
    # the last ragged. Shapes are the convolution's input (a 3x3 one, no padding).
    "max_pool_wide": ("max_pool", [1, 20, 9, 42], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "avg_pool_wide_exclude_pad": ("avg_pool", [1, 20, 7, 39], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 0}),
    "avg_pool_wide_ceil_include_pad": ("avg_pool", [1, 18, 8, 43], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1, "count_include_pad": 1}),
}  # fmt: skip

REDUCTIONS = {
    "reduce_sum_keepdims1": ("reduce_sum", [48, 40], [1], 1),
    "reduce_sum_keepdims0": ("reduce_sum", [48, 40], [1], 0),
    "reduce_sum_middle_keepdims0": ("reduce_sum", [12, 17, 10], [1], 0),
    "reduce_mean_keepdims1": ("reduce_mean", [4, 9, 33], [-1], 1),
    "reduce_mean_keepdims0": ("reduce_mean", [4, 9, 33], [-1], 0),
    "reduce_max_keepdims1": ("reduce_max", [5, 7, 18], [0, 2], 1),
    "reduce_max_keepdims0": ("reduce_max", [5, 7, 18], [0, 2], 0),
}


def _cases() -> list[Case]:
    cases = [conv_case(name, epilogue) for epilogue in ("relu", "residual") for name in CONVS]
    cases += [
        conv_case("1x1", "bias_relu"),
        Case("conv_deep_channels", conv_deep_channels, CONV),
        conv_case("stride2", "bias_relu"),
        Case("conv_residual_chain", conv_residual_chain, CONV),
        Case("conv_per_channel_epilogue", conv_per_channel_epilogue, CONV),
        Case("conv_conv", conv_conv, CONV),
        Case("matmul_2d", matmul_2d, {"graph.matmul": CUBE}),
        Case("matmul_2d_small_m", matmul_2d_small_m, {"graph.matmul": CUBE}),
        Case("matmul_2d_inputs", matmul_2d_inputs, {"graph.matmul": CUBE}),
        Case("matmul_relu", matmul_relu, {"graph.matmul": CUBE}),
        Case(
            "matmul_batched_broadcast_const",
            matmul_batched_broadcast,
            {"graph.matmul": CUBE},
        ),
        Case("matmul_batched_broadcast_inputs", matmul_batched_inputs, {"graph.matmul": CUBE}),
        Case("gemm_transb_bias", gemm_transb_bias, {"graph.gemm": CUBE}),
        Case(
            "gemm_alpha_beta_full_c",
            gemm_alpha_beta_full_c,
            {"graph.gemm": CUBE},
        ),
        Case("gemm_small_alpha_beta_full_c", gemm_small_alpha_beta_full_c, {"graph.gemm": CUBE}),
        Case("gemm_transa_row_c", gemm_transa_row_c, {"graph.gemm": CUBE}),
        Case(
            "linear_sigmoid",
            linear_sigmoid,
            {"graph.gemm": CUBE, "graph.sigmoid": VECTOR},
        ),
        Case(
            "linear_one_element_sigmoid",
            linear_one_element_sigmoid,
            {"graph.gemm": CUBE, "graph.quantize_linear": VECTOR, "graph.sigmoid": VECTOR},
        ),
        Case(
            "eltwise_per_channel",
            eltwise_per_channel,
            {"graph.sigmoid": VECTOR},
            raises=ValueError,
        ),
        Case(
            "eltwise_per_channel_4d_constants",
            eltwise_per_channel_4d_constants,
            {"graph.sigmoid": VECTOR},
        ),
        Case("eltwise_on_5hd", eltwise_on_5hd, {**CONV, "graph.tanh": VECTOR}),
        Case("eltwise_2d_broadcast", eltwise_2d_broadcast, {"graph.tanh": VECTOR}),
        Case("eltwise_two_inputs_4d", eltwise_two_inputs_4d, {"graph.min": VECTOR}),
        Case(
            "cast_f32_i32_f32",
            cast_round_trip,
            {"graph.cast": VECTOR},
            raises=AssertionError,
        ),
    ]
    for name, (kind, shape, attrs) in POOLS.items():
        cases.append(Case(name, pool_case(kind, shape, **attrs), {f"graph.{kind}": VECTOR}))
    for name, (kind, shape, attrs) in WIDE_POOLS.items():
        build = pool_case(kind, shape, True, **attrs)
        cases.append(Case(name, build, {**CONV, f"graph.{kind}": VECTOR}))
    cases += [
        Case(
            "max_pool_after_conv",
            pool_case("max_pool", [1, 20, 11, 11], True, kernel_shape=[3, 3], strides=[2, 2]),
            {**CONV, "graph.max_pool": VECTOR},
        ),
        Case(
            "global_avg_pool",
            unary_case("global_avg_pool", [1, 20, 7, 9], "NCHW"),
            {"graph.global_avg_pool": VECTOR},
        ),
        Case(
            "global_avg_pool_after_conv",
            global_avg_after_conv,
            {**CONV, "graph.global_avg_pool": VECTOR},
        ),
        Case("softmax", unary_case("softmax", [7, 50], axis=-1), {"graph.softmax": VECTOR}),
        Case(
            "softmax_axis1_3d",
            unary_case("softmax", [6, 21, 9], axis=1),
            {"graph.softmax": VECTOR},
        ),
        Case(
            "log_softmax",
            unary_case("log_softmax", [20, 37], axis=-1),
            {"graph.log_softmax": VECTOR},
        ),
    ]
    for name, (kind, shape, axes, keep) in REDUCTIONS.items():
        build = reduce_case(kind, shape, axes, keep)
        # Reducing axis 0 needs the whole tensor in one tile: nothing to split.
        cases.append(Case(name, build, {f"graph.{kind}": VECTOR}, splits=0 not in axes))
    cases += [
        Case(
            "reduce_sum_all_keepdims0",
            reduce_all_case("reduce_sum", [6, 40], 0),
            {"graph.reduce_sum": VECTOR},
            splits=False,
        ),
        Case(
            "reduce_max_all_keepdims1",
            reduce_all_case("reduce_max", [6, 40], 1),
            {"graph.reduce_max": VECTOR},
            splits=False,
        ),
        Case("layer_norm", layer_norm, {"graph.layer_norm": VECTOR}),
        Case("layer_norm_two_axes", layer_norm_two_axes, {"graph.layer_norm": VECTOR}),
        Case("rms_norm", rms_norm, {"graph.rms_norm": VECTOR}),
        Case("rms_norm_two_axes", rms_norm_two_axes, {"graph.rms_norm": VECTOR}),
        Case("concat_5hd", concat_case(False, 24, 12), {**CONV, "graph.concat": VECTOR}),
        Case("concat_5hd_relu", concat_case(True, 24, 12), {**CONV, "graph.concat": VECTOR}),
        Case(
            "concat_5hd_aligned_relu",
            concat_case(True, 16, 20),
            {**CONV, "graph.concat": VECTOR},
        ),
        Case("concat_then_conv", concat_then_conv, {**CONV, "graph.concat": VECTOR}),
        Case("concat_2d_relu", concat_2d, {"graph.concat": VECTOR}),
        Case("flatten_after_conv", flatten_after_conv, {**CONV, "graph.flatten": VECTOR}),
        Case("reshape_after_conv", reshape_after_conv, {**CONV, "graph.reshape": VECTOR}),
        Case(
            "flatten_gemm",
            flatten_gemm,
            {**CONV, "graph.flatten": VECTOR, "graph.gemm": CUBE},
        ),
        Case("reshape_2d", reshape_2d, {"graph.reshape": VECTOR}),
    ]
    return cases


CASES = _cases()


def _params(xfail_of: Callable[[Case], str | None], units: bool) -> list:
    """One param per case, with its strict xfail: a host fallback must fail on the unit
    check (the numbers of a known fallback are still checked)."""
    params = []
    for case in CASES:
        reason = xfail_of(case)
        raises = case.raises if units else AssertionError
        marks = [pytest.mark.xfail(strict=True, reason=reason, raises=raises)] if reason else []
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


@pytest.mark.parametrize("case", _params(lambda c: c.xfail, units=True))
def test_hand_built_case(case: Case):
    """Every level agrees on the test preset, and every kernel runs on the expected unit
    (numbers are checked first: a known host fallback must still compute the right thing)."""
    module, inputs = case.module()
    levels = run_levels(module, inputs, "test")
    assert_matches(levels)
    assert_tiled(levels.module)
    assert_units(levels.macro_kernels, case.units, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, case.units, "tile-kernels{platform=test}")
    if case.splits:
        assert levels.splits(), "the test preset should split some kernel into tiles"


@pytest.mark.parametrize("case", _params(lambda c: c.nan_xfail, units=False))
def test_hand_built_case_nan_padding(case: Case):
    """NCHW inputs held as NC1HWC0 with NaN in the padding lanes: no NaN may leak."""
    module, inputs = case.module(padded=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)


# ---- random geometry --------------------------------------------------------------------
# Random convolution / pooling / matmul geometry on the test preset, NaN in the padding
# lanes when the inputs are held NC1HWC0. Numbers only: many draws fall back to the host
# (the hand-built cases pin the units and the xfails name the causes). Per-channel
# constants are [1, C, 1, 1] here (the hand-built cases cover [C, 1, 1]).

Drawn = tuple[Graph, list[SSAValue], bool]
"""A graph, its outputs, and whether its inputs are padded (run with NaN padding)."""


@st.composite
def conv_graphs(draw) -> Drawn:
    padded = draw(st.booleans())
    g = Graph(padded, seed=draw(st.integers(0, 2**16)))
    depthwise = draw(st.sampled_from([False, False, False, True]))
    if depthwise:
        c = draw(st.integers(1, 40))
        group, m = c, c * draw(st.sampled_from([1, 2]))
    else:
        group = draw(st.sampled_from([1, 1, 1, 2, 3, 4]))
        c, m = group * draw(st.integers(1, 12)), group * draw(st.integers(1, 12))
    kernel = [draw(st.integers(1, 5)), draw(st.integers(1, 5))]
    strides = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    dilations = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    pads = [draw(st.integers(0, 3)) for _ in range(4)]
    n, h, w = draw(st.sampled_from([1, 1, 2])), draw(st.integers(1, 14)), draw(st.integers(1, 14))
    out = _conv_out([n, c, h, w], [m, c // group, *kernel], dict(strides=strides, dilations=dilations, pads=pads))  # fmt: skip
    assume(out[2] >= 1 and out[3] >= 1)
    x = g.input([n, c, h, w], "NCHW")
    bias = g.const([m]) if draw(st.booleans()) else None
    y = g.op(
        "conv2d", x, g.const([m, c // group, *kernel], "NCHW"), bias,
        strides=strides, dilations=dilations, pads=pads, group=group,
    )  # fmt: skip
    epilogue = draw(st.sampled_from(["none", "relu", "residual", "per_channel", "sigmoid"]))
    if epilogue == "relu":
        y = g.op("relu", y)
    elif epilogue == "residual":
        y = g.op("relu", g.op("add", y, g.input(out, "NCHW")))
    elif epilogue == "per_channel":
        y = g.op("add", g.op("mul", y, g.const([1, m, 1, 1], low=0.5)), g.const([1, m, 1, 1]))
    elif epilogue == "sigmoid":
        y = g.op("sigmoid", y)
    return g, [y], padded


@st.composite
def pool_graphs(draw) -> Drawn:
    padded = draw(st.booleans())
    g = Graph(padded, seed=draw(st.integers(0, 2**16)))
    n, c = draw(st.sampled_from([1, 2])), draw(st.integers(1, 40))
    h, w = draw(st.integers(1, 16)), draw(st.integers(1, 16))
    kind = draw(st.sampled_from(["max_pool", "avg_pool"]))
    kernel = [draw(st.integers(1, 4)), draw(st.integers(1, 4))]
    attrs = {
        "kernel_shape": kernel,
        "strides": [draw(st.integers(1, 3)), draw(st.integers(1, 3))],
        "pads": [draw(st.integers(0, k - 1)) for k in kernel + kernel],
        "ceil_mode": draw(st.sampled_from([0, 1])),
    }
    if kind == "max_pool":
        attrs["dilations"] = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    else:
        attrs["count_include_pad"] = draw(st.sampled_from([0, 1]))
    x = g.input([n, c, h, w], "NCHW")
    if draw(st.booleans()):  # on the NC1HWC0 result of a conv
        x = g.op("relu", g.op("conv2d", x, g.const([c, c, 1, 1], "NCHW")))
    try:
        y = g.op(kind, x, **attrs)
    except ValueError:  # no output position (the shape function's check)
        assume(False)
    epilogue = draw(st.sampled_from(["none", "relu", "per_channel"]))
    if epilogue == "relu":
        y = g.op("relu", y)
    elif epilogue == "per_channel":
        y = g.op("mul", y, g.const([1, c, 1, 1], low=0.5))
    return g, [y], padded


@st.composite
def matmul_graphs(draw) -> Drawn:
    g = Graph(seed=draw(st.integers(0, 2**16)))
    m, k, n = (draw(st.integers(1, 70)) for _ in range(3))
    kind = draw(st.sampled_from(["matmul", "batched", "gemm"]))
    if kind == "matmul":
        b = g.const([k, n]) if draw(st.booleans()) else g.input([k, n])
        y = g.op("matmul", g.input([m, k]), b)
    elif kind == "batched":
        a_batch, b_batch = draw(st.sampled_from([([2], [1]), ([3, 1], [2]), ([1, 2], [])]))
        y = g.op("matmul", g.input([*a_batch, m, k]), g.input([*b_batch, k, n]))
    else:
        trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
        c_shape = draw(st.sampled_from([None, [n], [1, n], [m, n], [m, 1]]))
        y = g.op(
            "gemm",
            g.input([k, m] if trans_a else [m, k]),
            g.const([n, k] if trans_b else [k, n]),
            g.const(c_shape) if c_shape else None,
            transA=int(trans_a), transB=int(trans_b),
            alpha=draw(st.sampled_from([1.0, 0.5])), beta=draw(st.sampled_from([1.0, -2.0])),
        )  # fmt: skip
    epilogue = draw(st.sampled_from(["none", "relu", "sigmoid"]))
    if epilogue != "none":
        y = g.op(epilogue, y)
    return g, [y], False


@pytest.mark.parametrize(
    "strategy", [conv_graphs(), pool_graphs(), matmul_graphs()], ids=["conv", "pool", "matmul"]
)
@settings(max_examples=100)
@given(data=st.data())
def test_random_geometry_every_level_agrees(strategy, data):
    drawn = data.draw(printed(strategy))
    levels = run_levels(drawn.module, drawn.inputs, "test", pad_value=NAN if drawn.padded else None)
    assert_tiled(levels.module)
    assert_matches(levels)


# ---- cube precision ---------------------------------------------------------------------


def _small_conv(g: Graph) -> list[SSAValue]:
    x = g.input([1, 20, 9, 9], "NCHW")
    w = g.b.constant((0.1 * g.rng.standard_normal([24, 20, 3, 3])).astype(np.float32), "NCHW")
    return [g.op("relu", g.op("conv2d", x, w, pads=[1, 1, 1, 1]))]


def _small_matmul(g: Graph) -> list[SSAValue]:
    b = g.b.constant((0.1 * g.rng.standard_normal([40, 27])).astype(np.float32))
    return [g.op("matmul", g.input([19, 40]), b)]


@pytest.mark.parametrize(
    ("build", "anchor"),
    [(_small_conv, "graph.conv2d"), (_small_matmul, "graph.matmul")],
    ids=["conv", "matmul"],
)
def test_fp16_cube_precision(build: Builder, anchor: str):
    """precision=fp16 rounds the cube's inputs (fp32 accumulation): within rtol 1e-2 /
    atol 1e-3 of the graph, and visibly less exact than precision=origin, which holds the
    fp32 tolerance."""
    errors = {}
    for precision in ("origin", "fp16"):
        g = Graph()
        module = g.b.build(*build(g))
        levels = run_levels(module, g.arrays, "test", precision)
        assert_units(levels.tiled_kernels, {anchor: CUBE}, f"tile-kernels precision={precision}")
        want = levels.reference[0]
        rtol, atol = (1e-2, 1e-3) if precision == "fp16" else (RTOL, ATOL)
        for executor in EXECUTORS:
            got = levels.outputs[executor][0]
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=executor)
        errors[precision] = max(np.abs(levels.outputs[e][0] - want).max() for e in EXECUTORS)
    assert errors["fp16"] > 10 * errors["origin"], errors
