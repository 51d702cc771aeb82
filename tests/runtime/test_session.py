"""``tilegraph.Session``: dynamic models compiled per shape family, checked by guards.

Small models with a dynamic batch, a dynamic sequence length and dynamic H/W run through
O0, O1 and O2 at several shapes and match onnxruntime; the sweeps count compiles; an
assert guard stops a call without recompiling; guards live in the printed module.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto, numpy_helper

from tilegraph.dialects.entry import entry_function
from tilegraph.dialects.guards import module_guards
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.context import parse_mlir
from tilegraph.runtime.session import GuardViolation, Session, SessionError
from tilegraph.symbolic import GuardKind

rng = np.random.default_rng(0)


def _model(nodes, inputs, inits, opset: int = 17) -> onnx.ModelProto:
    graph = oh.make_graph(
        nodes,
        "g",
        [oh.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [
            numpy_helper.from_array(a.astype(np.float32 if a.dtype.kind == "f" else a.dtype), n)
            for n, a in inits.items()
        ],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def batch_model() -> onnx.ModelProto:
    """x[N, 3, 16, 16] -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm."""
    nodes = [
        oh.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("GlobalAveragePool", ["r"], ["g"]),
        oh.make_node("Flatten", ["g"], ["f"]),
        oh.make_node("Gemm", ["f", "fc", "bias"], ["y"], transB=1),
    ]
    inits = {
        "w": rng.standard_normal((8, 3, 3, 3)),
        "fc": rng.standard_normal((5, 8)),
        "bias": rng.standard_normal((5,)),
    }
    return _model(nodes, [("x", ["N", 3, 16, 16])], inits)


def sequence_model() -> onnx.ModelProto:
    """x[B, T, 8] -> MatMul -> Softmax -> Add x -> Transpose -> ReduceMean over T."""
    nodes = [
        oh.make_node("MatMul", ["x", "w"], ["m"]),
        oh.make_node("Softmax", ["m"], ["s"], axis=-1),
        oh.make_node("Add", ["s", "x"], ["a"]),
        oh.make_node("Transpose", ["a"], ["t"], perm=[0, 2, 1]),
        oh.make_node("ReduceMean", ["t", "axes"], ["y"], keepdims=0),
    ]
    inits = {"w": rng.standard_normal((8, 8)), "axes": np.array([2], np.int64)}
    return _model(nodes, [("x", ["B", "T", 8])], inits, opset=18)


def image_model() -> onnx.ModelProto:
    """x[1, 3, H, W] -> Conv stride 2 -> Relu -> MaxPool 2x2 -> Conv 1x1 (any H, W >= 4)."""
    nodes = [
        oh.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        oh.make_node("Conv", ["p", "w2"], ["y"]),
    ]
    inits = {"w1": rng.standard_normal((16, 3, 3, 3)), "w2": rng.standard_normal((4, 16, 1, 1))}
    return _model(nodes, [("x", [1, 3, "H", "W"])], inits)


def _onnxruntime(model: onnx.ModelProto, **inputs: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


CASES = [
    (batch_model, [(1, 3, 16, 16), (4, 3, 16, 16), (7, 3, 16, 16)]),
    (sequence_model, [(2, 5, 8), (1, 9, 8), (3, 1, 8), (2, 12, 8)]),
    (image_model, [(1, 3, 16, 16), (1, 3, 23, 9), (1, 3, 32, 48)]),
]


@pytest.mark.parametrize("pipeline", ["O0", "O1", "O2"])
@pytest.mark.parametrize(("build", "shapes"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_dynamic_models_match_onnxruntime_at_every_shape(build, shapes, pipeline):
    model = build()
    session = Session(model, pipeline)
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        (y,) = session(x)
        np.testing.assert_allclose(y, _onnxruntime(model, x=x), rtol=1e-4, atol=1e-5)
    assert session.stats.compiles <= 2  # the second only when a size-1 dim was specialised
    # the output type is an expression in the symbols, not unknown
    fn = entry_function(session.artifacts[-1].module)
    (out,) = fn.function_type.outputs.data
    assert isinstance(out, TensorType) and all(
        not (isinstance(d, int) and d < 0) for d in out.origin_shape
    )


def test_the_tiled_path_is_specialised_per_shape_and_matches():
    model = image_model()
    session = Session(model, "O2", target="tiles")
    for shape in [(1, 3, 16, 16), (1, 3, 20, 12), (1, 3, 16, 16)]:
        x = rng.standard_normal(shape).astype(np.float32)
        (y,) = session(x)
        np.testing.assert_allclose(y, _onnxruntime(model, x=x), rtol=1e-4, atol=1e-5)
    assert session.stats.compiles == 1 and session.stats.tilings == 2


def test_a_batch_sweep_compiles_twice_in_dynamic_mode_and_once_per_shape_in_static():
    model = batch_model()
    dynamic = Session(model, "O1")
    for n in range(1, 65):
        dynamic(rng.standard_normal((n, 3, 16, 16)).astype(np.float32))
    assert dynamic.stats.compiles == 2 and dynamic.stats.hits == 62
    first, second = dynamic.stats.recompiles
    assert first.reason == "first call"
    assert "expect guard N == 1 failed with N = 2 (input 'x' axis 0)" in second.reason
    assert "specialised to 1" in second.reason
    static = Session(model, "O1", "static")
    for n in [1, 2, 3, 2, 4, 1]:
        static(rng.standard_normal((n, 3, 16, 16)).astype(np.float32))
    assert static.stats.compiles == 4 and static.stats.hits == 2


def test_an_assert_guard_violation_is_one_clear_error_and_no_recompile():
    model = _model(
        [oh.make_node("MatMul", ["a", "b"], ["y"])], [("a", ["m", "k"]), ("b", ["j", "n"])], {}
    )
    session = Session(model)
    session(a=np.ones((2, 4), np.float32), b=np.ones((4, 3), np.float32))
    (guard,) = [g for g in module_guards(session.artifacts[0].module) if g.op == "y"]
    assert guard.kind is GuardKind.ASSERT
    with pytest.raises(GuardViolation) as info:
        session(a=np.ones((2, 4), np.float32), b=np.ones((5, 3), np.float32))
    message = str(info.value)
    assert (
        "assert guard k == j failed with j = 5 (input 'b' axis 0), k = 4 (input 'a' axis 1)"
        in message
    )
    assert "needed by op 'y'" in message
    assert session.stats.compiles == 1


def test_guards_print_parse_and_survive_the_pipeline():
    session = Session(sequence_model(), "O2")
    session(rng.standard_normal((1, 4, 8)).astype(np.float32))
    module = session.artifacts[0].module
    guards = module_guards(module)
    assert any("specialised to 1" in g.reason for g in guards)  # recorded at import, kept by O2
    text = str(module)
    assert 'tilegraph.guards = [{kind = "expect", condition = "B == 1"' in text
    assert module_guards(parse_mlir(text)) == guards


def test_bad_session_arguments_and_inputs_are_clear_errors():
    with pytest.raises(SessionError, match="unknown dynamic mode 'lazy'"):
        Session(batch_model(), dynamic="lazy")
    session = Session(batch_model())
    with pytest.raises(SessionError, match=r"expected 1 input\(s\) \['x'\], got 2"):
        session(np.ones((1, 3, 16, 16), np.float32), np.ones(1, np.float32))
