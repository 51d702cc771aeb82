"""The comparison with onnxruntime picks its tolerance by the precision the model computes in
(``onnxruntime_oracle.default_tolerance`` / ``half_precision``): float32 outputs keep 1e-3 /
1e-4; a model computing in fp16 gets fp16's tolerance on every float output, including a
float32 one it casts to at the end; an explicit ``--rtol`` / ``--atol`` wins."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tilegraph.frontend.onnxruntime_oracle import compare, default_tolerance, half_precision
from tilegraph.tools.run.cli import run


def _matmul_softmax(path, elem: int, cast_out: bool = False) -> str:
    """x [N, 64] @ W [64, 10], softmax; fp16 weights when ``elem`` is FLOAT16 (logits in
    the hundreds, so fp16's rounding order shows in the probabilities)."""
    rng = np.random.default_rng(0)
    dtype = np.float16 if elem == TensorProto.FLOAT16 else np.float32
    w = numpy_helper.from_array((4 * rng.random((64, 10))).astype(dtype), "W")
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["m"]),
        helper.make_node("Softmax", ["m"], ["s"], axis=-1),
    ]
    out_elem = elem
    if cast_out:
        nodes.append(helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT))
        out_elem = TensorProto.FLOAT
    else:
        nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", elem, ["N", 64])],
        [helper.make_tensor_value_info("y", out_elem, None)],
        [w],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return str(path)


def test_default_tolerance_by_type():
    assert default_tolerance(np.ones(3, np.float32)) == (1e-3, 1e-4)
    assert default_tolerance(np.ones(3, np.int64)) == (1e-3, 1e-4)
    rtol, atol = default_tolerance(np.array([0.5, -8.0], np.float16))
    assert (rtol, atol) == (2.0**-7, 8.0 * 2.0**-8)
    # a float32 output of a model that computes in fp16 carries fp16's rounding
    assert default_tolerance(np.array([0.5, -8.0], np.float32), "float16") == (rtol, atol)
    # integers stay exact-ish whatever the model computes in
    assert default_tolerance(np.ones(3, np.int64), "float16") == (1e-3, 1e-4)
    assert default_tolerance(np.array([2.0], np.float32), "bfloat16") == (2.0**-4, 2.0**-4)


def test_half_precision_of_a_model(tmp_path):
    assert (
        half_precision(onnx.load(_matmul_softmax(tmp_path / "a.onnx", TensorProto.FLOAT))) is None
    )
    fp16 = onnx.load(_matmul_softmax(tmp_path / "b.onnx", TensorProto.FLOAT16, cast_out=True))
    assert half_precision(fp16) == "float16"


def test_fp16_tolerance_passes_rounding_and_fails_a_wrong_value():
    theirs = np.array([100.0, 1.0, 0.01], np.float16)
    rounding = theirs.astype(np.float64) + [0.125, 2.0**-9, 2.0**-16]  # 2 fp16 ulps each
    (row,) = compare(["y"], [rounding], [theirs])
    assert row["ok"] and row["rtol"] == 2.0**-7
    # 2% off on the largest value: 2.0 over atol 0.39 + rtol 0.78
    wrong = theirs.astype(np.float64) * [1.02, 1.0, 1.0]
    (row,) = compare(["y"], [wrong], [theirs])
    assert not row["ok"]
    # the absolute part scales with the largest value: a value 200x smaller is judged at
    # that scale (the price of a norm-wise tolerance, stated in default_tolerance)
    loose = theirs.astype(np.float64) + [0.0, 0.3, 0.0]
    assert compare(["y"], [loose], [theirs])[0]["ok"]
    (row,) = compare(["y"], [rounding], [theirs], rtol=1e-3, atol=1e-4)  # given: it wins
    assert not row["ok"] and row["rtol"] == 1e-3


