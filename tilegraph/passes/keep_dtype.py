"""ATC's ``--keep_dtype`` lists: which ops keep the model's float32 whatever the precision mode.

The file format is ATC's, one entry a line::

    # comments and blank lines are ignored
    OpType::ReduceSum        an op type: as ONNX spells it, or a graph op name (graph.reduce_sum)
    encoder/ln1/ReduceSum    a node name: the ONNX node an op implements (its location)

tilegraph also accepts a bare op type (``ReduceSum`` without ``OpType::``) when no node of the
model has that name: a node name wins over a type of the same spelling.

Entries that name nothing are errors (:class:`KeepDtypeError`), unlike ATC, which ignores
them: a keep-list written for another model, or a typo, would otherwise silently keep
nothing. ``OpType::`` of an op type tilegraph knows but the model does not contain is not
an error (a list of types is meant to be shared between models).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xdsl.ir import Operation

from tilegraph.dialects.graph import GRAPH_OPS
from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.provenance import onnx_nodes

OP_TYPE_PREFIX = "OpType::"


class KeepDtypeError(ValueError):
    """A keep-dtype file that cannot be read, or an entry that names nothing."""


def read_keep_dtype(path: str | Path) -> list[str]:
    """The entries of the keep-dtype file ``path`` (comments and blank lines dropped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise KeepDtypeError(f"cannot read keep-dtype file '{path}': {e.strerror or e}") from None
    return parse_keep_dtype(text)


def parse_keep_dtype(text: str) -> list[str]:
    """The entries of a keep-dtype text, in order."""
    entries = (line.strip() for line in text.splitlines())
    return [entry for entry in entries if entry and not entry.startswith("#")]


def write_keep_dtype(path: str | Path, node_names: Iterable[str], header: str = "") -> None:
    """Write a keep-dtype file of node names (ATC's format), with ``header`` as comments."""
    lines = [f"# {line}" for line in header.splitlines()]
    Path(path).write_text("\n".join([*lines, *node_names]) + "\n", encoding="utf-8")


def _known_types() -> frozenset[str]:
    names = {cls.name for cls in GRAPH_OPS}
    names.update(cls.ONNX_OP for cls in GRAPH_OPS if cls.ONNX_OP)
    return frozenset(names)


def _op_types(op: GraphOp) -> tuple[str, ...]:
    return (op.name, op.ONNX_OP) if op.ONNX_OP else (op.name,)


@dataclass(frozen=True)
class KeepList:
    """Resolved keep-dtype entries: node names and op types."""

    nodes: frozenset[str]
    types: frozenset[str]

    def keeps(self, op: Operation) -> bool:
        """Whether ``op`` keeps the model's types: its type is listed, or a node it
        implements is."""
        if not isinstance(op, GraphOp):
            return False
        if self.types.intersection(_op_types(op)):
            return True
        return not self.nodes.isdisjoint(onnx_nodes(op.location))


def resolve_keep_list(entries: Sequence[str], ops: Iterable[Operation]) -> KeepList:
    """``entries`` matched against ``ops`` (the model's graph ops): each is a type
    (``OpType::T``) or a node name, else a bare type; :class:`KeepDtypeError` naming the
    entries that match nothing."""
    node_names: set[str] = set()
    types_present: set[str] = set()
    for op in ops:
        if isinstance(op, GraphOp):
            node_names.update(onnx_nodes(op.location))
            types_present.update(_op_types(op))
    known = _known_types()
    nodes: set[str] = set()
    types: set[str] = set()
    unknown: list[str] = []
    for entry in entries:
        if entry.startswith(OP_TYPE_PREFIX):
            name = entry.removeprefix(OP_TYPE_PREFIX).strip()
            if name in known:
                types.add(name)
            else:
                unknown.append(entry)
        elif entry in node_names:
            nodes.add(entry)
        elif entry in types_present:
            types.add(entry)
        else:
            unknown.append(entry)
    if unknown:
        raise KeepDtypeError(
            "keep-dtype: no node or op type of the model is named "
            + ", ".join(f"'{u}'" for u in unknown)
            + " (a line is a node name, or OpType::T with T an ONNX op type or a graph op name)"
        )
    return KeepList(frozenset(nodes), frozenset(types))
