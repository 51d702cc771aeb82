"""Tiling parameters: a strategy declares its choices (names, legal values, the heuristic's
default), ``tile.params`` on a macro kernel picks a point, the default point lowers to the
same kernel as no parameters, another point changes the kernel and keeps its numbers, and a
value outside the declared ones is an error naming the kernel."""

from __future__ import annotations

import numpy as np
import onnx.helper as oh
import pytest
from onnx import TensorProto
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.frontend import load_onnx
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.tuning_params import (
    PARAMS_ATTR,
    TilingParam,
    TilingParamError,
    default_point,
    kernel_params,
    set_kernel_params,
)
from tilegraph.lowering.conversion.tiling import tiling_space
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime.tiles import run_tiles


def _matmul(m: int, k: int, n: int):
    graph = oh.make_graph(
        [oh.make_node("MatMul", ["a", "b"], ["y"])],
        "mm",
        [
            oh.make_tensor_value_info("a", TensorProto.FLOAT, [m, k]),
            oh.make_tensor_value_info("b", TensorProto.FLOAT, [k, n]),
        ],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _macro(m: int, k: int, n: int) -> tuple[ModuleOp, func.FuncOp]:
    module = load_onnx(_matmul(m, k, n))
    run_pipeline(
        "set-target{platform=ascend910b},O1,lower-graph-to-kernels", make_context(), module
    )
    (kernel,) = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.kernel" in f.attributes
    ]
    return module, kernel


def _tiled_text(module: ModuleOp) -> str:
    run_pipeline("tile-kernels", make_context(), module)
    return str(module)


def test_matmul_declares_its_base_block():
    _, kernel = _macro(256, 512, 384)
    space = {p.name: p for p in tiling_space(kernel, hardware_preset("ascend910b"))}
    assert {"matmul.m1", "matmul.n1", "matmul.k1"} <= set(space)
    m1 = space["matmul.m1"]
    assert m1.values == (1, 2, 4, 8, 16) and m1.default == 8
    assert kernel_params(kernel) == {}  # finding the space leaves the kernel as it was


def test_default_point_is_the_heuristic():
    module, kernel = _macro(256, 512, 384)
    plain = _tiled_text(module.clone())
    space = tiling_space(kernel, hardware_preset("ascend910b"))
    set_kernel_params(kernel, default_point(space))
    run_pipeline("tile-kernels", make_context(), module)
    assert kernel_params(kernel) == default_point(space)  # the point stays on the kernel
    del kernel.attributes[PARAMS_ATTR]
    assert str(module) == plain


@pytest.mark.parametrize("executor", ["fast", "interpret"])
def test_another_point_changes_the_kernel_and_keeps_the_numbers(executor):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((96, 160)).astype(np.float32)
    b = rng.standard_normal((160, 80)).astype(np.float32)
    module, kernel = _macro(96, 160, 80)
    set_kernel_params(kernel, {"matmul.m1": 2, "matmul.n1": 1, "matmul.k1": 2})
    plain_module, _ = _macro(96, 160, 80)
    assert _tiled_text(module.clone()) != _tiled_text(plain_module)
    run_pipeline(lowering_pipeline(), make_context(), module)  # lower-graph-to-kernels: no-op
    (y,) = run_tiles(module, [a, b], executor=executor, pad_value=float("nan"))
    np.testing.assert_allclose(y, a @ b, rtol=1e-4, atol=1e-4)


def test_a_value_outside_the_space_names_the_kernel():
    module, kernel = _macro(64, 64, 64)
    set_kernel_params(kernel, {"matmul.m1": 3})
    with pytest.raises(TilingParamError, match=r"kernel @\w+: tiling parameter 'matmul.m1' = 3"):
        run_pipeline("tile-kernels", make_context(), module)


def test_a_default_outside_the_values_is_refused():
    with pytest.raises(TilingParamError, match="default 3"):
        TilingParam("x", (1, 2), 3)


def test_vector_strategies_share_one_ub_budget_parameter():
    graph = oh.make_graph(
        [oh.make_node("Relu", ["x"], ["y"])],
        "relu",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [64, 256])],
    )
    module = load_onnx(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]))
    run_pipeline("set-target{platform=test},O1,lower-graph-to-kernels", make_context(), module)
    (kernel,) = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.kernel" in f.attributes
    ]
    space = {p.name: p for p in tiling_space(kernel, hardware_preset("test"))}
    budget = space["vector.ub_fraction"]
    assert budget.default == "1/2" and budget.values == ("1/8", "1/4", "1/2", "3/4")
    plain = _tiled_text(module.clone())
    set_kernel_params(kernel, {"vector.ub_fraction": "1/8"})
    assert _tiled_text(module) != plain  # smaller tiles on the test preset's small UB
