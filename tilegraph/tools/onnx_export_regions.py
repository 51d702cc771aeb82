"""ONNX export of what is not a plain tensor op: control-flow ops with their bodies as
subgraphs, and the types of sequences and optionals (:mod:`tilegraph.tools.onnx_export`).

A body becomes a ``GraphProto`` attribute (``then_branch``, ``body``, ...). Its leading block
arguments are the subgraph's inputs; its trailing ones, the op's captures, are read by their
outer names, the way ONNX subgraphs read outer values; ``graph.yield`` gives the outputs.
"""

from __future__ import annotations

from collections.abc import Callable

import onnx
from onnx import helper
from xdsl.ir import Attribute, Block, SSAValue

from tilegraph.dialects.graph import YieldOp
from tilegraph.dialects.graph.control_flow import RegionOp, ScanOp
from tilegraph.dialects.graph.value_types import OptionalType, SequenceType
from tilegraph.dialects.layout import TensorType
from tilegraph.symbolic.dims import dim_to_text, normalize_dim


class ExportError(ValueError):
    """Raised for what has no ONNX form (the exporter's error class derives from it)."""


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
    raise ExportError(f"{what}: type {t} has no ONNX form")


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
    """The op's operands but its captures, by operand group; an empty optional group is
    the empty name (Loop's absent trip count or condition)."""
    names: list[str] = []
    start = 0
    groups = list(op.get_irdl_definition().operands)
    sizes = op.segment_sizes()
    for (field_name, _), size in zip(groups[:-1], sizes[:-1], strict=True):
        values = op.operands[start : start + size]
        start += size
        if size == 0 and field_name in ("max_trip_count", "condition"):
            names.append("")
        names += [name_of(v) for v in values]
    while names and not names[-1]:
        names.pop()
    return names


def yield_of(block: Block) -> YieldOp:
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise ExportError("a body does not end with graph.yield")
    return last
