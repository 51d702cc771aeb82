"""``fold-integer-ops`` on the form older onnxruntime ``quantize_dynamic`` makes (ddddocr's
CRNN ``common_old.onnx``): uint8 weights with a zero point (``w - zw`` beyond int8: split
in two int8 halves over a doubled K), and the bias quantised at run time and added in int32
between ConvInteger / MatMulInteger and the Cast. Every case runs with no host op on both
executors and gives onnxruntime's result bit for bit (the int32 sums are exact; the float
ops around them are the model's own)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilegraph
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics


def _model(
    op: str, x_shape: list[int], w: np.ndarray, w_zero: int, bias_shape: list[int], **attrs
) -> onnx.ModelProto:
    """DynamicQuantizeLinear -> ``op`` (uint8 weights ``w``, zero point ``w_zero``) -> Add
    of the bias quantised at run time (``Cast(Floor(b / (xs · ws)))``, reshaped to
    ``bias_shape``) -> Cast -> Mul by ``xs · ws``."""
    rng = np.random.default_rng(5)
    columns = int(np.prod(bias_shape))
    arrays = {
        "w": w,
        "wz": np.array(w_zero, np.uint8),
        "ws": np.array(0.01, np.float32),
        "b": rng.standard_normal(columns).astype(np.float32),
        "bshape": np.array(bias_shape, np.int64),
    }
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node(op, ["xq", "w", "xz", "wz"], ["acc"], **attrs),
        helper.make_node("Mul", ["xs", "ws"], ["s"]),
        helper.make_node("Div", ["b", "s"], ["bdiv"]),
        helper.make_node("Floor", ["bdiv"], ["bfloor"]),
        helper.make_node("Cast", ["bfloor"], ["bq"], to=TensorProto.INT32),
        helper.make_node("Reshape", ["bq", "bshape"], ["bq_shaped"]),
        helper.make_node("Add", ["acc", "bq_shaped"], ["acc_b"]),
        helper.make_node("Cast", ["acc_b"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["accf", "s"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, k) for k, a in arrays.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _weights(shape: list[int], w_zero: int) -> np.ndarray:
    """uint8 weights spanning 0..255, so ``w - w_zero`` leaves int8 on both sides."""
    w = np.random.default_rng(6).integers(0, 256, shape).astype(np.uint8)
    w.reshape(-1)[:2] = (0, 255)
    return w


CASES = {
    "conv3x3_s1": ("ConvInteger", [1, 20, 9, 9], [24, 20, 3, 3], [1, 24, 1, 1],
                   {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    "conv3x3_s2": ("ConvInteger", [1, 8, 11, 11], [40, 8, 3, 3], [1, 40, 1, 1],
                   {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "conv1x1": ("ConvInteger", [1, 24, 6, 6], [48, 24, 1, 1], [1, 48, 1, 1], {}),
    "matmul": ("MatMulInteger", [2, 7, 40], [40, 36], [36], {}),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_the_old_dynamic_form_folds_onto_the_int8_cube(name: str):
    op, x_shape, w_shape, bias_shape, attrs = CASES[name]
    w_zero = 121
    model = _model(op, x_shape, _weights(w_shape, w_zero), w_zero, bias_shape, **attrs)
    module = load_onnx(model)
    with collecting_statistics() as stats:
        run_pipeline("set-target{platform=ascend910b precision=int8},O2", make_context(), module)
    counters = stats.for_pass("fold-integer-ops").counters
    kind = "conv" if op == "ConvInteger" else "matmul"
    assert counters[f"folded-{kind}-integer"] == 1 and counters["split-weights"] == 1
    names = [o.name for o in module.walk()]
    assert "graph.conv_integer" not in names and "graph.matmul_integer" not in names
    x = np.random.default_rng(8).standard_normal(x_shape).astype(np.float32)
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    for platform in ("ascend910b", "ascend310p"):
        for executor in ("fast", "interpret"):
            compiled = tilegraph.compile(
                model, platform=platform, precision="int8", executor=executor
            )
            (got,) = compiled(x=x)
            assert compiled.host_ops == [], (platform, compiled.host_ops)
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{platform} {executor}")


def test_weights_beyond_two_int8_halves_stay_on_the_host():
    """``w - zw`` = 255 (uint8 255, zero point 0) is no sum of two int8 values."""
    w = _weights([40, 36], 0)
    model = _model("MatMulInteger", [2, 7, 40], w, 0, [36])
    compiled = tilegraph.compile(model, platform="ascend910b", precision="int8")
    assert [h["op"] for h in compiled.host_ops] == ["graph.matmul_integer"]
