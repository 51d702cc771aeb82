"""The one error the ONNX frontend raises."""

from __future__ import annotations


class OnnxImportError(ValueError):
    """The model cannot be imported; the message says where and why (one line per issue)."""
