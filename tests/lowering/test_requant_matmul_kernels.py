"""int8 matmuls beyond a dequantised result with a constant weight: fixpipe requantisation
(``graph.requant_matmul``, made by ``fold-requant`` under O2) and matmuls of two int8
activations (``fold-qdq``), each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`) on the ``test`` preset — ragged tails: K = 40
and 20 (not multiples of K0 = 32), N = 36 and 7 (not multiples of 16), per-column
multipliers — and on 910B / 310P. Matmuls of two activations with zero points other than
0 (int8 -128 / 127, uint8 0 / 255 re-centred) are checked against onnxruntime's integer
formula ``Σ (a - za)(b - zb) · sa·sb`` computed here in int64, also past 2^24.

Every level computes the same exact int32 sum and rounds it once the same way (the
requantisation half to even in float32, the dequantisation once into float32), so they
agree exactly (tolerance 0). With NaN in the padding lanes of the float input no NaN leaks.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering import test_tile_differential as harness
from tests.lowering.test_tile_differential import Graph
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.requantized_cube import requantize_accumulator
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import FixpipeOp
from tilegraph.dialects.tile.base import memref_element

X_SCALE = 0.05
UNITS = {"graph.requant_matmul": harness.CUBE, "graph.quant_matmul": harness.CUBE}


def requant_chain(relu: bool, zero_point: int, per_tensor: bool = False):
    """QuantizeLinear of a float ``[2, 5, 40]`` input, ``quant_matmul`` by 36 rows of K
    (per-column scales) -> QuantizeLinear (with ``relu``: -> DequantizeLinear -> Relu ->
    QuantizeLinear) -> a second ``quant_matmul`` reading the int8 result, as ``fold-qdq``
    leaves a QDQ feed-forward block."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input([2, 5, 40])
        zero = g.b.constant(np.array(zero_point, np.int8))
        xq = g.op("quantize_linear", x, g.b.constant(np.array(X_SCALE, np.float32)), zero)

        def matmul(data: SSAValue, n: int, k: int) -> SSAValue:
            w = g.b.constant(g.rng.integers(-127, 128, (n, k)).astype(np.int8))
            bias = g.b.constant(g.rng.integers(-2000, 2000, n).astype(np.int32))
            scales = g.rng.uniform(0.5, 1.5, 1 if per_tensor else n) * 4e-3 * X_SCALE
            deq = g.b.constant(np.broadcast_to(scales, (n,)).astype(np.float32))
            return g.op("quant_matmul", data, w, bias, deq)

        y_scale = g.b.constant(np.array(0.1, np.float32))
        y = g.op("quantize_linear", matmul(xq, 36, 40), y_scale, zero)
        if relu:
            y = g.op("dequantize_linear", y, y_scale, zero)
            y = g.op("quantize_linear", g.op("relu", y), y_scale, zero)
        return [matmul(y, 20, 36)]

    return build


def activation_matmul(g: Graph) -> list[SSAValue]:
    """Q·Kᵀ of two quantised activations ``[2, 7, 20]`` and ``[2, 20, 7]`` (zero points
    0), as onnxruntime's symmetric QDQ quantiser writes attention's scores."""
    return asymmetric_matmul(0, 0)(g)


SCALES = (0.05, 0.08)


def asymmetric_matmul(
    za: int,
    zb: int,
    m: int = 7,
    k: int = 20,
    n: int = 7,
    nz_input: bool = False,
    dtype: type[np.integer] = np.int8,
):
    """A matmul of two quantised activations ``[2, m, k]`` and ``[2, k, n]`` (scales
    :data:`SCALES`) with zero points ``za`` and ``zb`` of ``dtype`` (int8:
    quantize_static's default asymmetric activations; uint8: QUInt8 ones, which fold-qdq
    re-centres on int8). ``nz_input``: the left float input is held as FRACTAL_NZ (its
    padding can hold NaN)."""

    def build(g: Graph) -> list[SSAValue]:
        operands = []
        for shape, scale, z in (([2, m, k], SCALES[0], za), ([2, k, n], SCALES[1], zb)):
            s = g.b.constant(np.array(scale, np.float32))
            zero = g.b.constant(np.array(z, dtype))
            if nz_input and not operands:
                t = TensorType(shape, element_type_of("float32"), "ND", "FRACTAL_NZ")
                x = g.b.block.insert_arg(t, len(g.b.block.args))
                g.arrays.append(g.rng.standard_normal(shape).astype(np.float32))
            else:
                x = g.input(shape)
            q = g.op("quantize_linear", x, s, zero)
            operands.append(g.op("dequantize_linear", q, s, zero))
        return [g.op("matmul", *operands)]

    return build


