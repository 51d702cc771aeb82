"""Where an op came from: the ONNX node(s) it implements, as the op's MLIR location.

Every op carries a location (``op.location``, printed by ``--print-debuginfo``):

* the importer gives each op the node it implements, ``loc("Conv_12"("model.onnx":0:0))``
  (:func:`node_location`: a ``NameLoc`` of the node's name, its first output's name when it
  has none, over the model file); a constant from an initializer is named by the tensor;
* a copy keeps its source's location (xDSL's ``clone`` copies it);
* an op a rewrite creates gets the location of the op(s) it replaces — a ``FusedLoc`` when
  several ops become one (``graph.fused``, a folded constant, a batch norm folded into its
  convolution). Pattern passes get this by wrapping their patterns in :class:`Located`;
  passes that mutate the IR directly call :func:`locate` on what they build;
* lowering gives each kernel function, and every op in its body, the location of the graph
  op(s) the kernel implements.

:func:`onnx_nodes` reads the node names back; :func:`op_label` and :func:`value_label` name
ops and values in messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    LocationAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import Rewriter
from xdsl.utils.hints import isa


def node_location(node: str, file: str | None = None) -> NameLoc:
    """The location of the ONNX node (or initializer) ``node`` of the model ``file``."""
    inner = NoneAttr() if file is None else FileLineColLoc(StringAttr(file), IntAttr(0), IntAttr(0))
    return NameLoc(StringAttr(node), inner)


def _members(loc: FusedLoc) -> tuple[LocationAttr, ...]:
    """The locations a fused location fuses."""
    members = loc.locations
    assert isa(members, ArrayAttr[LocationAttr])
    return members.data


def _parts(loc: LocationAttr) -> Iterable[LocationAttr]:
    """The known locations ``loc`` is made of (a fused location flattened)."""
    if isinstance(loc, FusedLoc):
        for inner in _members(loc):
            yield from _parts(inner)
    elif not isinstance(loc, UnknownLoc):
        yield loc


def fused_location(locations: Iterable[LocationAttr]) -> LocationAttr:
    """One location for all of ``locations``: unknown ones dropped, fused ones flattened,
    duplicates removed; ``loc(unknown)`` for none, the location itself for one, else a
    ``FusedLoc``."""
    seen: list[LocationAttr] = []
    for loc in locations:
        for part in _parts(loc):
            if part not in seen:
                seen.append(part)
    if not seen:
        return UnknownLoc()
    if len(seen) == 1:
        return seen[0]
    return FusedLoc(tuple(seen), NoneAttr())


def location_of(ops: Iterable[Operation]) -> LocationAttr:
    """The fused location of ``ops`` (see :func:`fused_location`)."""
    return fused_location(op.location for op in ops)


def locate(ops: Iterable[Operation], location: LocationAttr) -> None:
    """Give ``location`` to every op of ``ops`` (and every op nested in them) that has none
    yet; ops that already have one (copies of a source op) keep it."""
    if isinstance(location, UnknownLoc):
        return
    for op in ops:
        for inner in op.walk():
            if isinstance(inner.location, UnknownLoc):
                inner.location = location


def replace_located(
    op: Operation,
    new_ops: Sequence[Operation],
    new_results: Sequence[SSAValue | None] | None = None,
    sources: Iterable[Operation] = (),
) -> None:
    """``Rewriter.replace_op`` for passes that rewrite without patterns: the new ops that
    have no location get that of ``op`` and ``sources`` (the other ops they stand for)."""
    locate(new_ops, location_of([op, *sources]))
    Rewriter.replace_op(op, list(new_ops), new_results)


def onnx_nodes(loc: LocationAttr) -> list[str]:
    """The names in ``loc`` (the ONNX nodes and initializers it names), in order, once each."""
    names: list[str] = []

    def visit(attr: object) -> None:
        if isinstance(attr, NameLoc):
            if attr.desc.data not in names:
                names.append(attr.desc.data)
        elif isinstance(attr, FusedLoc):
            for inner in _members(attr):
                visit(inner)
        elif isinstance(attr, CallSiteLoc):
            visit(attr.callee)

    visit(loc)
    return names


@dataclass(frozen=True)
class Located(RewritePattern):
    """``pattern``, whose new ops get the location of the ops its rewrite replaces.

    While ``pattern`` rewrites the matched op, the ops it inserts and the ops it replaces or
    erases are recorded; the inserted ops that have no location of their own get the fused
    location of the ops it replaced or erased and of the matched op (a folded batch norm's
    convolution: ``fused["Conv_3", "BatchNormalization_4"]``)."""

    pattern: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        inserted: list[Operation] = []
        gone: list[Operation] = []

        def replaced(old: Operation, _new: Sequence[SSAValue | None]) -> None:
            gone.append(old)

        rewriter.operation_insertion_handler.append(inserted.append)
        rewriter.operation_removal_handler.append(gone.append)
        rewriter.operation_replacement_handler.append(replaced)
        try:
            self.pattern.match_and_rewrite(op, rewriter)
        finally:
            rewriter.operation_insertion_handler.remove(inserted.append)
            rewriter.operation_removal_handler.remove(gone.append)
            rewriter.operation_replacement_handler.remove(replaced)
        if inserted:
            # the matched op last: patterns match a consumer and fold in its producers, so
            # this keeps the sources in program order (Conv before the BatchNormalization)
            locate(inserted, location_of([*(g for g in gone if g is not op), op]))


def op_label(op: Operation) -> str:
    """The op as a message names it: ``node 'Gather_12' (graph.gather)`` when its location
    names ONNX nodes (``nodes 'A', 'B' (graph.fused)`` for several), else
    ``graph.gather (%y)`` with its results' SSA names (or the bare op name)."""
    nodes = onnx_nodes(op.location)
    if nodes:
        return f"{nodes_text(nodes)} ({op.name})"
    names = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    return f"{op.name} ({names})" if names else op.name


def value_label(value: SSAValue) -> str:
    """A value as a message names it: ``%nz of node 'NonZero' (graph.non_zero)`` when its
    op's location names an ONNX node, else ``%nz (graph.non_zero)``."""
    name = f"%{value.name_hint or '?'}"
    owner = value.owner
    if not isinstance(owner, Operation):
        return f"{name} (an argument)"
    nodes = onnx_nodes(owner.location)
    if nodes:
        return f"{name} of {nodes_text(nodes)} ({owner.name})"
    return f"{name} ({owner.name})"


def nodes_text(nodes: Sequence[str]) -> str:
    """``node 'A'`` or ``nodes 'A', 'B'``: ONNX node names as a message says them."""
    quoted = ", ".join(f"'{n}'" for n in nodes)
    return f"node {quoted}" if len(nodes) == 1 else f"nodes {quoted}"
