"""ONNX in and out: the importer (:mod:`.onnx_importer`), the exporter (:mod:`.onnx_export`,
``tilegraph-opt --emit-onnx``) and onnxruntime as the oracle (:mod:`.onnxruntime_oracle`).
The Python graph builder is :mod:`tilegraph.builder`."""

from tilegraph.frontend.onnx_importer import OnnxImportError, load_onnx, supported_onnx_ops

__all__ = ["OnnxImportError", "load_onnx", "supported_onnx_ops"]
