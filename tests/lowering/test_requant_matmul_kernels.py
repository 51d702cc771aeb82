"""int8 matmuls beyond a dequantised result with a constant weight: fixpipe requantisation
(``graph.requant_matmul``, made by ``fold-requant`` under O2) and matmuls of two int8
activations (``fold-qdq``), each level against the one above it (the harness of
:mod:`tests.lowering.test_tile_differential`) on the ``test`` preset — ragged tails: K = 40
and 20 (not multiples of K0 = 32), N = 36 and 7 (not multiples of 16), per-column
multipliers — and on 910B / 310P.

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
from tilegraph.dialects.graph.requantized_cube import requantize_accumulator
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
    zero = g.b.constant(np.array(0, np.int8))
    operands = []
    for shape, scale in (([2, 7, 20], 0.05), ([2, 20, 7], 0.08)):
        s = g.b.constant(np.array(scale, np.float32))
        q = g.op("quantize_linear", g.input(shape), s, zero)
        operands.append(g.op("dequantize_linear", q, s, zero))
    return [g.op("matmul", *operands)]


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
