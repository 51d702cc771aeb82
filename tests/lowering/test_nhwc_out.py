"""A convolution's NC1HWC0 result made channels-last in one kernel (GE's TransData
NC1HWC0 -> NHWC): ``trans_data, squeeze, transpose`` of wav2vec2-style feature
extractors, ``trans_data, reshape, transpose`` of ViT patch embeddings,
``trans_data, transpose, reshape`` of PaddleOCR's CRNN. Checked at every level (graph,
macro kernels, both tile executors) with NaN in the padding lanes, C a multiple of C0 and
not, pixel windows with a ragged tail; the chain is one vector kernel."""

from __future__ import annotations

import json

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_tile_differential import assert_matches, assert_no_nan, run_levels
from tilegraph.builder import GraphBuilder

CHANNELS_LAST = ("layout.trans_data",)


def _conv_then(
    kind: str, channels: int, height: int, width: int, dtype: str = "float32"
) -> tuple[ModuleOp, dict]:
    """conv (1x1, 8 -> ``channels``) -> relu, then the channels-last chain ``kind``."""
    rng = np.random.default_rng(25)
    batch = 2
    b = GraphBuilder("main")
    x = b.input("x", [batch, 8, height, width], dtype, "NCHW")
    w = (rng.standard_normal((channels, 8, 1, 1)) / 3).astype(dtype)
    feature = b.op("relu", b.op("conv2d", x, b.constant(w, "NCHW")))
    if kind == "squeeze":  # [N, C, 1, T] -> [N, C, T] -> [N, T, C]
        out = b.op(
            "transpose",
            b.op("squeeze", feature, b.constant(np.array([2], np.int64))),
            perm=[0, 2, 1],
        )
    elif kind == "flatten":  # [N, C, H, W] -> [N, C, H*W] -> [N, H*W, C]
        flat = b.op(
            "reshape", feature, b.constant(np.array([batch, channels, height * width], np.int64))
        )
        out = b.op("transpose", flat, perm=[0, 2, 1])
    else:  # crnn: [N, C, 1, W] -> [N, W, C, 1] -> [N, W, C]
        moved = b.op("transpose", feature, perm=[0, 3, 1, 2])
        out = b.op("reshape", moved, b.constant(np.array([batch, width, channels], np.int64)))
    module = b.build(b.op("exp", out))
    return module, {"x": rng.standard_normal((batch, 8, height, width)).astype(dtype)}


CASES = [
    ("squeeze", 20, 1, 37),  # C stops inside a C0 block: the padding lanes are cut
    ("squeeze", 32, 1, 29),
    ("squeeze", 20, 1, 301),  # more pixels than one UB window on the test preset: ragged
    ("flatten", 20, 5, 7),
    ("flatten", 32, 4, 6),
    ("crnn", 20, 1, 13),
]


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize(("kind", "channels", "height", "width"), CASES)
def test_channels_last_is_one_kernel(kind, channels, height, width, platform):
    module, inputs = _conv_then(kind, channels, height, width)
    _one_channels_last_kernel(module, inputs, platform)


@pytest.mark.parametrize("kind", ["squeeze", "flatten"])
def test_float16_rows_of_32_bytes(kind):
    """float16: C0 = 16 lanes of 2 bytes, 24 channels (the second block half padding)."""
    module, inputs = _conv_then(kind, 24, 1 if kind == "squeeze" else 4, 9, "float16")
    _one_channels_last_kernel(module, inputs, "ascend910b", {"rtol": 2e-2, "atol": 2e-2})


def _one_channels_last_kernel(
    module: ModuleOp, inputs: dict, platform: str, tolerance: dict | None = None
) -> None:
    """Every level agrees (NaN padding lanes never reach the output) and the chain is one
    vector kernel starting at the TransData."""
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels, **(tolerance or {}))
    chains = [k for k in levels.tiled_kernels if "graph.transpose" in k.ops]
    assert len(chains) == 1, [(k.ops, k.reason) for k in levels.tiled_kernels]
    assert chains[0].ops[0] == "layout.trans_data" and chains[0].unit == "vector", chains
    assert not [k for k in levels.tiled_kernels if k.unit == "host"]


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
@pytest.mark.parametrize("channels", [20, 32])
def test_vit_patch_tokens_concat_after_the_class_token(channels, platform):
    """ViT's embedding: the class token, then the patches (conv -> flatten(2) ->
    transpose(1, 2)) concatenated along the tokens, plus position embeddings. The patch
    region of the concat is the channels-last nest, stored at row 1 on: one kernel."""
    rng = np.random.default_rng(26)
    batch, height, width = 2, 3, 5
    b = GraphBuilder("main")
    x = b.input("x", [batch, 8, height, width], "float32", "NCHW")
    cls = b.input("cls", [batch, 1, channels], "float32")
    w = (rng.standard_normal((channels, 8, 1, 1)) / 3).astype(np.float32)
    feature = b.op("conv2d", x, b.constant(w, "NCHW"))
    flat = b.op(
        "reshape", feature, b.constant(np.array([batch, channels, height * width], np.int64))
    )
    tokens = b.op("concat", cls, b.op("transpose", flat, perm=[0, 2, 1]), axis=1)
    position = rng.standard_normal((1, 1 + height * width, channels)).astype(np.float32)
    module = b.build(b.op("add", tokens, b.constant(position)))
    inputs = {
        "x": rng.standard_normal((batch, 8, height, width)).astype(np.float32),
        "cls": rng.standard_normal((batch, 1, channels)).astype(np.float32),
    }
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    joined = [k for k in levels.tiled_kernels if "graph.concat" in k.ops]
    assert len(joined) == 1, [(k.ops, k.reason) for k in levels.tiled_kernels]
    assert {"layout.trans_data", "graph.transpose"} <= set(joined[0].ops), joined
    assert joined[0].unit == "vector", joined