def _module(build, padded: bool = False):
    g = Graph(padded)
    return g.b.build(*build(g)), g.arrays


def _requant_fixpipes(levels: harness.Levels) -> list[FixpipeOp]:
    return [
        op
        for op in levels.module.walk()
        if isinstance(op, FixpipeOp) and str(memref_element(op.dst)) == "i8"
    ]


@pytest.mark.parametrize(
    ("relu", "zero_point", "per_tensor"),
    [(False, 0, False), (True, -5, False), (False, 7, True)],
    ids=["plain", "relu_zero_point", "per_tensor"],
)
def test_requant_matmul_kernel(relu: bool, zero_point: int, per_tensor: bool):
    """Every level agrees exactly; the first matmul requantises in fixpipe (an i8 ND
    destination, its zero point, ReLU as the flag) and the second loads that int8 tensor."""
    module, inputs = _module(requant_chain(relu, zero_point, per_tensor))
    levels = harness.run_levels(module, inputs, "test", precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    harness.assert_units(levels.tiled_kernels, UNITS, "tile-kernels{platform=test}")
    (fixpipe,) = _requant_fixpipes(levels)
    assert fixpipe.layout.data == "nd" and bool(fixpipe.relu) == relu
    assert (fixpipe.zero_point.value.data if fixpipe.zero_point else 0) == zero_point


def test_requant_matmul_kernel_nan_padding():
    """The float input with NaN in its padding lanes: no NaN leaks."""
    module, inputs = _module(requant_chain(True, 0), padded=True)
    levels = harness.run_levels(module, inputs, "test", precision="int8", pad_value=harness.NAN)
    harness.assert_no_nan(levels)
    harness.assert_matches(levels, rtol=0, atol=0)


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_requant_matmul_kernel_on_presets(platform: str):
    """On 910B fixpipe writes the int8 tiles to GM; on 310P (no L0C -> GM) through UB."""
    module, inputs = _module(requant_chain(True, -3))
    levels = harness.run_levels(module, inputs, platform, precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    harness.assert_units(levels.tiled_kernels, UNITS, f"tile-kernels{{platform={platform}}}")


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_activation_matmul_kernel(platform: str):
    """A matmul of two int8 activations is one int8 cube kernel (the right operand
    transposed to rows of K by an int8 move), exact at every level."""
    module, inputs = _module(activation_matmul)
    levels = harness.run_levels(module, inputs, platform, precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    units = {"graph.quant_matmul": harness.CUBE, "graph.transpose": harness.VECTOR}
    harness.assert_units(levels.tiled_kernels, units, f"tile-kernels{{platform={platform}}}")
    assert not [k for k in levels.tiled_kernels if "graph.matmul" in k.ops]


def test_requantisation_rounds_half_to_even():
    """Products on .5 round to the even neighbour (0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 ->
    0, -2.5 -> -2), as onnxruntime's QLinearMatMul and Ascend's REQ8 do; rounding half away
    from zero (1, 2, 3, -1, -3) or half up would fail here. The tiled requantised matmul
    is checked on the same boundary by :func:`test_requant_matmul_rounds_half_to_even_on_the_cube`."""
    acc = np.array([1, 3, 5, -1, -5], np.int32)
    got = requantize_accumulator(acc, np.array(0.5, np.float32), 0, False)
    np.testing.assert_array_equal(got, [0, 2, 2, 0, -2])
    shifted = requantize_accumulator(acc, np.array(0.5, np.float32), 3, False)
    np.testing.assert_array_equal(shifted, [3, 5, 5, 3, 1])


def test_requant_matmul_rounds_half_to_even_on_the_cube():
    """Every sum of the requantised matmul lands on .5 (integer inputs, a weight of ones,
    a multiplier of 0.5 and odd sums): the tiled kernel's int8 result is the half-even one,
    read back through a second matmul with a one-hot weight (its result is the int8 value
    times 1.0)."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input([1, 4, 3])
        one = g.b.constant(np.array(1.0, np.float32))
        zero = g.b.constant(np.array(0, np.int8))
        xq = g.op("quantize_linear", x, one, zero)
        w = g.b.constant(np.ones((16, 3), np.int8))
        bias = g.b.constant(np.zeros(16, np.int32))
        deq = g.b.constant(np.full(16, 0.5, np.float32))
        y = g.op("quantize_linear", g.op("quant_matmul", xq, w, bias, deq), one, zero)
        eye = g.b.constant(np.eye(16, dtype=np.int8))
        ones = g.b.constant(np.ones(16, np.float32))
        return [g.op("quant_matmul", y, eye, g.b.constant(np.zeros(16, np.int32)), ones)]

    module, _ = _module(build)
    x = np.array([[[0, 0, 1], [1, 1, 1], [2, 2, 1], [-3, -1, -1]]], np.float32)  # sums 1 3 5 -5
    levels = harness.run_levels(module, [x], "test", precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    assert _requant_fixpipes(levels)
    for outputs in levels.outputs.values():
        np.testing.assert_array_equal(outputs[0][0, :, 0], [0, 2, 2, -2])


ASYMMETRIC_UNITS = {"graph.quant_matmul": harness.CUBE, "graph.transpose": harness.VECTOR}


def _assert_int32_epilogue(levels: harness.Levels) -> None:
    """No float matmul and no K-lengthening concat; the zero points' int32 corrections
    (``graph.sub``) and the dequantisation (int32 -> float32 ``graph.cast``) run on the
    vector unit."""
    kernels = levels.tiled_kernels
    assert not [k for k in kernels if "graph.matmul" in k.ops or "graph.concat" in k.ops]
    assert [k for k in kernels if "graph.sub" in k.ops and "graph.cast" in k.ops]


@pytest.mark.parametrize(
    ("za", "zb", "m", "k", "n", "dtype"),
    [
        (-128, 127, 7, 20, 7, np.int8),
        (127, -128, 17, 40, 36, np.int8),
        (-128, -128, 5, 33, 9, np.int8),
        (3, 0, 7, 20, 7, np.int8),
        (0, 255, 17, 40, 36, np.uint8),
        (255, 0, 5, 33, 9, np.uint8),
    ],
    ids=["min_max", "max_min_ragged", "both_min", "one_side", "uint8_0_255", "uint8_255_0"],
)
def test_asymmetric_activation_matmul_kernel(
    za: int, zb: int, m: int, k: int, n: int, dtype: type[np.integer]
):
    """Zero points other than 0 (the extremes: -128 is uint8's 0 re-centred, 127 uint8's
    255): the int8 cube's raw int32 sum with K as it is, the zero points' corrections in
    an int32 epilogue, no float matmul; exact at every level on the ``test`` preset with
    ragged M, N and K."""
    module, inputs = _module(asymmetric_matmul(za, zb, m, k, n, dtype=dtype))
    levels = harness.run_levels(module, inputs, "test", precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    harness.assert_units(levels.tiled_kernels, ASYMMETRIC_UNITS, "tile-kernels{platform=test}")
    _assert_int32_epilogue(levels)


def _onnx_quantize(x: np.ndarray, scale: float, zero: int, dtype: type[np.integer]) -> np.ndarray:
    """ONNX QuantizeLinear into ``dtype``: ``x / scale`` rounded half to even, plus the
    zero point, saturated."""
    q = np.rint(x.astype(np.float32) / np.float32(scale)).astype(np.int64) + zero
    return np.clip(q, np.iinfo(dtype).min, np.iinfo(dtype).max)


@pytest.mark.parametrize(
    ("za", "zb", "dtype"), [(-128, 101, np.int8), (255, 17, np.uint8)], ids=["int8", "uint8"]
)
def test_asymmetric_matmul_is_onnxruntimes_integer_sum(za: int, zb: int, dtype: type[np.integer]):
    """The folded graph computes ``Σ (a - za)(b - zb)`` in integers times ``sa·sb``
    (float32, rounded once), as onnxruntime's integer QDQ matmul: spread inputs so the
    zero points' cross terms matter, compared with that formula in int64 here."""
    module, inputs = _module(asymmetric_matmul(za, zb, 9, 45, 18, dtype=dtype))
    inputs = [x * 3 for x in inputs]
    levels = harness.run_levels(module, inputs, "test", precision="int8")
    a = _onnx_quantize(inputs[0], SCALES[0], za, dtype) - za
    b = _onnx_quantize(inputs[1], SCALES[1], zb, dtype) - zb
    scale = np.float32(SCALES[0]) * np.float32(SCALES[1])
    want = np.matmul(a, b).astype(np.float32) * scale
    np.testing.assert_array_equal(levels.reference[0], want)
    harness.assert_matches(levels, rtol=0, atol=0)


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_asymmetric_matmul_past_float_exactness(platform: str):
    """K = 300 (past 258, where ``K·255²`` leaves float32's exact integers) with every
    ``a - za`` = -255 and every ``b - zb`` = 255: the exact sum -300·255² = -19 507 500
    is past 2^24; the int32 epilogue gets it exactly (a float epilogue of the partial sums
    would not), and the result is its float32 times ``sa·sb``."""
    module, inputs = _module(asymmetric_matmul(127, -128, 9, 300, 18))
    inputs = [-np.abs(inputs[0]) - 100, np.abs(inputs[1]) + 100]  # saturate to -128 / 127
    levels = harness.run_levels(module, inputs, platform, precision="int8")
    a = _onnx_quantize(inputs[0], SCALES[0], 127, np.int8) - 127
    b = _onnx_quantize(inputs[1], SCALES[1], -128, np.int8) + 128
    exact = np.matmul(a, b)
    assert exact.min() < -(2**24)
    scale = np.float32(SCALES[0]) * np.float32(SCALES[1])
    np.testing.assert_array_equal(levels.reference[0], exact.astype(np.float32) * scale)
    harness.assert_matches(levels, rtol=0, atol=0)
    _assert_int32_epilogue(levels)


def test_asymmetric_matmul_nan_padding():
    """The left float input held as FRACTAL_NZ with NaN in its padding: no NaN leaks
    into the int8 operands, their zero-point sums or the int32 epilogue."""
    module, inputs = _module(asymmetric_matmul(-128, 127, 17, 40, 36, nz_input=True))
    levels = harness.run_levels(module, inputs, "test", precision="int8", pad_value=harness.NAN)
    harness.assert_no_nan(levels)
    harness.assert_matches(levels, rtol=0, atol=0)


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_asymmetric_matmul_on_presets(platform: str):
    """On 910B and 310P: the product's int32 epilogue in its own kernel (a mix kernel on
    910B: the AIC part's fixpipe writes int32 to the workspace, the AIV part corrects and
    dequantises; on 310P fixpipe writes it into UB), exact at every level."""
    module, inputs = _module(asymmetric_matmul(-128, 5, 17, 40, 36))
    levels = harness.run_levels(module, inputs, platform, precision="int8")
    harness.assert_matches(levels, rtol=0, atol=0)
    units = f"tile-kernels{{platform={platform}}}"
    harness.assert_units(levels.tiled_kernels, ASYMMETRIC_UNITS, units)
    _assert_int32_epilogue(levels)
    (main,) = [k for k in levels.tiled_kernels if "graph.sub" in k.ops]
    assert "graph.quant_matmul" in main.ops
    assert main.unit == ("mix" if platform == "ascend910b" else harness.CUBE)
