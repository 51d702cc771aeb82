"""The calibration architectures are the published ones: parameter counts, valid ONNX, and
onnxruntime runs them to the documented output shapes."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tests.validation.benchmark_scripts import load_script

calibration_models = load_script("calibration_models")
ARCHITECTURES = calibration_models.ARCHITECTURES
build = calibration_models.build
parameter_count = calibration_models.parameter_count

# torchvision's resnet18 / 34 / 50 / 101 / 152, pretrainedmodels' se_resnet50, and Hugging
# Face's BertForQuestionAnswering (bert-base-uncased, bert-large-uncased), timm's
# vit_base_patch16_224, vit_base_patch32_224 and swin_tiny_patch4_window7_224: the counts
# their libraries report
PUBLISHED_PARAMETERS = {
    "resnet18": 11_689_512,
    "resnet34": 21_797_672,
    "resnet50": 25_557_032,
    "resnet101": 44_549_160,
    "resnet152": 60_192_808,
    "se_resnet50": 28_088_024,
    "bert_base": 108_893_186,
    "bert_large": 334_094_338,
    "vit_b16": 86_567_656,
    "vit_b32": 88_224_232,
    "swin_t": 28_288_354,
}


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_parameter_count_is_the_published_one(name: str) -> None:
    model = build(name, batch=1, seq=32, weights="splat")
    onnx.checker.check_model(model)
    assert parameter_count(model) == PUBLISHED_PARAMETERS[name]


def test_splat_weights_differ_between_tensors() -> None:
    # identical weights let CSE merge a layer's Q, K and V projections into one matmul,
    # which the real model computes three times
    from onnx import numpy_helper

    model = build("bert_base", batch=1, seq=8, weights="splat", dtype="float16")
    weights = [numpy_helper.to_array(t) for t in model.graph.initializer if t.dims and t.name]
    square = [w for w in weights if w.shape == (768, 768)]
    assert len(square) == 4 * 12  # Q, K, V and the output projection of 12 layers
    assert len({w.flat[0] for w in square[:4]}) == 4 and all(np.all(w == w.flat[0]) for w in square)


def test_bert_runs_on_onnxruntime_with_a_padding_mask() -> None:
    model = build("bert_base", batch=2, seq=8, weights="random")
    session = ort.InferenceSession(model.SerializeToString())
    ids = np.arange(16, dtype=np.int64).reshape(2, 8)
    mask = np.ones((2, 8), np.int64)
    mask[1, 5:] = 0
    start, end = (
        np.asarray(out)
        for out in session.run(
            None,
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
    )
    assert start.shape == end.shape == (2, 8)
    assert np.isfinite(start).all() and np.isfinite(end).all()


def test_resnet_batch_is_the_input_and_output_batch() -> None:
    model = build("resnet50", batch=4, weights="splat")
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    assert shape == [4, 3, 224, 224]
    out = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert out == [4, 1000]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "vgg"}, "unknown architecture"),
        ({"name": "resnet50", "batch": 0}, "batch must be"),
        ({"name": "bert_base", "seq": 513}, "sequence length"),
        ({"name": "resnet50", "weights": "zeros"}, "weights must be"),
        ({"name": "resnet50", "dtype": "float64"}, "dtype must be"),
    ],
)
def test_bad_requests_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build(**kwargs)


@pytest.mark.parametrize("name", ["resnet50", "bert_base"])
def test_float16_models_hold_no_float32_tensor(name: str) -> None:
    model = build(name, batch=1, seq=8, weights="splat", dtype="float16")
    onnx.checker.check_model(model)
    assert parameter_count(model) == PUBLISHED_PARAMETERS[name]
    floats = [t.name for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT]
    assert floats == []
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True).graph
    kinds = {v.type.tensor_type.elem_type for v in [*inferred.value_info, *inferred.output]}
    assert onnx.TensorProto.FLOAT not in kinds


def test_float16_bert_runs_on_onnxruntime() -> None:
    model = build("bert_base", batch=1, seq=8, weights="random", dtype="float16")
    session = ort.InferenceSession(model.SerializeToString())
    ids = np.arange(8, dtype=np.int64).reshape(1, 8)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    start = np.asarray(session.run(None, {**feeds, "token_type_ids": np.zeros_like(ids)})[0])
    assert start.dtype == np.float16 and np.isfinite(start).all()


@pytest.mark.parametrize("name", ["vit_b32", "swin_t"])
def test_vision_transformers_keep_the_images_of_a_batch_apart(name: str) -> None:
    """Swapping two images swaps their logits: the window partition, shifts and masks of
    Swin and ViT's class token never mix images."""
    model = build(name, batch=2, weights="random")
    session = ort.InferenceSession(model.SerializeToString())
    images = np.random.default_rng(1).standard_normal((2, 3, 224, 224)).astype(np.float32)
    logits = np.asarray(session.run(None, {"image": images})[0])
    swapped = np.asarray(session.run(None, {"image": images[::-1].copy()})[0])
    assert logits.shape == (2, 1000) and np.isfinite(logits).all()
    assert not np.allclose(logits[0], logits[1])
    np.testing.assert_allclose(swapped, logits[::-1], rtol=1e-4, atol=1e-4)


def test_swin_folds_its_position_bias_but_counts_its_table() -> None:
    model = build("swin_t", batch=1, weights="splat")
    buffers = [t for t in model.graph.initializer if t.name.startswith(calibration_models.BUFFER)]
    # one position bias per block (12), one shift mask per shifted block of stages 1-3 (5)
    biases = [t for t in buffers if "relative_position_bias" in t.name]
    masks = [t for t in buffers if "attn_mask" in t.name]
    assert len(biases) == 12 and len(masks) == 5
    assert list(biases[-1].dims) == [1, 24, 49, 49] and list(masks[0].dims) == [1, 64, 1, 49, 49]
    assert {n.op_type for n in model.graph.node}.isdisjoint({"Gather", "Expand"})
    tables = sum(169 * h * d for h, d in zip((3, 6, 12, 24), (2, 2, 6, 2), strict=True))
    properties = {p.key: p.value for p in model.metadata_props}
    assert int(properties[calibration_models.FOLDED_PARAMETERS]) == tables
