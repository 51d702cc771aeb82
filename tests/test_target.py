"""The target on the module (tilegraph.target): one preset and precision per compile,
read by every pass, the executors and the cycle model (docs/hardware.md)."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr

import tilegraph
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.hardware import DEFAULT_PRESET
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime.compiled import CompileError
from tilegraph.target import TARGET_ATTR, TargetError, pin_target, target_of


def _add_chain(n: int = 5, shape: tuple[int, ...] = (128, 64)) -> onnx.ModelProto:
    """x0 + x1 + ... + x(n-1) over 32 KiB tensors: how many adds one fused group holds
    depends on UB (ascend910b 192 KiB: three inputs, ascend310p 256 KiB: four)."""
    inputs = [oh.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(shape)) for i in range(n)]
    nodes, prev = [], "x0"
    for i in range(1, n):
        out = "y" if i == n - 1 else f"s{i}"
        nodes.append(oh.make_node("Add", [prev, f"x{i}"], [out]))
        prev = out
    output = oh.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    graph = oh.make_graph(nodes, "chain", inputs, [output])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _group_inputs(module: ModuleOp) -> list[int]:
    return [len(op.operands) for op in module.walk() if op.name == "graph.fused"]


def test_compile_platform_reaches_o2_fusion() -> None:
    default = tilegraph.compile(_add_chain(), target="reference")
    b910 = tilegraph.compile(_add_chain(), target="reference", platform="ascend910b")
    p310 = tilegraph.compile(_add_chain(), target="reference", platform="ascend310p")
    assert _group_inputs(default.module) == _group_inputs(b910.module) == [3, 3]
    assert _group_inputs(p310.module) == [4]  # 310P's UB: the larger group
    assert target_of(p310.module) == ("ascend310p", "origin")
    assert target_of(default.module).platform == DEFAULT_PRESET


def test_compile_tiles_on_the_target_and_cycle_model_reads_it() -> None:
    model = tilegraph.compile(_add_chain(3, (4, 8)), platform="test", precision="fp16")
    assert target_of(model.module) == ("test", "fp16")
    assert simulate_module(model.module).platform == "test"
    # The cycle model follows the module's target, not a default.
    model.module.attributes[TARGET_ATTR] = DictionaryAttr({"platform": StringAttr("ascend310p")})
    assert simulate_module(model.module).platform == "ascend310p"
    xs = {f"x{i}": np.full((4, 8), i, np.float32) for i in range(3)}
    np.testing.assert_allclose(model(**xs)[0], np.full((4, 8), 3, np.float32))


def test_option_sets_absent_target_and_pass_pins_default() -> None:
    module = ModuleOp([])
    run_pipeline("fuse-ops", make_context(), module)
    assert str(module.attributes[TARGET_ATTR]) == '{platform = "ascend910b"}'
    fresh = ModuleOp([])
    run_pipeline("format{platform=ascend310p}", make_context(), fresh)
    assert target_of(fresh).platform == "ascend310p"


def test_differing_option_is_an_error_naming_the_setter() -> None:
    module = ModuleOp([])
    run_pipeline("fuse-ops", make_context(), module)
    with pytest.raises(TargetError) as e:
        run_pipeline("tile-kernels{platform=ascend310p}", make_context(), module)
    assert str(e.value) == (
        "pass 'tile-kernels': platform 'ascend310p' differs from the module's target "
        "'ascend910b' (set by pass 'fuse-ops')"
    )
    pin_target(module, "me", precision="bf16")
    with pytest.raises(TargetError, match="precision 'fp16' differs .* 'bf16' \\(set by me\\)"):
        run_pipeline("tile-kernels{precision=fp16}", make_context(), module)


def test_compile_refuses_a_platform_the_module_contradicts() -> None:
    module = ModuleOp([])
    pin_target(module, "the test", "test")
    with pytest.raises(CompileError, match="differs from the module's target 'test'"):
        tilegraph.compile(module, pipeline="", target="reference", platform="ascend310p")


@pytest.mark.parametrize(
    "attr, message",
    [
        (StringAttr("ascend910b"), "must be a dictionary"),
        (DictionaryAttr({"platform": StringAttr("gpu")}), "unknown platform 'gpu'"),
        (DictionaryAttr({"precision": StringAttr("fp8")}), "unknown precision 'fp8'"),
        (DictionaryAttr({"cores": StringAttr("2")}), "unknown key 'cores'"),
    ],
)
def test_malformed_target(attr, message) -> None:
    module = ModuleOp([], {TARGET_ATTR: attr})
    with pytest.raises(TargetError, match=message):
        target_of(module)
    with pytest.raises(TargetError, match=message):
        run_pipeline("cse", make_context(), module)
