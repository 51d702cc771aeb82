"""The graph as a picture (``tilegraph-viz``, :mod:`.cli`), with the origin and storage view
on every edge.

Every op of the entry function is a node, every SSA value an edge labelled with its origin
format and shape, and with ``→ storage format [storage shape]`` where the storage view
differs. ``layout.trans_data`` nodes are highlighted (red), heavy ops (Conv, MatMul, Gemm:
the ones that seed storage selection) are bold, constants are folded into their consumer's
label (``w: FRACTAL_Z``), each ``graph.fused`` group is a cluster of its ops
(``--collapse``: one node per group, for large models), and each control-flow op
(``graph.if``, ``graph.loop``, ...) is a cluster holding its head node (its operands come in
there), one nested cluster per body (``then`` / ``else`` / ``body``: the body's ops, reading
its arguments from the head) and an ``end`` node (the yielded values go in there, the op's
results come out).

Mermaid (renders in GitHub / GitLab markdown and mermaid.live) and Graphviz DOT are text;
SVG is laid out by grandalf (a pip dependency; no Graphviz needed) in :mod:`.svg` as a
compound layout (each cluster laid out on its own, then placed as one box), and
PNG is the same drawing rasterised by matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from tilegraph.dialects.graph import ConstantOp, FusedOp, GraphOp, YieldOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import dim_to_text

FORMATS = ("mermaid", "dot", "svg", "png")


@dataclass
class Node:
    id: str
    label: str
    kind: str
    """"input", "output", "op", "heavy", "transdata" or "group"."""


@dataclass
class Cluster:
    """A box of nodes and nested clusters: a fused group, a control-flow op or one body."""

    id: str
    label: str
    nodes: list[Node] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    kind: str = "fused"
    """"fused" (a ``graph.fused`` group), "control" (a control-flow op) or "region" (a body)."""

    def all_nodes(self) -> Iterator[Node]:
        """Its nodes and those of its nested clusters."""
        return _all_nodes(self.nodes, self.clusters)

    def all_clusters(self) -> Iterator[Cluster]:
        """Its nested clusters, outer before inner."""
        return _all_clusters(self.clusters)


def _all_nodes(nodes: list[Node], clusters: list[Cluster]) -> Iterator[Node]:
    yield from nodes
    for c in clusters:
        yield from c.all_nodes()


def _all_clusters(clusters: list[Cluster]) -> Iterator[Cluster]:
    for c in clusters:
        yield c
        yield from c.all_clusters()


@dataclass
class Picture:
    """Nodes (top level or in clusters, nested) and labelled edges between node ids."""

    nodes: list[Node] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)

    def all_nodes(self) -> Iterator[Node]:
        """Every node, in clusters or not."""
        return _all_nodes(self.nodes, self.clusters)

    def all_clusters(self) -> Iterator[Cluster]:
        """Every cluster, outer before inner."""
        return _all_clusters(self.clusters)


def _shape(dims: Sequence[object]) -> str:
    return "[" + ", ".join(dim_to_text(d) for d in dims) + "]"  # type: ignore[arg-type]


def edge_label(value: SSAValue) -> str:
    """``NCHW [1, 3, 224, 224]``, with ``→ NC1HWC0 [1, 1, 224, 224, 16]`` when stored so."""
    t = value.type
    if not isinstance(t, TensorType):
        return str(t)
    text = f"{t.origin_format} {_shape(t.origin_shape)}"
    if t.storage_format != t.origin_format:
        text += f" → {t.storage_format} {_shape(t.storage_shape)}"
    return text


def _op_kind(op: Operation) -> str:
    if isinstance(op, TransDataOp):
        return "transdata"
    if isinstance(op, GraphOp) and op.FACTS.heavy:
        return "heavy"
    return "op"


def _group_title(op: FusedOp) -> str:
    return f"{op.kernel_name.data} ({op.fusion_kind.name.lower()})"


def _inner_ops(op: FusedOp) -> list[Operation]:
    return [o for o in op.body.block.ops if not isinstance(o, YieldOp | ConstantOp)]


def _region_names(op: Operation) -> list[str]:
    """``then`` / ``else`` / ``body``: the op's region names (``region0``, ... if unnamed)."""
    try:
        names = [n for n, _ in type(op).get_irdl_definition().regions]  # type: ignore[attr-defined]
    except AttributeError:
        names = []
    if len(names) != len(op.regions):
        names = [f"region{i}" for i in range(len(op.regions))]
    return [n.removesuffix("_region") for n in names]


