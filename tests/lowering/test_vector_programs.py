"""Every elementwise graph op has a vector program (issue 25), and the programs compute what
the graph level computes.

* Completeness: every registered graph op whose fusion kind is ELEMWISE or BROADCAST has an
  entry in ``VECTOR_LOWERINGS`` or a row with its reason in ``NO_VECTOR_PROGRAM``.
* Differential: each program on the ``test`` preset (ragged tails: 20 channels against
  C0 = 16, rows off the tile height), every level against the graph level with both
  executors, the NCHW inputs also held as NC1HWC0 with NaN in their padding lanes; fp32
  tolerance as :mod:`.test_tile_differential`, and an fp16 run of the float programs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_tiled,
    assert_units,
    run_levels,
)
from tilegraph.dialects.graph import GRAPH_OPS, FusionKind
from tilegraph.lowering.conversion.tiling.vector_ops import NO_VECTOR_PROGRAM, VECTOR_LOWERINGS
from tilegraph.tools.run.cli import run

ELEMENTWISE_KINDS = (FusionKind.ELEMWISE, FusionKind.BROADCAST)
ELEMENTWISE_OPS = sorted(op.name for op in GRAPH_OPS if op.FACTS.fusion in ELEMENTWISE_KINDS)
MAP = [1, 20, 9, 7]
"""An NCHW feature map: 20 channels are a ragged C1 block, 9 x 7 a ragged row tail."""


def test_every_elementwise_graph_op_has_a_vector_program():
    missing = [
        n for n in ELEMENTWISE_OPS if n not in VECTOR_LOWERINGS and n not in NO_VECTOR_PROGRAM
    ]
    assert not missing, f"elementwise graph ops without a vector program: {missing}"


def test_the_exceptions_are_elementwise_ops_without_a_program():
    assert set(NO_VECTOR_PROGRAM) <= set(ELEMENTWISE_OPS)
    assert not set(NO_VECTOR_PROGRAM) & set(VECTOR_LOWERINGS)
    assert all(len(reason) > 40 for reason in NO_VECTOR_PROGRAM.values())


def test_every_program_is_for_an_elementwise_op():
    assert set(VECTOR_LOWERINGS) <= set(ELEMENTWISE_OPS)


# ---- the cases ------------------------------------------------------------------------
Build = Callable[[Graph, SSAValue], SSAValue]
"""From the graph and a float32 input map to the op's output."""


def _unary(kind: str, prepare: Callable[[Graph, SSAValue], SSAValue] | None = None, **attrs):
    def build(g: Graph, x: SSAValue) -> SSAValue:
        return g.op(kind, prepare(g, x) if prepare else x, **attrs)

    return build


def _c(g: Graph, like: SSAValue, value) -> SSAValue:
    """A constant of ``like``'s float type (float32 or float16)."""
    dtype = like.type.dtype.numpy  # type: ignore[attr-defined]
    return g.b.constant(np.asarray(value, dtype))


def _in_unit_interval(g: Graph, x: SSAValue) -> SSAValue:
    return g.op("mul", g.op("tanh", x), _c(g, x, 0.999))


def _at_least_one(g: Graph, x: SSAValue) -> SSAValue:
    return g.op("add", g.op("abs", x), _c(g, x, 1.0))


def _scaled(factor: float):
    return lambda g, x: g.op("mul", x, _c(g, x, factor))


def _ints(g: Graph, x: SSAValue, scale: float = 40.0) -> SSAValue:
    """int32 values in about [-120, 120] (ONNX Cast truncates)."""
    return g.op("cast", _scaled(scale)(g, x), to=6)


def _two(kind: str, **attrs) -> Build:
    """``kind`` of the input and the input reversed in sign and shifted (same shape)."""

    def build(g: Graph, x: SSAValue) -> SSAValue:
        y = g.op("add", g.op("neg", x), _c(g, x, 0.25))
        return g.op(kind, x, y, **attrs)

    return build


def _mod(fmod: int, integer: bool) -> Build:
    def build(g: Graph, x: SSAValue) -> SSAValue:
        divisor = _c(g, x, [0.7, -1.3, 0.55, 1.9, -0.6, 1.1, -2.2])
        if integer:  # divisors -3..3, zeros included
            ints = g.b.constant(np.array([3, -2, 0, 1, -3, 2, 0], np.int32))
            return g.op("mod", _ints(g, x), ints, fmod=fmod)
        return g.op("mod", _scaled(4.0)(g, x), divisor, fmod=fmod)

    return build


def _logical(kind: str) -> Build:
    def build(g: Graph, x: SSAValue) -> SSAValue:
        zero = _c(g, x, 0.0)
        a, b = g.op("greater", x, zero), g.op("less", g.op("sin", x), zero)
        return g.op(kind, a, b) if kind != "not" else g.op("not", a)

    return build


