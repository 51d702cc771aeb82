"""SVG for ``tilegraph-viz --format svg``: a layered layout (grandalf's Sugiyama) drawn as
plain SVG, so a picture needs pip packages only (no Graphviz).

Nodes are boxes sized to their label, coloured as the Mermaid/DOT output colours them;
edges follow the layout's routes with their origin -> storage label at the middle; a fused
group is a dashed frame around its nodes.
"""

from __future__ import annotations

from html import escape

from tilegraph.tools.viz import Node, Picture

CHAR_W, LINE_H, PAD = 7.2, 15.0, 10.0
FILL = {
    "transdata": ("#ffd6d6", "#c00000", 2.0),
    "heavy": ("#dde8ff", "#1f3f99", 3.0),
    "input": ("#eeeeee", "#666666", 1.0),
    "output": ("#eeeeee", "#666666", 1.0),
    "group": ("#fff4d6", "#b07800", 1.5),
    "op": ("#ffffff", "#333333", 1.0),
}


class _View:
    """The box grandalf lays out (it reads ``w``, ``h`` and writes ``xy``)."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def setpath(self, points: list[tuple[float, float]]) -> None:
        self.points = [tuple(p) for p in points]  # type: ignore[misc]


def _lines(node: Node) -> list[str]:
    return node.label.split("\\n")


def _size(node: Node) -> tuple[float, float]:
    lines = _lines(node)
    return max(len(t) for t in lines) * CHAR_W + 2 * PAD, len(lines) * LINE_H + PAD


def layout(p: Picture) -> tuple[dict[str, _View], list[tuple[str, str, str, _EdgeView]]]:
    """Box positions (centres) per node id and routed edges."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    vertices: dict[str, Vertex] = {}
    views: dict[str, _View] = {}
    for n in p.all_nodes():
        v = Vertex(n.id)
        v.view = views.setdefault(n.id, _View(*_size(n)))  # pyright: ignore[reportAttributeAccessIssue]
        vertices[n.id] = v
    edges = []
    routed: list[tuple[str, str, str, _EdgeView]] = []
    for a, b, label in p.edges:
        e = Edge(vertices[a], vertices[b])
        view = _EdgeView()
        e.view = view  # pyright: ignore[reportAttributeAccessIssue]  (grandalf's protocol)
        edges.append(e)
        routed.append((a, b, label, view))
    graph = Graph(list(vertices.values()), edges)
    x_offset = 0.0
    for component in graph.C:
        sugiyama = SugiyamaLayout(component)
        sugiyama.yspace = int(4 * LINE_H)
        sugiyama.xspace = 40
        sugiyama.init_all()
        sugiyama.draw()
        left = min(v.view.xy[0] - v.view.w / 2 for v in component.sV)
        right = max(v.view.xy[0] + v.view.w / 2 for v in component.sV)
        for v in component.sV:
            v.view.xy = (v.view.xy[0] - left + x_offset, v.view.xy[1])
        for e in component.sE:
            e.view.points = [(x - left + x_offset, y) for x, y in e.view.points]
        x_offset += right - left + 60
    return views, routed


def to_svg(p: Picture) -> str:
    views, edges = layout(p)
    margin = 20.0
    boxes = {k: (v.xy[0] - v.w / 2, v.xy[1] - v.h / 2, v.w, v.h) for k, v in views.items()}
    label_w = max((len(label) * CHAR_W * 0.85 for *_, label, _ in edges), default=0.0)
    width = max((x + w for x, _, w, _ in boxes.values()), default=0) + label_w + 2 * margin
    height = max((y + h for _, y, _, h in boxes.values()), default=0) + 2 * margin
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'font-family="monospace" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        "</defs>",
        f'<g transform="translate({margin},{margin})">',
    ]
    for cluster in p.clusters:
        members = [boxes[n.id] for n in cluster.nodes if n.id in boxes]
        if not members:
            continue
        x0, y0, x1, y1 = _frame(members, cluster.label)
        out.append(
            f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
            'fill="#fffaf0" stroke="#b07800" stroke-dasharray="6,4"/>'
        )
        title = escape(cluster.label)
        out.append(f'<text x="{x0 + 4:.1f}" y="{y0 + 12:.1f}" fill="#b07800">{title}</text>')
    for _, _, label, view in edges:
        if len(view.points) < 2:
            continue
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in _clipped(view.points, boxes))
        out.append(
            f'<polyline points="{path}" fill="none" stroke="#555" marker-end="url(#arrow)"/>'
        )
        lx, ly = _label_at(_clipped(view.points, boxes))
        out.append(
            f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="10" fill="#333">{escape(label)}</text>'
        )
    for n in p.all_nodes():
        x, y, w, h = boxes[n.id]
        fill, stroke, width_px = FILL[n.kind]
        rx = h / 2 if n.kind in ("input", "output") else 4
        out.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx:.1f}" '
            f'fill="{fill}" stroke="{stroke}" stroke-width="{width_px}"/>'
        )
        weight = ' font-weight="bold"' if n.kind == "heavy" else ""
        for i, line in enumerate(_lines(n)):
            out.append(
                f'<text x="{x + w / 2:.1f}" y="{y + PAD / 2 + (i + 0.8) * LINE_H:.1f}" '
                f'text-anchor="middle"{weight}>{escape(line)}</text>'
            )
    out += ["</g>", "</svg>"]
    return "\n".join(out) + "\n"


