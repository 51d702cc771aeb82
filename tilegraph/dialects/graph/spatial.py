"""Spatial / image ops (Resize, GridSample, RoiAlign, DepthToSpace, ...)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

SPATIAL_OPS: list[type[GraphOp]] = []
