"""ONNX models whose weights live in external data files (PyTorch's ``dynamo=True``
exports write ``model.onnx.data`` beside the model): the files a model names, checked
before they are read so that a missing one is a located message, not onnx's."""

from __future__ import annotations

from pathlib import Path

import onnx

from tilegraph.frontend.onnx_errors import OnnxImportError


def _external_files(model: onnx.ModelProto) -> list[str]:
    """The external data files the model's initializers name, in order of first use."""
    files: list[str] = []
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            entries = {e.key: e.value for e in tensor.external_data}
            if entries.get("location") not in files:
                files.append(entries.get("location", ""))
    return files


def check_external_data_files(model: onnx.ModelProto, folder: Path, where: str) -> None:
    """OnnxImportError when a file the model names is not in ``folder``."""
    missing = [f for f in _external_files(model) if not (folder / f).is_file()]
    if missing:
        raise OnnxImportError(
            f"{where}: its weights are in the external data file {missing[0]!r}, which is "
            f"not next to the model (looked in {folder}): copy it there with the model"
        )


def check_no_external_data(model: onnx.ModelProto, where: str) -> None:
    """OnnxImportError when the model (read as bytes) names external data files."""
    files = _external_files(model)
    if files:
        raise OnnxImportError(
            f"{where}: its weights are in the external data file {files[0]!r}, which a "
            "model read as bytes cannot find: load the model by its path"
        )