def test_concat_along_channels_keeps_the_concat_tiling():
    """Patch tokens concatenated with other features along C (axis 2) are no row region:
    the concat's own tiling takes the input (split as before), the results still agree."""
    rng = np.random.default_rng(27)
    b = GraphBuilder("main")
    x = b.input("x", [2, 8, 3, 5], "float32", "NCHW")
    side = b.input("side", [2, 15, 4], "float32")
    w = (rng.standard_normal((20, 8, 1, 1)) / 3).astype(np.float32)
    flat = b.op(
        "reshape",
        b.op("conv2d", x, b.constant(w, "NCHW")),
        b.constant(np.array([2, 20, 15], np.int64)),
    )
    joined = b.op("concat", b.op("transpose", flat, perm=[0, 2, 1]), side, axis=2)
    module = b.build(b.op("exp", joined))
    inputs = {
        "x": rng.standard_normal((2, 8, 3, 5)).astype(np.float32),
        "side": rng.standard_normal((2, 15, 4)).astype(np.float32),
    }
    levels = run_levels(module, inputs, "ascend910b", pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    assert not [k for k in levels.tiled_kernels if k.unit == "host"]


@pytest.mark.parametrize(
    ("model", "shape"),
    [("whisper_encoder", "input_features=1,80,40"), ("vit", "pixel_values=1,3,32,32")],
)
def test_zoo_lowering_section_has_no_channels_last_split(model, shape, tmp_path):
    """The zoo's whisper encoder (conv1d -> GELU -> ``squeeze, transpose``) and ViT (the
    patch tokens concatenated after the class token) lower every fused group whole: their
    one split group was the channels-last chain (tilegraph-run's ``lowering`` section),
    and the outputs still match onnxruntime."""
    assert_zoo_lowers_whole(model, shape, tmp_path)


def assert_zoo_lowers_whole(model: str, shape: str, tmp_path) -> None:
    """The zoo ``model`` (one ``--shape``) matches onnxruntime and its ``lowering``
    section (tilegraph-run's JSON report) lists no split group."""
    from tests.zoo.zoo import MODELS_DIR
    from tilegraph.tools.run.cli import run

    report = tmp_path / "r.json"
    args = [str(MODELS_DIR / f"{model}.onnx"), "--shape", shape, "--compare", "-q"]
    assert run([*args, "--no-format-report", "--json", str(report)]) == 0
    lowering = json.loads(report.read_text())["lowering"]
    assert lowering["groups_split"] == 0, lowering["split_groups"]


def zoo_report(name: str, tmp_path, data_set: int = 0) -> dict:
    """tilegraph-run's JSON report of the zoo model ``name`` on its ``data_set``-th inputs,
    checked against onnxruntime (the run exits 0)."""
    from tests.zoo.zoo import MODELS, MODELS_DIR, make_inputs
    from tilegraph.tools.run.cli import run

    model = MODELS[name]
    args = [str(MODELS_DIR / model.file), "--compare", "--no-format-report", "-q"]
    for key, value in make_inputs(model, data_set).items():
        np.save(tmp_path / f"{key}.npy", value)
        args += ["--input", f"{key}={tmp_path / f'{key}.npy'}"]
    assert run([*args, "--json", str(tmp_path / "r.json")]) == 0
    return json.loads((tmp_path / "r.json").read_text())


def test_a_map_past_the_checked_size_is_split_as_before(monkeypatch):
    """A feature map with more elements than the order check takes (``MAX_CHECKED``,
    lowered here) is refused: the group splits (TransData, then the transpose), outputs
    unchanged."""
    from tilegraph.lowering.conversion.tiling import nhwc_out

    monkeypatch.setattr(nhwc_out, "MAX_CHECKED", 100)
    module, inputs = _conv_then("squeeze", 20, 1, 37)
    assert_transdata_split_apart(module, inputs, "test")


def assert_transdata_split_apart(module: ModuleOp, inputs: dict, platform: str) -> None:
    """Every level agrees (NaN padding lanes never reach the output) and the chain's
    transpose runs in a kernel without the TransData (the group was split)."""
    levels = run_levels(module, inputs, platform, pad_value=float("nan"))
    assert_no_nan(levels)
    assert_matches(levels)
    chains = [k.ops for k in levels.tiled_kernels if "graph.transpose" in k.ops]
    assert chains and all("layout.trans_data" not in ops for ops in chains), chains
