"""Control flow as regions (graph.if, graph.loop, graph.scan)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

CONTROL_FLOW_OPS: list[type[GraphOp]] = []
