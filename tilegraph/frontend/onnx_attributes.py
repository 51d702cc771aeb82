"""ONNX attribute values as the importer (:mod:`tilegraph.frontend.onnx_importer`) passes
them to graph ops, and tensors as ``graph.constant`` ops: :func:`attribute_value` decodes an
``AttributeProto`` (a subgraph stays a ``GraphProto``), :func:`attribute_args` turns tensor
attributes into dense data for ``make``, :func:`constant_node_value` reads a Constant
node's value, :func:`constant_op` holds an array as tilegraph holds its element type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper

from tilegraph.dialects.element_types import element_type_of, in_container
from tilegraph.dialects.graph import ConstantOp, GraphOp
from tilegraph.dialects.layout import TensorType
from tilegraph.formats import Format
from tilegraph.frontend.onnx_errors import OnnxImportError
from tilegraph.frontend.onnx_subgraphs import proto_value_type


def attribute_value(attr: onnx.AttributeProto) -> Any:
    kind = attr.type
    A = onnx.AttributeProto
    if kind == A.FLOAT:
        return float(attr.f)
    if kind == A.INT:
        return int(attr.i)
    if kind == A.STRING:
        return attr.s.decode()
    if kind == A.INTS:
        return [int(v) for v in attr.ints]
    if kind == A.FLOATS:
        return [float(v) for v in attr.floats]
    if kind == A.STRINGS:
        return [v.decode() for v in attr.strings]
    if kind == A.TENSOR:
        return numpy_helper.to_array(attr.t)
    if kind == A.GRAPH:
        return attr.g
    if kind == A.TYPE_PROTO:
        return proto_value_type(attr.tp, f"attribute '{attr.name}'")
    raise ValueError(f"attribute '{attr.name}' has unsupported type {A.AttributeType.Name(kind)}")


def attribute_args(cls: type[GraphOp], attrs: Mapping[str, Any]) -> dict[str, Any]:
    """ONNX attribute values as ``make`` arguments (tensor attributes become dense data)."""
    from tilegraph.dialects.graph.dense import DenseAttr

    out: dict[str, Any] = {}
    for name, value in attrs.items():
        out[name] = DenseAttr.from_array(value) if isinstance(value, np.ndarray) else value
    return out


def constant_node_value(attrs: Mapping[str, Any], label: str) -> np.ndarray:
    if "value" in attrs:
        return np.asarray(attrs["value"])
    if "value_float" in attrs:
        return np.array(attrs["value_float"], dtype=np.float32)
    if "value_int" in attrs:
        return np.array(attrs["value_int"], dtype=np.int64)
    if "value_floats" in attrs:
        return np.array(attrs["value_floats"], dtype=np.float32)
    if "value_ints" in attrs:
        return np.array(attrs["value_ints"], dtype=np.int64)
    raise OnnxImportError(f"{label}: unsupported Constant form ({', '.join(attrs)})")


def constant_op(array: np.ndarray, origin_format: Format | str = Format.ND) -> ConstantOp:
    """A ``graph.constant`` of ``array`` (origin ``origin_format``), held the way tilegraph
    holds its element type (ml_dtypes' bfloat16 and int4 arrays in float32 / int8
    containers). ValueError (FormatError, UnsupportedElementType) for data of no tensor
    dtype. Shared with :mod:`tilegraph.builder`."""
    array = np.asarray(array)
    held = TensorType(array.shape, element_type_of(array.dtype), origin_format)
    return ConstantOp(in_container(array), held)
