"""``col2im-as-conv-transpose``: Col2Im (PyTorch's ``F.fold``) is a grouped ConvTranspose
with one-hot filters: the reference interpreter gives Col2Im's image for strides, pads,
dilations and images a stride leaves rows over; what it cannot express stays; ``F.fold``
runs on the AI core."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, run_levels
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime import run_reference

RNG = np.random.default_rng(5)
RULE = "algebraic-simplify{only=col2im-as-conv-transpose},dce"


def _blocks(image, block, strides, pads, dilations) -> int:
    return int(
        np.prod(
            [
                (n + pads[i] + pads[i + 2] - (k - 1) * d - 1) // s + 1
                for i, (n, k, s, d) in enumerate(zip(image, block, strides, dilations, strict=True))
            ]
        )
    )


def _fold(channels, image, block, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), batch="n"):
    """Col2Im of ``[batch, C·kh·kw, L]`` columns; the module and a run-time input shape."""
    b = GraphBuilder()
    length = _blocks(image, block, strides, pads, dilations)
    x = b.input("x", [batch, channels * int(np.prod(block)), length])
    module = b.build(
        b.op(
            "col2im",
            x,
            b.constant(np.array(image)),
            b.constant(np.array(block)),
            strides=list(strides),
            pads=list(pads),
            dilations=list(dilations),
        )
    )
    return module, (2, channels * int(np.prod(block)), length)


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


GEOMETRIES = {
    "stride2_pad1": (3, (9, 13), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
    "rows_left_over": (2, (10, 13), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),  # output_padding [1, 0]
    "dilated_uneven_pads": (1, (8, 7), (2, 3), (1, 2), (0, 1, 2, 0), (2, 1)),
    "non_overlapping": (4, (6, 8), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1)),
}


@pytest.mark.parametrize("geometry", GEOMETRIES.values(), ids=GEOMETRIES.keys())
def test_col2im_is_a_conv_transpose(geometry):
    module, shape = _fold(*geometry)
    x = RNG.standard_normal(shape).astype(np.float32)
    (want,) = run_reference(module, {"x": x})
    run_pipeline(RULE, make_context(), module)
    module.verify()
    ops = _ops(module)
    assert ops["graph.col2im"] == 0 and ops["graph.conv_transpose"] == 1
    (got,) = run_reference(module, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_computed_image_shape_stays():
    b = GraphBuilder()
    x, image = b.input("x", [2, 9, 4]), b.input("image", [2], "int64")
    module = b.build(b.op("col2im", x, image, b.constant(np.array([3, 3]))))
    run_pipeline(RULE, make_context(), module)
    assert _ops(module)["graph.col2im"] == 1


def test_fold_runs_on_the_ai_core():
    module, shape = _fold(*GEOMETRIES["stride2_pad1"], batch=2)
    inputs = {"x": RNG.standard_normal(shape).astype(np.float32)}
    levels = run_levels(module, inputs, "test")
    assert_matches(levels)
    assert all(k.unit != "host" for k in levels.tiled_kernels)
