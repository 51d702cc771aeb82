"""Attention-family ops (Attention, RotaryEmbedding, LinearAttention, FlexAttention, ...)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

ATTENTION_OPS: list[type[GraphOp]] = []
