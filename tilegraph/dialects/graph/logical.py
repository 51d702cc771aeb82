"""Logical, comparison, bitwise and integer ops (And/Or/Xor/Not, BitShift, Mod, Where, ...)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

LOGICAL_OPS: list[type[GraphOp]] = []