def _bitwise(kind: str, **attrs) -> Build:
    def build(g: Graph, x: SSAValue) -> SSAValue:
        a = _ints(g, x)
        if kind == "bitwise_not":
            return g.op(kind, a)
        if kind == "bit_shift":  # shifts of -2..33: out of range ones give the sign fill
            b = g.op("cast", g.op("add", _scaled(9.0)(g, g.op("abs", x)), _c(g, x, -2.0)), to=6)  # fmt: skip
            return g.op(kind, a, b, **attrs)
        return g.op(kind, a, _ints(g, g.op("cos", x), 100.0))

    return build


def _where(g: Graph, x: SSAValue) -> SSAValue:
    y = g.op("exp", x)
    return g.op("where", g.op("greater", x, _c(g, x, 0.3)), x, y)


def _is_inf(**attrs) -> Build:
    def build(g: Graph, x: SSAValue) -> SSAValue:
        big = g.op("exp", _scaled(100.0)(g, x))  # +inf past x ~ 0.9
        small = g.op("exp", _scaled(-100.0)(g, x))
        return g.op("is_inf", g.op("sub", big, small), **attrs)

    return build


def _is_nan(g: Graph, x: SSAValue) -> SSAValue:
    return g.op("is_nan", g.op("log", x))  # NaN for the negative half


def _quantize_round_trip(g: Graph, x: SSAValue) -> SSAValue:
    scale = _c(g, x, 0.02)
    zero = g.b.constant(np.array(-3, np.int8))
    q = g.op("quantize_linear", x, scale, zero)
    return g.op("dequantize_linear", q, scale, zero)


def _expand(g: Graph, x: SSAValue) -> SSAValue:
    """A per-channel [C, 1, 1] input expanded over the map."""
    column = g.op("sigmoid", g.input([MAP[1], 1, 1]))
    return g.op("expand", column, g.ints(MAP))


def _cast_like(g: Graph, x: SSAValue) -> SSAValue:
    return g.op("cast_like", _scaled(10.0)(g, x), g.b.constant(np.zeros([1], np.int32)))


def _swiglu(g: Graph, x: SSAValue) -> SSAValue:
    return g.op("swiglu", x, g.op("cos", x), alpha=1.5)


CASES: dict[str, Build] = {
    "hard_swish": _unary("hard_swish", _scaled(4.0)),
    "mish": _unary("mish", _scaled(5.0)),
    "swish": _unary("swish", _scaled(3.0), alpha=1.7),
    "swiglu": _swiglu,
    "softsign": _unary("softsign", _scaled(3.0)),
    "celu": _unary("celu", _scaled(3.0), alpha=1.5),
    "thresholded_relu": _unary("thresholded_relu", alpha=0.3),
    "round": _unary("round", _scaled(3.0)),
    "sin": _unary("sin", _scaled(3.0)),
    "cos": _unary("cos", _scaled(3.0)),
    "tan": _unary("tan"),
    "atan": _unary("atan", _scaled(3.0)),
    "asin": _unary("asin", _in_unit_interval),
    "acos": _unary("acos", _in_unit_interval),
    "sinh": _unary("sinh", _scaled(2.0)),
    "cosh": _unary("cosh", _scaled(2.0)),
    "asinh": _unary("asinh", _scaled(5.0)),
    "acosh": _unary("acosh", _at_least_one),
    "atanh": _unary("atanh", _in_unit_interval),
    "is_nan": _is_nan,
    "is_inf": _is_inf(),
    "is_inf_positive": _is_inf(detect_negative=0),
    "is_inf_negative": _is_inf(detect_positive=0),
    "shrink": _unary("shrink", lambd=0.4, bias=0.1),
    "where": _where,
    "greater_or_equal": _two("greater_or_equal"),
    "less_or_equal": _two("less_or_equal"),
    "and": _logical("and"),
    "or": _logical("or"),
    "xor": _logical("xor"),
    "not": _logical("not"),
    "bitwise_and": _bitwise("bitwise_and"),
    "bitwise_or": _bitwise("bitwise_or"),
    "bitwise_xor": _bitwise("bitwise_xor"),
    "bitwise_not": _bitwise("bitwise_not"),
    "bit_shift_left": _bitwise("bit_shift", direction="LEFT"),
    "bit_shift_right": _bitwise("bit_shift", direction="RIGHT"),
    "mod": _mod(0, integer=False),
    "fmod": _mod(1, integer=False),
    "mod_int": _mod(0, integer=True),
    "fmod_int": _mod(1, integer=True),
    "quantize_round_trip": _quantize_round_trip,
    "expand": _expand,
    "cast_like": _cast_like,
}
"""Case id -> its graph; the op is the case id up to a suffix (checked by the op names)."""

