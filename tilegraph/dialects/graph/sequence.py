"""Sequence and optional ops."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

SEQUENCE_OPS: list[type[GraphOp]] = []
