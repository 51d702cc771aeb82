"""ddddocr 1.6.1's ``common_old.onnx``: a CRNN quantised by onnxruntime's
``quantize_dynamic`` (ConvInteger, MatMulInteger, one com.microsoft DynamicQuantizeLSTM),
fetched from its pinned wheel as ``tests.zoo.wheels`` fetches the zoo's (skipped with the
reason when the download fails). Its output ``387`` is ``[seq, 1, 8210]`` logits whose
argmax over the last axis is the recognised text: the reference and the tiled path
(origin and int8 precision) must give onnxruntime's indices, at two image widths."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

import tilegraph
from tests.zoo.wheels import Wheel, ZooFetchError, _wheel_file, cache_dir
from tilegraph.frontend import load_onnx
from tilegraph.runtime import run_reference

WHEEL = Wheel("ddddocr", "1.6.1", {"common_old.onnx": "ddddocr/common_old.onnx"})


def _model() -> Path:
    target = cache_dir() / "ddddocr_common_old.onnx"
    if not target.is_file():
        try:
            archive = _wheel_file(WHEEL, cache_dir())
            with zipfile.ZipFile(archive) as zf:
                data = zf.read(WHEEL.members["common_old.onnx"])
        except (ZooFetchError, KeyError, zipfile.BadZipFile) as e:
            pytest.skip(f"{WHEEL.requirement}: {e}")
        partial = target.with_suffix(".part")
        partial.write_bytes(data)
        partial.replace(target)
    return target


@pytest.mark.slow
@pytest.mark.parametrize("width", [160, 97])
def test_the_recognised_indices_match_onnxruntime(width: int):
    import onnxruntime as ort

    path = _model()
    x = np.random.default_rng(width).standard_normal((1, 1, 64, width)).astype(np.float32)
    (want,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"input1": x}
    )
    want = np.asarray(want)
    got = {"reference": run_reference(load_onnx(path), [x])[0]}
    for precision in ("origin", "int8"):
        got[precision] = tilegraph.compile(path, precision=precision)(x)[0]
    for name, logits in got.items():
        assert logits.shape == want.shape, name
        np.testing.assert_array_equal(logits.argmax(-1), want.argmax(-1), err_msg=name)
