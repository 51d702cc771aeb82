"""ONNX subgraphs (the graph attributes of If / Loop / Scan / SequenceMap) and non-tensor
value types, as the importer needs them.

An ONNX subgraph reads outer values by name. The graph dialect's control-flow bodies are
isolated from above instead (:mod:`tilegraph.dialects.graph.control_flow`), so the importer
turns the names a subgraph reads from outside — :func:`free_names` — into the op's captures.
"""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from xdsl.ir import Attribute

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.graph.value_types import OptionalType, SequenceType, sequence_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import UNKNOWN, Dim


def subgraphs(node: onnx.NodeProto) -> list[tuple[str, onnx.GraphProto]]:
    """The node's graph attributes, by attribute name."""
    return [(a.name, a.g) for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]


def all_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of ``graph`` and of its subgraphs, at any depth."""
    for node in graph.node:
        yield node
        for _, sub in subgraphs(node):
            yield from all_nodes(sub)


def free_names(graph: onnx.GraphProto) -> list[str]:
    """The outer values ``graph`` reads (its nodes', its nested subgraphs' and its outputs'
    names that it does not define), in first-use order."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    seen: dict[str, None] = {}
    for node in graph.node:
        reads = [*node.input, *(n for _, sub in subgraphs(node) for n in free_names(sub))]
        for name in reads:
            if name and name not in defined:
                seen.setdefault(name, None)
        defined.update(o for o in node.output if o)
    for out in graph.output:
        if out.name not in defined:
            seen.setdefault(out.name, None)
    return list(seen)


def proto_value_type(t: onnx.TypeProto, what: str) -> Attribute:
    """The graph-dialect type of an ONNX type: a tensor (unknown or named dims become ``?``;
    use the importer's symbol source for graph inputs), a sequence or an optional."""
    if t.HasField("tensor_type"):
        tt = t.tensor_type
        dtype = element_type_of(onnx_dtype_name(tt.elem_type))
        if not tt.HasField("shape"):
            raise ValueError(f"{what} has unknown rank")
        dims: list[Dim] = [
            int(d.dim_value) if d.HasField("dim_value") and d.dim_value >= 0 else UNKNOWN
            for d in tt.shape.dim
        ]
        return TensorType(dims, dtype)
    if t.HasField("sequence_type"):
        inner = t.sequence_type.elem_type
        if inner.HasField("tensor_type") and not inner.tensor_type.HasField("shape"):
            return SequenceType(element_type_of(onnx_dtype_name(inner.tensor_type.elem_type)))
        return sequence_of(proto_value_type(inner, f"{what}'s elements"))
    if t.HasField("optional_type"):
        return OptionalType(proto_value_type(t.optional_type.elem_type, f"{what}'s value"))
    raise ValueError(f"{what} has a type tilegraph does not hold ({t.WhichOneof('value')})")
