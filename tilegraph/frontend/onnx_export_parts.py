"""Parts of the ONNX export (:mod:`tilegraph.frontend.onnx_export`): value types (tensors as
their origin view, sequences, optionals), constants and attributes, and control-flow ops with
their bodies as subgraphs.

A body becomes a ``GraphProto`` attribute (``then_branch``, ``body``, ...). Its leading block
arguments are the subgraph's inputs; its trailing ones, the op's captures, are read by their
outer names, the way ONNX subgraphs read outer values; ``graph.yield`` gives the outputs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.irdl import OptionalDef

from tilegraph.dialects.element_conversion import exact_array
from tilegraph.dialects.graph import ConstantOp, ShapeError, YieldOp
from tilegraph.dialects.graph.base import from_attribute
from tilegraph.dialects.graph.control_flow import RegionOp, ScanOp
from tilegraph.dialects.graph.dense import DenseAttr
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.value_types import OptionalType, SequenceType
from tilegraph.dialects.layout import TensorType
from tilegraph.dialects.layout_storage import origin_array
from tilegraph.formats import FormatError
from tilegraph.formats.dims import dim_to_text, normalize_dim


class OnnxExportError(ValueError):
    """The module cannot be written as ONNX; the message names the op and the reason."""


_FORMAT_KEY = "tilegraph.type"
"""metadata_props key of a value's full ``!layout.tensor`` type when it has a format."""


def tensor_type_proto(t: TensorType, elem_code: int) -> onnx.TypeProto:
    dims: list[int | str | None] = []
    for d in t.origin_shape:
        d = normalize_dim(d)
        dims.append((d if d >= 0 else None) if isinstance(d, int) else dim_to_text(d))
    return helper.make_tensor_type_proto(elem_code, dims)


def value_type_proto(
    t: Attribute, elem_code: Callable[[TensorType], int], what: str
) -> onnx.TypeProto:
    """The ONNX type of a tensor (its origin view), a sequence or an optional."""
    if isinstance(t, TensorType):
        return tensor_type_proto(t, elem_code(t))
    if isinstance(t, SequenceType):
        element = t.element_tensor or TensorType([], t.element_type)
        inner = tensor_type_proto(element, elem_code(element))
        if t.element_tensor is None:
            inner.tensor_type.ClearField("shape")  # the elements' rank is unknown
        return helper.make_sequence_type_proto(inner)
    if isinstance(t, OptionalType):
        return helper.make_optional_type_proto(value_type_proto(t.element, elem_code, what))
    raise OnnxExportError(f"{what}: type {t} has no ONNX form")


def region_node(
    op: RegionOp,
    inputs: list[str],
    outputs: list[str],
    bodies: dict[str, onnx.GraphProto],
) -> onnx.NodeProto:
    """The ONNX node of a control-flow op: its operands but the captures, its bodies as graph
    attributes, its properties (Scan's ``num_scan_inputs`` from its operand groups)."""
    node = helper.make_node(
        op.ONNX_OP or op.name,
        inputs,
        outputs,
        name=outputs[0] if outputs else None,
        domain=op.ONNX_DOMAIN,
    )
    node.attribute.extend(helper.make_attribute(k, g) for k, g in bodies.items())
    if isinstance(op, ScanOp):
        node.attribute.append(helper.make_attribute("num_scan_inputs", len(op.scan_inputs)))
    return node


def operand_names(op: RegionOp, name_of: Callable[[SSAValue], str]) -> list[str]:
    """The op's operands but its captures, by operand group; an absent optional operand is
    the empty name (Loop's trip count or condition)."""
    names: list[str] = []
    defs = op.get_irdl_definition().operands
    for (_, odef), group in zip(defs[:-1], op.split_groups(op.operands)[:-1], strict=True):
        if not group and isinstance(odef, OptionalDef):
            names.append("")
        names += [name_of(v) for v in group]
    while names and not names[-1]:
        names.pop()
    return names


def yield_of(block: Block) -> YieldOp:
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise OnnxExportError("a body does not end with graph.yield")
    return last


# ---- values, constants and attributes ---------------------------------------------------


@cache
def onnx_type_codes() -> dict[str, int]:
    codes: dict[str, int] = {}
    for code in range(1, 64):
        try:
            codes[onnx_dtype_name(code)] = code
        except ShapeError:
            continue
    return codes


