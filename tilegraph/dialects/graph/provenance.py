"""Where a graph op came from, for messages: the ONNX node it was imported from.

The importer records each node's name (its first output's name when the node has none) on
the op it builds (:func:`set_onnx_node`). The record lives beside the IR, not in it: it is
not printed, does not keep CSE from merging two equal ops, and is dropped with the op. A
clone of a graph op keeps its origin (``GraphOp.clone_without_regions``); an op a pass
builds anew has none, and :func:`op_label` names it by its op type and its results' SSA
names instead (which the importer takes from the ONNX output names).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from xdsl.ir import Operation, SSAValue

_NODES: WeakKeyDictionary[Operation, str] = WeakKeyDictionary()


def set_onnx_node(op: Operation, node: str) -> None:
    """Record that ``op`` implements the ONNX node named ``node``."""
    _NODES[op] = node


def onnx_node(op: Operation) -> str | None:
    """The name of the ONNX node ``op`` was imported from, when known."""
    return _NODES.get(op)


def copy_origin(source: Operation, target: Operation) -> None:
    """Give ``target`` (a copy of ``source``) the same ONNX node, if ``source`` has one."""
    node = _NODES.get(source)
    if node is not None:
        _NODES[target] = node


def op_label(op: Operation) -> str:
    """The op as a message names it: ``node 'Gather_12' (graph.gather)`` when its ONNX node
    is known, else ``graph.gather (%y)`` with its results' SSA names (or the bare op name)."""
    node = onnx_node(op)
    if node is not None:
        return f"node '{node}' ({op.name})"
    names = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    return f"{op.name} ({names})" if names else op.name


def value_label(value: SSAValue) -> str:
    """A value as a message names it: ``%nz of node 'NonZero' (graph.non_zero)`` when its
    op's ONNX node is known, else ``%nz (graph.non_zero)``."""
    name = f"%{value.name_hint or '?'}"
    owner = value.owner
    if not isinstance(owner, Operation):
        return f"{name} (an argument)"
    node = onnx_node(owner)
    return f"{name} of node '{node}' ({owner.name})" if node else f"{name} ({owner.name})"