def _clipped(
    points: list[tuple[float, float]], boxes: dict[str, tuple[float, float, float, float]]
) -> list[tuple[float, float]]:
    """The route from the bottom of the source box to the top of the target box."""
    first, last = points[0], points[-1]
    src = next((b for b in boxes.values() if _inside(first, b)), None)
    dst = next((b for b in boxes.values() if _inside(last, b)), None)
    route = list(points)
    if src is not None:
        route[0] = (first[0], src[1] + src[3])
    if dst is not None:
        route[-1] = (last[0], dst[1])
    return route


def _label_at(route: list[tuple[float, float]]) -> tuple[float, float]:
    """Where an edge's label goes: 40% down its route (clear of a cluster's title at the
    target end), just right of the line."""
    (xa, ya), (xb, yb) = route[0], route[-1]
    return xa + 0.4 * (xb - xa) + 6, ya + 0.4 * (yb - ya) + 4


def _frame(members: list[tuple[float, float, float, float]], title: str):
    """A cluster's frame around its members' boxes, wide enough for its title."""
    x0 = min(b[0] for b in members) - PAD
    y0 = min(b[1] for b in members) - PAD - LINE_H
    x1 = max(max(b[0] + b[2] for b in members) + PAD, x0 + len(title) * CHAR_W * 0.9 + 8)
    y1 = max(b[1] + b[3] for b in members) + PAD
    return x0, y0, x1, y1


def _inside(point: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    x, y = point
    return box[0] <= x <= box[0] + box[2] and box[1] <= y <= box[1] + box[3]


def to_png(p: Picture, path: str, dpi: int = 110) -> None:
    """The same drawing as :func:`to_svg`, rasterised with matplotlib (the ``plot`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import FancyBboxPatch, Rectangle
    except ImportError:
        raise ValueError("--format png needs matplotlib (pip install 'tilegraph[plot]')") from None
    views, edges = layout(p)
    boxes = {k: (v.xy[0] - v.w / 2, v.xy[1] - v.h / 2, v.w, v.h) for k, v in views.items()}
    label_w = max((len(label) * CHAR_W * 0.85 for *_, label, _ in edges), default=0.0)
    width = max((x + w for x, _, w, _ in boxes.values()), default=0) + label_w + 40
    height = max((y + h for _, y, _, h in boxes.values()), default=0) + 40
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-20, width - 20)
    ax.set_ylim(height - 20, -20)
    ax.axis("off")
    for cluster in p.clusters:
        members = [boxes[n.id] for n in cluster.nodes if n.id in boxes]
        x0, y0, x1, y1 = _frame(members, cluster.label)
        ax.add_patch(
            Rectangle((x0, y0), x1 - x0, y1 - y0, fill=True, fc="#fffaf0", ec="#b07800", ls="--")
        )
        ax.text(x0 + 4, y0 + 12, cluster.label, color="#b07800", fontsize=8, family="monospace")
    for _, _, label, view in edges:
        route = _clipped(view.points, boxes)
        xs, ys = zip(*route, strict=True)
        arrow = {"arrowstyle": "->", "color": "#555"}
        ax.annotate("", xy=route[-1], xytext=route[-2], arrowprops=arrow)
        ax.plot(xs, ys, color="#555", lw=1)
        ax.text(*_label_at(route), label, fontsize=7, family="monospace", color="#333")
    for n in p.all_nodes():
        x, y, w, h = boxes[n.id]
        fill, stroke, lw = FILL[n.kind]
        ax.add_patch(
            FancyBboxPatch(
                (x, y), w, h, boxstyle="round,pad=0,rounding_size=4", fc=fill, ec=stroke, lw=lw
            )
        )
        for i, line in enumerate(_lines(n)):
            ax.text(
                x + w / 2,
                y + PAD / 2 + (i + 0.8) * LINE_H,
                line,
                ha="center",
                fontsize=8,
                family="monospace",
                weight="bold" if n.kind == "heavy" else "normal",
            )
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