class _Builder:
    def __init__(self, collapse: bool) -> None:
        self.collapse = collapse
        self.picture = Picture()
        self.source: dict[SSAValue, str] = {}
        self.constants: dict[SSAValue, SSAValue] = {}
        """Block arguments of fused groups that stand for a constant -> that constant."""
        self.counter = 0

    def fresh(self) -> str:
        self.counter += 1
        return f"n{self.counter}"

    def constant(self, value: SSAValue) -> SSAValue | None:
        value = self.constants.get(value, value)
        return value if isinstance(value.owner, ConstantOp) else None

    def label(self, op: Operation) -> str:
        if isinstance(op, TransDataOp):
            src, dst = op.input.type, op.output.type
            assert isinstance(src, TensorType) and isinstance(dst, TensorType)
            return f"TransData\\n{src.storage_format} → {dst.storage_format}"
        name = op.name
        consts = [
            f"{c.name_hint or 'const'}: {c.type.storage_format}"
            for v in op.operands
            if (c := self.constant(v)) is not None and isinstance(c.type, TensorType)
        ]
        result = op.results[0].name_hint if op.results and op.results[0].name_hint else ""
        head = f"%{result} = {name}" if result else name
        return head + "".join(f"\\n{c}" for c in consts)

    def block(self, block: Block, into: Picture | Cluster) -> None:
        for op in block.ops:
            if isinstance(op, ConstantOp | YieldOp):
                continue
            if isinstance(op, func.ReturnOp):
                for i, v in enumerate(op.operands):
                    node = Node(self.fresh(), f"output {i}", "output")
                    self.picture.nodes.append(node)
                    self.edge(v, node.id)
                continue
            if isinstance(op, FusedOp) and not self.collapse:
                self.fused(op, into)
                continue
            if op.regions and not isinstance(op, FusedOp) and not self.collapse:
                self.control(op, into)
                continue
            if isinstance(op, FusedOp):
                kind, label = "group", f"{_group_title(op)}\\n{len(_inner_ops(op))} ops"
            else:
                kind, label = _op_kind(op), self.label(op)
            node = Node(self.fresh(), label, kind)
            into.nodes.append(node)
            for v in op.operands:
                self.edge(v, node.id)
            for r in op.results:
                self.source[r] = node.id

    def fused(self, op: FusedOp, into: Picture | Cluster) -> None:
        cluster = Cluster(self.fresh(), _group_title(op))
        into.clusters.append(cluster)
        body = op.body.block
        for outer, inner in zip(op.operands, body.args, strict=True):
            if outer in self.source:
                self.source[inner] = self.source[outer]
            elif isinstance(outer.owner, ConstantOp):
                self.constants[inner] = outer
        self.block(body, cluster)
        terminator = body.last_op
        if isinstance(terminator, YieldOp):
            for result, yielded in zip(op.results, terminator.operands, strict=True):
                self.source[result] = self.source.get(yielded, "")

    def control(self, op: Operation, into: Picture | Cluster) -> None:
        """A control-flow op: head node -> one cluster per body -> end node."""
        cluster = Cluster(self.fresh(), op.name, kind="control")
        into.clusters.append(cluster)
        head = Node(self.fresh(), self.label(op), _op_kind(op))
        cluster.nodes.append(head)
        for v in op.operands:
            self.edge(v, head.id)
        end = Node(self.fresh(), f"end {op.name}", "op")
        for name, region in zip(_region_names(op), op.regions, strict=True):
            body = Cluster(self.fresh(), name, kind="region")
            cluster.clusters.append(body)
            for block in region.blocks:
                for arg in block.args:
                    self.source[arg] = head.id
                self.block(block, body)
                if isinstance(block.last_op, YieldOp):
                    for v in block.last_op.operands:
                        self.edge(v, end.id)
        cluster.nodes.append(end)
        for r in op.results:
            self.source[r] = end.id

    def edge(self, value: SSAValue, target: str) -> None:
        if self.constant(value) is not None:
            return  # shown in the consumer's label
        source = self.source.get(value)
        if source:
            self.picture.edges.append((source, target, edge_label(value)))


