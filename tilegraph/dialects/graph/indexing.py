"""Indexing ops (TopK, Scatter*, Gather*, OneHot, NonZero, Unique, ...)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

INDEXING_OPS: list[type[GraphOp]] = []