OPS_OF = {
    "is_inf_positive": "is_inf",
    "is_inf_negative": "is_inf",
    "bit_shift_left": "bit_shift",
    "bit_shift_right": "bit_shift",
    "fmod": "mod",
    "mod_int": "mod",
    "fmod_int": "mod",
    "quantize_round_trip": "quantize_linear",
}


def _module(case: str, padded: bool, shape=MAP):
    g = Graph(padded)
    out = CASES[case](g, g.input(shape, "NCHW"))
    return g.b.build(out), g.arrays


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("padded", [False, True], ids=["plain", "nan_padding"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_vector_program_matches_the_graph(case: str, padded: bool):
    """Both executors against the graph level; every kernel on the vector unit."""
    module, inputs = _module(case, padded)
    levels = run_levels(module, inputs, "test", pad_value=NAN if padded else None)
    assert_matches(levels)
    assert_tiled(levels.module)
    op = f"graph.{OPS_OF.get(case, case)}"
    assert_units(levels.tiled_kernels, {op: VECTOR}, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the kernel into tiles"


FP16_CASES = ["hard_swish", "swish", "softsign", "celu", "sinh", "asinh", "atan", "asin",
              "where", "shrink"]  # fmt: skip
"""Not mish (softplus, then tanh, then a product) nor mod (``a - b * trunc(a / b)`` of
values up to 10): each step rounds to float16, and their error passes atol 1e-3."""


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", FP16_CASES)
def test_vector_program_in_fp16(case: str):
    """The program on float16 tiles (the map cast to float16 first) within rtol 1e-2 /
    atol 1e-3 of the graph level, which computes each op in float64 and rounds once."""
    g = Graph(padded=True)
    x = g.op("cast", g.input(MAP, "NCHW"), to=10)
    module = g.b.build(CASES[case](g, x))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert levels.reference[0].dtype == np.float16
    assert_matches(levels, rtol=1e-2, atol=1e-3)
    assert_units(levels.tiled_kernels, {f"graph.{case}": VECTOR}, "tile-kernels fp16")


# ---- a model: no host op, both executors, the cycle model's estimate -------------------


def hard_swish_model(path: Path) -> str:
    """Conv -> HardSwish -> Conv -> Mish -> Where(IsInf, 0, .) -> HardSigmoid * Softsign, as
    a MobileNetV3 / YOLO block exports them (conv epilogues), and HardSwish -> Mish of the
    input (a vector kernel of its own)."""
    rng = np.random.default_rng(0)
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [20, 3, 3, 3], rng.standard_normal(540))
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [20, 20, 1, 1], 0.3 * rng.standard_normal(400))
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("HardSwish", ["c1"], ["h"]),
        helper.make_node("Conv", ["h", "w2"], ["c2"]),
        helper.make_node("Mish", ["c2"], ["m"]),
        helper.make_node("IsInf", ["m"], ["inf"]),
        helper.make_node("Where", ["inf", "zero", "m"], ["finite"]),
        helper.make_node("HardSigmoid", ["finite"], ["gate"]),
        helper.make_node("Softsign", ["finite"], ["s"]),
        helper.make_node("Mul", ["gate", "s"], ["y"]),
        helper.make_node("HardSwish", ["x"], ["hx"]),
        helper.make_node("Mish", ["hx"], ["y2"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 11, 9])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 20, 11, 9]),
            helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 3, 11, 9]),
        ],
        initializer=[w1, w2, zero],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_hard_swish_model_runs_on_the_ai_core(tmp_path, executor):
    """Both executors match onnxruntime (``--compare``); no op stays on the host."""
    report_path = tmp_path / "r.json"
    args = [hard_swish_model(tmp_path / "m.onnx"), "--compare", "--executor", executor]
    assert run([*args, "--json", str(report_path), "--no-format-report", "-q"]) == 0
    report = json.loads(report_path.read_text())
    assert report["host_ops"] == []
    compared = report["compare"]["outputs"]
    assert len(compared) == 2 and all(o["ok"] for o in compared), compared


def test_hard_swish_model_estimate_costs_a_vector_kernel(tmp_path):
    """The cycle model costs the new programs: a vector kernel, no host time."""
    report_path = tmp_path / "r.json"
    args = [hard_swish_model(tmp_path / "m.onnx"), "--estimate", "--json", str(report_path)]
    assert run([*args, "--no-format-report", "-q"]) == 0
    cycles = json.loads(report_path.read_text())["cycles"]
    assert cycles["host_us"] == 0
    vector = [k for k in cycles["per_kernel"] if k["unit"] == "vector"]
    assert vector and all(k["us"] > 0 for k in vector), cycles["per_kernel"]
