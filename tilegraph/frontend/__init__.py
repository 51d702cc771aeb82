"""Frontends: the ONNX importer. The Python graph builder is :mod:`tilegraph.builder`."""

from tilegraph.frontend.onnx_importer import OnnxImportError, load_onnx, supported_onnx_ops

__all__ = ["OnnxImportError", "load_onnx", "supported_onnx_ops"]
