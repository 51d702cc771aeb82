"""Unary math and activation ops added for ONNX coverage (trigonometric, Celu, Mish, ...)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

MATH_OPS: list[type[GraphOp]] = []