def picture(module: ModuleOp, collapse: bool = False) -> Picture:
    """The entry function of ``module`` as nodes, clusters and labelled edges."""
    from tilegraph.dialects.entry import entry_function

    fn = entry_function(module)
    b = _Builder(collapse)
    for i, arg in enumerate(fn.body.block.args):
        node = Node(b.fresh(), f"%{arg.name_hint or f'arg{i}'}", "input")
        b.picture.nodes.append(node)
        b.source[arg] = node.id
    b.block(fn.body.block, b.picture)
    return b.picture


_MERMAID_STYLE = {
    "transdata": "fill:#ffd6d6,stroke:#c00000,stroke-width:2px",
    "heavy": "fill:#dde8ff,stroke:#1f3f99,stroke-width:3px,font-weight:bold",
    "input": "fill:#eeeeee,stroke:#666666",
    "output": "fill:#eeeeee,stroke:#666666",
    "group": "fill:#fff4d6,stroke:#b07800",
}


def to_mermaid(p: Picture) -> str:
    lines = ["flowchart TD"]

    def node_line(n: Node, indent: str) -> str:
        text = n.label.replace('"', "#quot;").replace("\\n", "<br/>")
        shape = ("([", "])") if n.kind in ("input", "output") else ('["', '"]')
        if shape[0] == "([":
            return f'{indent}{n.id}(["{text}"])'
        return f"{indent}{n.id}{shape[0]}{text}{shape[1]}"

    for n in p.nodes:
        lines.append(node_line(n, "  "))

    def cluster_lines(c: Cluster, indent: str) -> None:
        lines.append(f'{indent}subgraph {c.id} ["{c.label}"]')
        lines.extend(node_line(n, indent + "  ") for n in c.nodes)
        for inner in c.clusters:
            cluster_lines(inner, indent + "  ")
        lines.append(f"{indent}end")

    for c in p.clusters:
        cluster_lines(c, "  ")
    for a, b, label in p.edges:
        lines.append(f'  {a} -->|"{label}"| {b}')
    for kind, style in _MERMAID_STYLE.items():
        members = [n.id for n in p.all_nodes() if n.kind == kind]
        if members:
            lines.append(f"  classDef {kind} {style}")
            lines.append(f"  class {','.join(members)} {kind}")
    return "\n".join(lines) + "\n"


_DOT_STYLE = {
    "transdata": 'style=filled, fillcolor="#ffd6d6", color="#c00000", penwidth=2',
    "heavy": 'style=filled, fillcolor="#dde8ff", color="#1f3f99", penwidth=3, fontname="bold"',
    "input": 'shape=oval, style=filled, fillcolor="#eeeeee"',
    "output": 'shape=oval, style=filled, fillcolor="#eeeeee"',
    "group": 'style=filled, fillcolor="#fff4d6", color="#b07800"',
    "op": "",
}


_DOT_CLUSTER_STYLE = {
    "fused": 'style=dashed; color="#b07800"',
    "control": 'style=solid; color="#1f3f99"',
    "region": 'style=dashed; color="#666666"',
}


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\n", "\\n")


def to_dot(p: Picture) -> str:
    lines = ["digraph tilegraph {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']

    def node_line(n: Node, indent: str) -> str:
        style = _DOT_STYLE[n.kind]
        return f'{indent}{n.id} [label="{_dot_text(n.label)}"{", " + style if style else ""}];'

    lines.extend(node_line(n, "  ") for n in p.nodes)

    def cluster_lines(c: Cluster, indent: str) -> None:
        lines.append(f"{indent}subgraph cluster_{c.id} {{")
        lines.append(f'{indent}  label="{_dot_text(c.label)}"; {_DOT_CLUSTER_STYLE[c.kind]};')
        lines.extend(node_line(n, indent + "  ") for n in c.nodes)
        for inner in c.clusters:
            cluster_lines(inner, indent + "  ")
        lines.append(f"{indent}}}")

    for c in p.clusters:
        cluster_lines(c, "  ")
    for a, b, label in p.edges:
        lines.append(f'  {a} -> {b} [label="{_dot_text(label)}", fontsize=10];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(module: ModuleOp, fmt: str = "mermaid", collapse: bool = False) -> str:
    p = picture(module, collapse)
    if fmt == "svg":
        from tilegraph.tools.viz.svg import to_svg

        return to_svg(p)
    return to_mermaid(p) if fmt == "mermaid" else to_dot(p)
