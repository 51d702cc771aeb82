"""The int8 matmul (``graph.quant_matmul``: int8 A and B as 16 x 32 fractals, K0 = 32,
mmad into an i32 L0C, the int32 bias and the per-column dequantisation in fixpipe), each
level against the one above it (the harness of :mod:`tests.lowering.test_tile_differential`)
on the ``test`` preset — M, N and K no multiples of 16 / 32 (ragged fractals), several
base blocks and K steps — and on ``ascend910b`` (a mix kernel: the next QuantizeLinear on
the AIV).

The left operand reaches the matmul through a QuantizeLinear (a vector program); the int32
sum is exact and the dequantisation rounds the same product once at every level, so the
levels agree exactly (tolerance 0). With NaN in the float input's FRACTAL_NZ padding, no
NaN may leak (a NaN lane quantises to some int8 value, multiplied by B's zero padding).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_int8_kernels import with_epilogue
from tests.lowering.test_tile_differential import (
    CUBE,
    NAN,
    Graph,
    assert_matches,
    assert_no_nan,
    assert_units,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import FixpipeOp, MmadOp
from tilegraph.dialects.tile.base import memref_element

QMATMUL = {"graph.quant_matmul": CUBE}
X_SCALE = 0.05

# name: (A's shape, B's shape: rows of K)
MATMULS: dict[str, tuple[list[int], list[int]]] = {
    "2d": ([37, 70], [45, 70]),
    "deep_k": ([21, 300], [40, 300]),
    "batched": ([2, 19, 100], [45, 100]),
    "batched_b": ([2, 19, 70], [2, 45, 70]),
}


def quant_matmul(
    name: str, epilogue: str = "none", per_tensor: bool = False, nz_input: bool = False
):
    """QuantizeLinear of a float input, then ``quant_matmul`` with int8 B (rows of K), an
    int32 bias and per-column (or one repeated, ``per_tensor``) scales, then ``epilogue``.
    ``nz_input``: the float input is held as FRACTAL_NZ (its padding can hold NaN)."""
    a_shape, b_shape = MATMULS[name]
    n = b_shape[-2]

    def build(g: Graph) -> list[SSAValue]:
        if nz_input:
            t = TensorType(a_shape, element_type_of("float32"), "ND", "FRACTAL_NZ")
            x = g.b.block.insert_arg(t, len(g.b.block.args))
            g.arrays.append(g.rng.standard_normal(a_shape).astype(np.float32))
        else:
            x = g.input(a_shape)
        scale = g.b.constant(np.array(X_SCALE, np.float32))
        zero = g.b.constant(np.array(0, np.int8))
        xq = g.op("quantize_linear", x, scale, zero)
        w = g.b.constant(g.rng.integers(-127, 128, b_shape).astype(np.int8))
        bias = g.b.constant(g.rng.integers(-2000, 2000, n).astype(np.int32))
        per_column = g.rng.uniform(0.5, 1.5, 1 if per_tensor else n) * 0.01 * X_SCALE
        deq = g.b.constant(np.broadcast_to(per_column, (n,)).astype(np.float32))
        y = g.op("quant_matmul", xq, w, bias, deq)
        return [with_epilogue(g, y, epilogue, zero)]

    return build


def _levels(build, platform: str = "test", padded: bool = False):
    g = Graph()
    module = g.b.build(*build(g))
    return run_levels(
        module, g.arrays, platform, precision="int8", pad_value=NAN if padded else None
    )


@pytest.mark.parametrize("name", list(MATMULS))
def test_int8_matmul_kernel(name: str):
    """Every level agrees exactly; the matmul runs on the cube with K0 = 32 i8 fractals,
    an i32 accumulator and fixpipe's deq, in several base blocks on the test preset."""
    levels = _levels(quant_matmul(name, "relu"))
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.macro_kernels, QMATMUL, "lower-graph-to-kernels")
    assert_units(levels.tiled_kernels, QMATMUL, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the matmul into tiles"
    mmads = [op for op in levels.module.walk() if isinstance(op, MmadOp)]
    assert mmads and all(op.dims()[1] % 32 == 0 for op in mmads)
    assert all(str(memref_element(op.c)) == "i32" for op in mmads)
    fixpipes = [op for op in levels.module.walk() if isinstance(op, FixpipeOp)]
    assert fixpipes and all(op.deq is not None and op.bias is not None for op in fixpipes)


def test_int8_matmul_kernel_nan_padding():
    """The float input held as FRACTAL_NZ with NaN in its padding: no NaN leaks."""
    levels = _levels(quant_matmul("2d", nz_input=True), padded=True)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)


@pytest.mark.parametrize(
    ("epilogue", "per_tensor", "platform"),
    [("requantize", False, "test"), ("none", True, "test"), ("requantize", False, "ascend910b")],
)
def test_int8_matmul_epilogues(epilogue: str, per_tensor: bool, platform: str):
    """A per-tensor scale (repeated per column), no epilogue, and the next layer's
    QuantizeLinear fused behind the fixpipe (on 910B: a mix kernel, the AIV quantises)."""
    levels = _levels(quant_matmul("batched", epilogue, per_tensor), platform)
    assert_matches(levels, rtol=0, atol=0)
    assert_units(levels.tiled_kernels, QMATMUL, f"tile-kernels{{platform={platform}}}")
