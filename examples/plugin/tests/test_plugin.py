"""The example plugin's own tests: it is installed, its pass is bit-exact, its op verifies
and runs on any storage layout."""

from importlib import metadata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from tilegraph.dialects.entry import entry_function
from tilegraph.dialects.layout_storage import origin_array, storage_array
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.context import parse_mlir
from tilegraph.runtime.interpreter import GraphFunctions, LayoutFunctions
from tilegraph.runtime.reference import run_reference
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.utils.exceptions import VerifyException

from tilegraph_example_plugin.div_to_mul import DivToMulPass
from tilegraph_example_plugin.fake_quant import Example, fake_quant
from tilegraph_example_plugin.interpreter import ExampleFunctions

DISTRIBUTION = "tilegraph-example-plugin"


def test_entry_points_name_the_plugin_objects():
    expected = {
        "tilegraph.passes": ("div-to-mul", DivToMulPass),
        "tilegraph.dialects": ("example", Example),
        "tilegraph.interpreters": ("example", ExampleFunctions),
    }
    for group, (name, obj) in expected.items():
        ours = [
            ep
            for ep in metadata.entry_points(group=group)
            if ep.dist is not None and ep.dist.name == DISTRIBUTION
        ]
        assert [ep.name for ep in ours] == [name], group
        assert ours[0].load() is obj


def _division(dtype: str, divisor: float) -> ModuleOp:
    t = f"!layout.tensor<8x{dtype}>"
    return parse_mlir(
        f"""
func.func @main(%x: {t}) -> {t} {{
  %c = graph.constant dense<{divisor!r}> : !layout.tensor<{dtype}>
  %y = graph.div %x, %c : ({t}, !layout.tensor<{dtype}>) -> {t}
  func.return %y : {t}
}}"""
    )


def _ops(module: ModuleOp) -> list[str]:
    return [op.name for op in entry_function(module).body.block.ops]


def _special_values(dtype: np.dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, info.smallest_subnormal, info.max, 1.7]
    return np.array(values, dtype=dtype)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # max / 2**-14
@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
@pytest.mark.parametrize("k", [-14, -3, -1, 1, 3, 14])
@pytest.mark.parametrize("sign", [1, -1])
def test_div_to_mul_is_bit_exact(dtype: str, k: int, sign: int):
    np_dtype = np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[dtype])
    module = _division(dtype, sign * 2.0**k)
    x = _special_values(np_dtype)
    (before,) = run_reference(module, [x])
    DivToMulPass().apply(Context(), module)
    module.verify()
    assert _ops(module) == ["graph.constant", "graph.mul", "func.return"]
    (after,) = run_reference(module, [x])
    assert before.dtype == after.dtype == np_dtype
    assert before.tobytes() == after.tobytes()  # equal bits: signed zeros, NaN, subnormals


@pytest.mark.parametrize(
    ("dtype", "divisor"),
    [("f32", 3.0), ("f32", 0.0), ("f32", float("inf")), ("f16", 2.0**-24), ("f64", 0.1)],
)
def test_div_to_mul_keeps_other_divisors(dtype: str, divisor: float):
    module = _division(dtype, divisor)
    DivToMulPass().apply(Context(), module)
    assert _ops(module) == ["graph.constant", "graph.div", "func.return"]


def _quantize(t: str, attrs: str = "{scale = 0.25, bits = 4}", result: str = "") -> ModuleOp:
    signature = f"({t}) -> {result}" if result else t
    return parse_mlir(
        f"""
func.func @main(%x: {t}) -> {result or t} {{
  %y = example.fake_quant %x {attrs} : {signature}
  func.return %y : {result or t}
}}"""
    )


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ("{scale = 0.0}", "scale must be positive and finite, got 0.0"),
        ("{scale = 0x7F800000 : f32}", "scale must be positive and finite, got inf"),
        ("{bits = 8}", "scale must be positive and finite, got None"),
        ("{scale = 1.0, bits = 17}", "bits must be in 2..16, got 17"),
    ],
)
def test_fake_quant_verifier_rejects_bad_attributes(attrs: str, message: str):
    with pytest.raises(VerifyException, match=message):
        _quantize("!layout.tensor<4xf32>", attrs)


def test_fake_quant_verifier_rejects_a_layout_change():
    with pytest.raises(VerifyException, match="differs from the operand type"):
        _quantize("!layout.tensor<1x3x2x2xf32, NCHW>", result="!layout.tensor<1x3x2x2xf32>")


STORAGE = "!layout.tensor<1x20x3x3xf16, NCHW -> NC1HWC0>"
"""Two C1 blocks of 16 channels, the second one padded (channels 20..31)."""


def test_fake_quant_interpreted_on_storage_layout():
    """ExampleFunctions gets NC1HWC0 data, padding lanes included, and keeps it laid out."""
    module = _quantize(STORAGE)
    fn = entry_function(module)
    t = fn.function_type.inputs.data[0]
    assert isinstance(t, TensorType)
    x = np.random.default_rng(0).normal(0, 1.5, (1, 20, 3, 3)).astype(np.float16)
    interpreter = Interpreter(module)
    for functions in (FuncFunctions(), GraphFunctions(), LayoutFunctions(), ExampleFunctions()):
        interpreter.register_implementations(functions)
    (y,) = interpreter.call_op(fn, (storage_array(x, t, np.nan),))
    assert y.shape == (1, 2, 3, 3, 16)
    assert np.isnan(y[:, 1, :, :, 4:]).all()  # NaN padding stays NaN
    np.testing.assert_array_equal(origin_array(y, t), fake_quant(x, 0.25, 4))


def test_fake_quant_in_the_reference_interpreter():
    """tilegraph's reference interpreter finds ExampleFunctions through the
    ``tilegraph.interpreters`` entry point; the result is on the 4-bit grid."""
    x = np.resize(np.array([0.125, 0.375, 0.6], dtype=np.float16), (1, 20, 3, 3))
    (y,) = run_reference(_quantize(STORAGE), [x], pad_value=np.nan)
    np.testing.assert_array_equal(y, fake_quant(x, 0.25, 4))
    assert set(np.unique(y).tolist()) == {0.0, 0.5}


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    hnp.arrays(np.float32, st.integers(1, 16), elements=st.floats(-1e4, 1e4, width=32)),
    st.sampled_from([0.01, 0.25, 3.0]),
    st.integers(2, 16),
)
def test_fake_quant_is_a_projection(x: np.ndarray, scale: float, bits: int):
    """Idempotent, on the grid (up to y's float32 rounding), and within half a step of x
    wherever x is in range."""
    y = fake_quant(x, scale, bits)
    np.testing.assert_array_equal(fake_quant(y, scale, bits), y)
    rounding = np.spacing(np.abs(y)).astype(np.float64)  # one float32 ulp of y
    q = y.astype(np.float64) / scale
    assert np.all(np.abs(q - np.round(q)) <= rounding / scale)
    in_range = np.abs(x) <= (2 ** (bits - 1) - 1) * scale
    error = np.abs(y.astype(np.float64) - x.astype(np.float64))
    assert np.all(error[in_range] <= scale / 2 + rounding[in_range])
