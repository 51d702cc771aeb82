"""Signal ops (DFT, STFT, window functions)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

SIGNAL_OPS: list[type[GraphOp]] = []
