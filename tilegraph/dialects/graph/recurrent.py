"""Recurrent ops (RNN, GRU, LSTM)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

RECURRENT_OPS: list[type[GraphOp]] = []
