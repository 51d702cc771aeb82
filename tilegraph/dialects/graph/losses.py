"""Loss ops (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss)."""

from __future__ import annotations

from tilegraph.dialects.graph.base import GraphOp

LOSS_OPS: list[type[GraphOp]] = []
