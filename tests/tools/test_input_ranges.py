"""Random inputs that make sense: indices within their table, masks in {0, 1} (issue 22)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tilegraph.frontend import load_onnx
from tilegraph.tools.random_inputs import DEFAULT_INT_RANGE, input_ranges, random_inputs
from tilegraph.tools.run.cli import run

SEQ = 16
I64, F32 = TensorProto.INT64, TensorProto.FLOAT


def _table(name: str, rows: int) -> onnx.TensorProto:
    data = np.random.default_rng(rows).standard_normal((rows, 4)).astype(np.float32)
    return numpy_helper.from_array(data, name)


def _scalar(name: str, value: float | int, dtype: type) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, dtype), name)


def bert_like(path: Path) -> str:
    """BERT's embeddings and attention-mask bias: input_ids -> Gather(30-row vocabulary),
    token_type_ids -> Gather(2-row table), attention_mask -> Cast -> Unsqueeze ->
    (1 - mask) * -10000."""
    nodes = [
        helper.make_node("Gather", ["words", "input_ids"], ["w"], name="word_embeddings"),
        helper.make_node("Gather", ["types", "token_type_ids"], ["t"], name="type_embeddings"),
        helper.make_node("Add", ["w", "t"], ["embeddings"]),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=F32),
        helper.make_node("Unsqueeze", ["m", "axes"], ["m4"]),
        helper.make_node("Sub", ["one", "m4"], ["inverted"]),
        helper.make_node("Mul", ["inverted", "big"], ["bias"]),
    ]
    ints = [
        helper.make_tensor_value_info(n, I64, [1, SEQ])
        for n in ("input_ids", "token_type_ids", "attention_mask")
    ]
    outputs = [
        helper.make_tensor_value_info("embeddings", F32, [1, SEQ, 4]),
        helper.make_tensor_value_info("bias", F32, [1, 1, 1, SEQ]),
    ]
    inits = [
        _table("words", 30),
        _table("types", 2),
        numpy_helper.from_array(np.array([1, 2], np.int64), "axes"),
        _scalar("one", 1.0, np.float32),
        _scalar("big", -10000.0, np.float32),
    ]
    graph = helper.make_graph(nodes, "bert_like", ints, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def uses_model(path: Path) -> str:
    """One integer input per rule: ``pos + 3`` indexes a 10-row table and an 8-row one
    through Reshape, ``keep`` is a Where condition after a Cast to bool, ``pad_mask`` is a
    mask by its name only, ``count`` is used in arithmetic only."""
    v = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Add", ["pos", "three"], ["shifted"]),
        helper.make_node("Gather", ["t10", "shifted"], ["g10"]),
        helper.make_node("Reshape", ["shifted", "flat"], ["flat_pos"]),
        helper.make_node("Gather", ["t8", "flat_pos"], ["g8"]),
        helper.make_node("Cast", ["keep"], ["keep_b"], to=TensorProto.BOOL),
        helper.make_node("Where", ["keep_b", "x", "zero"], ["kept"]),
        helper.make_node("Cast", ["pad_mask"], ["pm"], to=F32),
        helper.make_node("Add", ["pm", "x"], ["padded"]),
        helper.make_node("Mul", ["count", "count"], ["squared"]),
    ]
    graph = helper.make_graph(
        nodes,
        "uses",
        [
            v("pos", I64, [2, 3]),
            v("keep", I64, [3]),
            v("pad_mask", I64, [3]),
            v("count", I64, [3]),
            v("x", F32, [3]),
        ],
        [
            v("g10", F32, [2, 3, 4]),
            v("g8", F32, [6, 4]),
            v("kept", F32, [3]),
            v("padded", F32, [3]),
            v("squared", I64, [3]),
        ],
        [
            _table("t10", 10),
            _table("t8", 8),
            _scalar("three", 3, np.int64),
            numpy_helper.from_array(np.array([-1], np.int64), "flat"),
            _scalar("zero", 0.0, np.float32),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


def test_ranges_follow_the_uses(tmp_path):
    ranges = input_ranges(load_onnx(uses_model(tmp_path / "m.onnx")))
    # pos + 3 in [0, 10) and in [0, 8): pos in [-3, 5)
    assert ranges == {
        "pos": (-3, 5),
        "keep": (0, 2),
        "pad_mask": (0, 2),
        "count": DEFAULT_INT_RANGE,
    }


def test_bert_like_ranges_and_drawn_values(tmp_path):
    module = load_onnx(bert_like(tmp_path / "m.onnx"))
    assert input_ranges(module) == {
        "input_ids": (0, 30),
        "token_type_ids": (0, 2),
        "attention_mask": (0, 2),
    }
    inputs = random_inputs(module, 0, {}, {})
    assert inputs["input_ids"].min() >= 0 and inputs["input_ids"].max() < 30
    assert set(np.unique(inputs["token_type_ids"])) == {0, 1}
    assert set(np.unique(inputs["attention_mask"])) == {0, 1}
    assert inputs["input_ids"].max() >= 10  # the whole vocabulary, not [0, 10)


@pytest.mark.parametrize("target", [["--reference"], []])
def test_bert_like_runs_on_drawn_inputs_and_matches_onnxruntime(tmp_path, capsys, target):
    model = bert_like(tmp_path / "m.onnx")
    code = run(
        [
            model,
            *target,
            "--compare",
            "--no-format-report",
            "-q",
            "--save-outputs",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    bias = np.load(tmp_path / "out" / "bias.npy")
    assert set(np.unique(bias)) == {0.0, -10000.0}  # the mask drew both 0 and 1


def test_bert_like_runs_with_shape_given(tmp_path, capsys):
    model = bert_like(tmp_path / "m.onnx")
    argv = [model, "--reference", "--no-format-report", "-q", "--shape", f"token_type_ids=1,{SEQ}"]
    assert run(argv) == 0, capsys.readouterr().err