def test_cli_compares_an_fp16_model_at_fp16_tolerance(tmp_path, capsys):
    model = _matmul_softmax(tmp_path / "m.onnx", TensorProto.FLOAT16, cast_out=True)
    np.save(tmp_path / "x.npy", np.random.default_rng(1).random((4, 64)).astype(np.float16))
    report = tmp_path / "r.json"
    args = [model, "--input", f"x={tmp_path / 'x.npy'}", "--no-format-report", "--json"]
    assert run([*args, str(report), "--compare"]) == 0
    data = json.loads(report.read_text())
    (row,) = data["compare"]["outputs"]
    assert row["ok"] and row["rtol"] == 2.0**-7
    assert "compare with onnxruntime (rtol 0.00781" in capsys.readouterr().out
    # float32 tolerance given by hand: the fp16 rounding order of the logits shows
    assert run([*args, str(report), "--compare", "--rtol", "1e-6", "--atol", "1e-7"]) == 1


def test_cli_judges_a_float32_model_at_the_precision_it_ran(tmp_path):
    """``--precision fp16`` rounds the cube's inputs on the tiles: a float32 model is then
    judged at fp16's tolerance (it failed at float32's); the graph-level reference does not
    round them and keeps float32's; ``force_fp16`` rounds on every path."""
    model = _matmul_softmax(tmp_path / "m.onnx", TensorProto.FLOAT)
    np.save(tmp_path / "x.npy", np.random.default_rng(1).random((4, 64)).astype(np.float32))
    report = tmp_path / "r.json"
    args = [model, "--input", f"x={tmp_path / 'x.npy'}", "--no-format-report", "--compare"]

    def compared(*extra: str) -> tuple[int, dict]:
        code = run([*args, "--json", str(report), *extra])
        (row,) = json.loads(report.read_text())["compare"]["outputs"]
        return code, row

    code, row = compared("--precision", "fp16")
    assert code == 0 and row["ok"] and row["rtol"] == 2.0**-7
    assert compared("--precision", "fp16", "--rtol", "1e-3", "--atol", "1e-4")[0] == 1
    code, row = compared("--precision", "fp16", "--reference")
    assert code == 0 and row["rtol"] == 1e-3
    assert compared("--precision", "force_fp16", "--reference")[1]["rtol"] == 2.0**-7
    assert compared()[1]["rtol"] == 1e-3


def test_onnxruntime_refusing_the_inputs_is_one_plain_message(tmp_path):
    """A comparison without a peer names onnxruntime's own status message, not its
    exception class and error-code prefix (``[ONNXRuntimeError] : 2 : INVALID_ARGUMENT``)."""
    import pytest

    from tilegraph.frontend.onnxruntime_oracle import OnnxruntimeFailed, compare_with_onnxruntime
    from tilegraph.tools.run.cli import error_message

    path = _matmul_softmax(tmp_path / "m.onnx", TensorProto.FLOAT)
    wrong = {"x": np.zeros((2, 63), np.float32)}  # the model takes [N, 64]
    with pytest.raises(OnnxruntimeFailed) as caught:
        compare_with_onnxruntime(path, wrong, ["y"], [np.zeros((2, 10), np.float32)])
    message = error_message(caught.value)
    assert message.startswith("error: onnxruntime failed on these inputs: ")
    assert "index: 1 Got: 63 Expected: 64" in message and "[ONNXRuntimeError]" not in message


def test_nan_on_both_sides_and_equal_infinities_pass_a_nan_on_one_side_fails():
    """A fully masked attention row is NaN in onnxruntime and in tilegraph alike (a Helium
    export at random {0, 1} masks): the same NaN, or the same infinity, is no mismatch; a
    NaN, or an infinity, on one side only is."""
    theirs = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    (row,) = compare(["y"], [theirs.copy()], [theirs])
    assert row["ok"] and row["max_abs"] == 0.0
    for wrong in ([np.nan, np.inf, -np.inf, np.nan], [0.0, np.inf, -np.inf, 1.0],
                  [np.nan, -np.inf, -np.inf, 1.0], [np.nan, np.inf, -np.inf, np.inf]):  # fmt: skip
        assert not compare(["y"], [np.array(wrong, np.float32)], [theirs])[0]["ok"], wrong