def elem_code(t: TensorType, what: str) -> int:
    code = onnx_type_codes().get(str(t.dtype))
    if code is None:
        raise OnnxExportError(f"{what}: element type {t.element_type} has no ONNX data type")
    return code


def tensor_type_of(value: SSAValue, what: str) -> TensorType:
    t = value.type
    if not isinstance(t, TensorType):
        raise OnnxExportError(
            f"{what}: type {t} is not a !layout.tensor (sequences, optionals and tile-level "
            "types are not exported)"
        )
    return t


def value_info(name: str, t: Attribute, what: str) -> onnx.ValueInfoProto:
    """The origin view of a tensor type ``t`` (its formats in metadata_props when it has
    any), or a sequence or optional type."""
    info = helper.make_value_info(name, value_type_proto(t, lambda x: elem_code(x, what), what))
    if isinstance(t, TensorType) and (
        t.origin_format != t.storage_format or t.origin_format.value != "ND"
    ):
        info.metadata_props.add(key=_FORMAT_KEY, value=str(t))
    return info


def tensor_proto(array: np.ndarray, t: TensorType, name: str, what: str) -> onnx.TensorProto:
    """Origin-layout data of a constant of type ``t`` (its array may be in storage layout)."""
    try:
        data = origin_array(np.asarray(array), t)
    except (FormatError, ValueError) as e:
        raise OnnxExportError(f"{what}: cannot bring the data back to origin layout: {e}") from e
    elem_code(t, what)  # refuses a type ONNX has no data type for
    # bfloat16 / int4 are held in float32 / int8 containers: give onnx the declared type
    return numpy_helper.from_array(exact_array(data, t.dtype), name)


def constant_data(op: ConstantOp, what: str) -> np.ndarray:
    data = op.constant_array()
    if data is None:
        raise OnnxExportError(
            f"{what}: the constant's data was elided when the IR was printed "
            "(print it with --print-constants)"
        )
    return data


def attribute_proto(name: str, attr: Attribute, kind: int | None, what: str) -> onnx.AttributeProto:
    """An ONNX attribute from a stored graph-op property; ``kind`` is the schema's type."""
    A = onnx.AttributeProto
    if isinstance(attr, DenseAttr):
        array = attr.array
        if array is None:
            raise OnnxExportError(f"{what}: attribute '{name}' holds elided data")
        code = onnx_type_codes().get(attr.data.dtype_name)
        if code is None:
            raise OnnxExportError(f"{what}: attribute '{name}' has an unsupported data type")
        target = helper.tensor_dtype_to_np_dtype(code)
        return helper.make_attribute(name, numpy_helper.from_array(array.astype(target)))
    value: Any = from_attribute(attr)
    if isinstance(value, tuple):
        if kind == A.FLOATS:
            value = [float(v) for v in value]
        if not value:  # an empty list has no type of its own
            return helper.make_attribute(name, [], attr_type=kind or A.INTS)
        return helper.make_attribute(name, list(value))
    if kind == A.FLOAT and isinstance(value, int):
        value = float(value)
    if isinstance(value, int | float | str):
        return helper.make_attribute(name, value)
    raise OnnxExportError(f"{what}: attribute '{name}' ({attr}) has no ONNX form")


def attribute_kind(spec: onnx.defs.OpSchema.Attribute | None) -> int | None:
    """The AttributeProto type of a schema attribute (the list kinds matter for empty lists
    and int-valued floats)."""
    if spec is None:
        return None
    T, A = onnx.defs.OpSchema.AttrType, onnx.AttributeProto
    kinds = {T.FLOAT: A.FLOAT, T.INT: A.INT, T.STRING: A.STRING, T.FLOATS: A.FLOATS}
    kinds.update({T.INTS: A.INTS, T.STRINGS: A.STRINGS, T.TENSOR: A.TENSOR})
    return kinds.get(spec.type)


def attr_text(attr: Attribute) -> str:
    return attr.data if isinstance(attr, StringAttr) else str(attr)


def camel_name(op_name: str) -> str:
    tail = op_name.split(".", 1)[-1]
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_.]", tail) if part)


# ---- one ONNX graph or function body -----------------------------------------------------
