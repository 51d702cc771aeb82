"""The errors the ONNX frontend raises."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class OnnxImportError(ValueError):
    """The model cannot be imported; the message says where and why (one line per issue)."""


class ValueDependentError(OnnxImportError):
    """A node cannot be typed without knowing the shapes of ``shape_inputs`` or the values of
    ``value_inputs`` (an If whose branches return different ranks). Importing again with
    those inputs bound (``load_onnx(..., shape_env=ShapeEnv("static"), input_shapes=...,
    input_values=...)``) lets the import choose the branch."""

    def __init__(
        self,
        message: str,
        node: str,
        shape_inputs: Sequence[str],
        value_inputs: Sequence[str],
        deciders: Mapping[str, str] | None = None,
        how: str = "branches on",
    ) -> None:
        super().__init__(message)
        self.node = node
        self.shape_inputs = list(shape_inputs)
        self.value_inputs = list(value_inputs)
        self.deciders = dict(deciders or {})
        """The node whose condition each input decides (``node`` when not listed)."""
        self.how = how
        """How the node depends on the inputs, as the binding's reason says it (an If
        ``branches on`` them; a Squeeze without axes ``has a rank set by``)."""
