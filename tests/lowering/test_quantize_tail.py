"""A LayerNorm / RMS norm / Softmax / LogSoftmax whose result a per-tensor QuantizeLinear
quantises runs as one vector kernel that writes the int8 (uint8) tensor
(:mod:`tilegraph.lowering.conversion.tiling.quantize_tail`), each level against the graph.

The tail is the quantise kernel's own program on the same float tile, so the integers are
equal at every level, not close: ragged row tiles (37 rows on the ``test`` preset's small
UB), rows too long for UB (the chunked form, 3000 elements on ``test``), and NaN in the
lanes past the tensor, none of which may reach the output.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.lowering.test_tile_differential import NAN, Graph, assert_matches, run_levels

NORMS = ("layer_norm", "rms_norm", "softmax", "log_softmax")
SCALES = {"layer_norm": 0.0173, "rms_norm": 0.0173, "softmax": 0.0007, "log_softmax": 0.07}
"""Scales that spread each normalisation's range over many integers (and saturate some)."""


def quantized_norm(g: Graph, kind: str, shape: list[int], zero: np.ndarray):
    x = g.input(shape)
    if kind in ("layer_norm", "rms_norm"):
        width = shape[-1:]
        params = [g.const(width)] + ([g.const(width)] if kind == "layer_norm" else [])
        y = g.op(kind, x, *params, axis=-1)
    else:
        y = g.op(kind, x, axis=-1)
    scale = g.b.constant(np.array(SCALES[kind], np.float32))
    return g.op("quantize_linear", y, scale, g.b.constant(zero))


def _levels(kind: str, shape: list[int], zero: np.ndarray, platform: str):
    g = Graph()
    module = g.b.build(quantized_norm(g, kind, shape, zero))
    return run_levels(module, g.arrays, platform, pad_value=NAN)


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("kind", NORMS)
@pytest.mark.parametrize(
    ("shape", "zero"),
    [
        ([2, 37, 72], np.array(3, np.int8)),  # ragged row tiles on ``test``
        ([3, 3000], np.array(128, np.uint8)),  # a row longer than ``test``'s UB: chunks
    ],
    ids=["rows", "chunks"],
)
def test_the_normalisation_writes_the_quantised_tensor(
    kind: str, shape: list[int], zero: np.ndarray, platform: str
):
    levels = _levels(kind, shape, zero, platform)
    kernels = levels.tiled_kernels
    assert all(k.unit == "vector" for k in kernels), [(k.ops, k.reason) for k in kernels]
    if not (platform == "test" and shape[-1] == 3000 and kind.endswith("norm")):
        assert len(kernels) == 1, [k.ops for k in kernels]
        assert list(kernels[0].ops) == [f"graph.{kind}", "graph.quantize_linear"]
    # else fuse-ops' working-set estimate keeps them apart (the row, its scale and bias
    # exceed the 8 KiB UB): two kernels, the same integers
    assert_matches(levels, rtol=0, atol=0)
    for level, outputs in {"graph": levels.reference, **levels.outputs}.items():
        assert outputs[0].dtype == zero.dtype, level
        np.testing.assert_array_equal(outputs[0], levels.reference[0], err_msg=level)
    # the quantisation is not degenerate: several integer values, some saturated ones
    assert len(np.unique(levels.reference[0])) > 5


def test_a_quantise_with_other_users_of_the_float_result_stays_apart():
    """The float result is read by another op too: the normalisation keeps its own kernel
    (the tail would write only the int8 tensor)."""
    g = Graph()
    x = g.input([4, 64])
    y = g.op("softmax", x, axis=-1)
    q = g.op("quantize_linear", y, g.b.constant(np.array(0.01, np.float32)))
    module = g.b.build(q, g.op("relu", y))
    levels = run_levels(module, g.arrays, "test")
    ops = [k.ops for k in levels.tiled_kernels]
    assert ("graph.softmax",) in ops, ops
    assert_matches(levels)


def test_a_reduce_op_writes_the_quantised_tensor_in_the_chunked_form():
    """A ReduceSum's QuantizeLinear is the tail of the reduction kernel too
    (:mod:`~tilegraph.lowering.conversion.tiling.reduction_prologue`), in the chunked form
    as well: a row of 400 x 384 floats takes it on 910B, and its reduced tile is quantised
    before the store (Smart Turn's attention pooling once wrote float into the int8 tensor
    there). The integers are exact."""
    g = Graph()
    x = g.input([1, 400, 384])
    y = g.op("reduce_sum", x, g.ints([1]), keepdims=0)
    scale = g.b.constant(np.array(0.05, np.float32))
    module = g.b.build(g.op("quantize_linear", y, scale, g.b.constant(np.array(3, np.int8))))
    levels = run_levels(module, g.arrays, "ascend910b", pad_value=NAN)
    ops = [k.ops for k in levels.tiled_kernels]
    assert ops == [("graph.reduce_sum", "graph.quantize_linear")], ops
    assert any(o.name == "tile.vdup" for o in levels.module.walk())  # the chunked form
    assert_matches(levels, rtol=0, atol=0)
    assert levels.outputs["fast"][0].dtype == np.int8
