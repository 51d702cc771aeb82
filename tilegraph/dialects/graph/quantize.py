"""Quantization ops (QuantizeLinear, DequantizeLinear, QLinear*, *Integer)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

QUANTIZE_OPS: list[type[GraphOp]] = []
