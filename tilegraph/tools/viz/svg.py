"""SVG for ``tilegraph-viz --format svg``: a layered layout (grandalf's Sugiyama) drawn as
plain SVG, so a picture needs pip packages only (no Graphviz).

Nodes are boxes sized to their label, coloured as the Mermaid/DOT output colours them;
edges follow the layout's routes with their origin -> storage label at the middle. Clusters
(fused groups, control-flow ops and their bodies, nested) are framed, and the layout is
compound so that a frame holds exactly its members: each cluster is laid out on its own
(its nodes and, recursively, its inner clusters), then stands as one box of its frame's size
in the layout of the level around it. Sibling boxes in a layer are kept apart (grandalf's
median of four alignments may not), so sibling frames never overlap and no other node falls
inside a frame. An edge is laid out at the innermost level holding both ends (between the
boxes that hold them there) and drawn from its source node's box to its target node's box
through that route's bends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

from tilegraph.tools.viz.picture import Cluster, Node, Picture

CHAR_W, LINE_H, PAD = 7.2, 15.0, 10.0
FILL = {
    "transdata": ("#ffd6d6", "#c00000", 2.0),
    "heavy": ("#dde8ff", "#1f3f99", 3.0),
    "input": ("#eeeeee", "#666666", 1.0),
    "output": ("#eeeeee", "#666666", 1.0),
    "group": ("#fff4d6", "#b07800", 1.5),
    "op": ("#ffffff", "#333333", 1.0),
}
FRAME = {
    "fused": ("#fffaf0", "#b07800", "6,4"),
    "control": ("#f4f7ff", "#1f3f99", ""),
    "region": ("#ffffff", "#666666", "4,3"),
}
XSPACE, YSPACE = 40.0, 4 * LINE_H
Rect = tuple[float, float, float, float]
"""x, y (top left), width, height."""
Point = tuple[float, float]


class _View:
    """The box grandalf lays out (it reads ``w``, ``h`` and writes ``xy``)."""

    def __init__(self, w: float, h: float) -> None:
        self.w, self.h = w, h
        self.xy = (0.0, 0.0)


class _EdgeView:
    def __init__(self) -> None:
        self.points: list[Point] = []

    def setpath(self, points: list[Point]) -> None:
        self.points = [(float(x), float(y)) for x, y in points]


def _lines(node: Node) -> list[str]:
    return node.label.split("\\n")


def _size(node: Node) -> tuple[float, float]:
    lines = _lines(node)
    return max(len(t) for t in lines) * CHAR_W + 2 * PAD, len(lines) * LINE_H + PAD


def _title_w(cluster: Cluster) -> float:
    return len(cluster.label) * CHAR_W * 0.9 + 8


@dataclass
class Drawing:
    """Where everything goes: node boxes and cluster frames by id, and each edge's route
    (source, target, label, points) from the source box's bottom to the target box's top."""

    boxes: dict[str, Rect] = field(default_factory=dict)
    frames: dict[str, Rect] = field(default_factory=dict)
    edges: list[tuple[str, str, str, list[Point]]] = field(default_factory=list)

    def extent(self) -> tuple[float, float]:
        rects = [*self.boxes.values(), *self.frames.values()]
        return (
            max((x + w for x, _, w, _ in rects), default=0.0),
            max((y + h for _, y, _, h in rects), default=0.0),
        )


def _sugiyama(
    sizes: dict[str, tuple[float, float]], links: Sequence[tuple[str, str]]
) -> tuple[dict[str, Point], dict[tuple[str, str], list[Point]]]:
    """Centres of the boxes ``sizes`` (by unit id) and the routes of ``links`` (distinct
    pairs of unit ids), each connected component laid out on its own, side by side."""
    from grandalf.graphs import Edge, Graph, Vertex
    from grandalf.layouts import SugiyamaLayout

    vertices: dict[str, Vertex] = {}
    views: dict[str, _View] = {}
    for unit, (w, h) in sizes.items():
        v = Vertex(unit)
        v.view = views.setdefault(unit, _View(w, h))  # pyright: ignore[reportAttributeAccessIssue]  (grandalf's protocol)
        vertices[unit] = v
    routes: dict[tuple[str, str], _EdgeView] = {}
    edges = []
    for a, b in links:
        e = Edge(vertices[a], vertices[b])
        e.view = routes.setdefault((a, b), _EdgeView())  # pyright: ignore[reportAttributeAccessIssue]
        edges.append(e)
    graph = Graph(list(vertices.values()), edges)
    x_offset = 0.0
    for component in graph.C:
        sugiyama = SugiyamaLayout(component)
        sugiyama.yspace = int(YSPACE)
        sugiyama.xspace = int(XSPACE)
        sugiyama.init_all()
        sugiyama.draw()
        _separate(sugiyama.layers)
        sugiyama.draw_edges()
        left = min(v.view.xy[0] - v.view.w / 2 for v in component.sV)
        right = max(v.view.xy[0] + v.view.w / 2 for v in component.sV)
        for v in component.sV:
            v.view.xy = (v.view.xy[0] - left + x_offset, v.view.xy[1])
        for e in component.sE:
            e.view.points = [(x - left + x_offset, y) for x, y in e.view.points]
        x_offset += right - left + XSPACE
    centres = {unit: (float(v.xy[0]), float(v.xy[1])) for unit, v in views.items()}
    return centres, {k: v.points for k, v in routes.items()}


def _separate(layers) -> None:
    """Push the boxes of each layer right until neighbours are ``XSPACE`` apart (grandalf's
    final x is the mean of two medians of four alignments, which can bring boxes together)."""
    for layer in layers:
        row = sorted(layer, key=lambda v: v.view.xy[0])
        for a, b in zip(row, row[1:], strict=False):
            gap = (getattr(a.view, "w", 0) + getattr(b.view, "w", 0)) / 2 + XSPACE / 2
            if b.view.xy[0] - a.view.xy[0] < gap:
                b.view.xy = (a.view.xy[0] + gap, b.view.xy[1])


def layout(p: Picture) -> Drawing:
    """The compound layout of ``p`` (see the module docstring)."""
    chains: dict[str, tuple[str, ...]] = {}
    """Node id -> the ids of the clusters holding it, outermost first."""

    def walk(container: Picture | Cluster, path: tuple[str, ...]) -> None:
        for n in container.nodes:
            chains[n.id] = path
        for c in container.clusters:
            walk(c, (*path, c.id))

    walk(p, ())
    # each edge goes to the innermost level holding both ends, between the units there
    links: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    level_of: list[tuple[tuple[str, ...], tuple[str, str]]] = []
    for a, b, _ in p.edges:
        ca, cb = chains[a], chains[b]
        k = 0
        while k < min(len(ca), len(cb)) and ca[k] == cb[k]:
            k += 1
        pair = (ca[k] if len(ca) > k else a, cb[k] if len(cb) > k else b)
        level_of.append((ca[:k], pair))
        if pair not in links.setdefault(ca[:k], []):
            links[ca[:k]].append(pair)
    place: dict[str, Point] = {}
    """Unit id -> its top left, relative to the content of the level holding it."""
    size: dict[str, tuple[float, float]] = {}
    bends: dict[tuple[tuple[str, ...], tuple[str, str]], list[Point]] = {}

    def lay(container: Picture | Cluster, path: tuple[str, ...]) -> tuple[float, float]:
        sizes = {n.id: _size(n) for n in container.nodes}
        for c in container.clusters:
            w, h = lay(c, (*path, c.id))
            sizes[c.id] = (max(w + 2 * PAD, _title_w(c)), h + 2 * PAD + LINE_H)
        size.update(sizes)
        if not sizes:
            return 0.0, 0.0
        centres, routes = _sugiyama(sizes, links.get(path, []))
        # the extent takes in the routes' bends too, so an edge stays inside its frame
        bent = [q for points in routes.values() for q in points[1:-1]]
        x0 = min([centres[u][0] - w / 2 for u, (w, _) in sizes.items()] + [x for x, _ in bent])
        y0 = min(centres[u][1] - h / 2 for u, (_, h) in sizes.items())
        for u, (w, h) in sizes.items():
            place[u] = (centres[u][0] - w / 2 - x0, centres[u][1] - h / 2 - y0)
        for pair, points in routes.items():
            bends[(path, pair)] = [(x - x0, y - y0) for x, y in points[1:-1]]
        return (
            max([place[u][0] + w for u, (w, _) in sizes.items()] + [x - x0 for x, _ in bent]),
            max(place[u][1] + h for u, (_, h) in sizes.items()),
        )

    lay(p, ())
    drawing = Drawing()
    origin: dict[tuple[str, ...], Point] = {(): (0.0, 0.0)}

    def absolute(container: Picture | Cluster, path: tuple[str, ...]) -> None:
        ox, oy = origin[path]
        for n in container.nodes:
            x, y = place[n.id]
            drawing.boxes[n.id] = (ox + x, oy + y, *size[n.id])
        for c in container.clusters:
            x, y = place[c.id]
            drawing.frames[c.id] = (ox + x, oy + y, *size[c.id])
            origin[(*path, c.id)] = (ox + x + PAD, oy + y + PAD + LINE_H)
            absolute(c, (*path, c.id))

    absolute(p, ())
    for (a, b, label), (level, pair) in zip(p.edges, level_of, strict=True):
        ox, oy = origin[level]
        sa, sb = drawing.boxes[a], drawing.boxes[b]
        middle = [(ox + x, oy + y) for x, y in bends.get((level, pair), [])]
        route = [(sa[0] + sa[2] / 2, sa[1] + sa[3]), *middle, (sb[0] + sb[2] / 2, sb[1])]
        drawing.edges.append((a, b, label, route))
    return drawing


def _canvas(d: Drawing) -> tuple[float, float]:
    label_w = max((len(label) * CHAR_W * 0.85 for _, _, label, _ in d.edges), default=0.0)
    w, h = d.extent()
    return w + label_w, h


def to_svg(p: Picture) -> str:
    d = layout(p)
    margin = 20.0
    w, h = _canvas(d)
    width, height = w + 2 * margin, h + 2 * margin
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'font-family="monospace" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
        "</defs>",
        f'<g transform="translate({margin},{margin})">',
    ]
    for cluster in p.all_clusters():
        x0, y0, fw, fh = d.frames[cluster.id]
        fill, stroke, dash = FRAME[cluster.kind]
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<rect id="{cluster.id}" class="cluster" x="{x0:.1f}" y="{y0:.1f}" '
            f'width="{fw:.1f}" height="{fh:.1f}" fill="{fill}" stroke="{stroke}"{dashes}/>'
        )
        title = escape(cluster.label)
        out.append(f'<text x="{x0 + 4:.1f}" y="{y0 + 12:.1f}" fill="{stroke}">{title}</text>')
    for _, _, label, route in d.edges:
        path = " ".join(f"{x:.1f},{y:.1f}" for x, y in route)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="#555" marker-end="url(#arrow)"/>'
        )
        lx, ly = _label_at(route)
        out.append(
            f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="10" fill="#333">{escape(label)}</text>'
        )
    for n in p.all_nodes():
        x, y, w, h = d.boxes[n.id]
        fill, stroke, width_px = FILL[n.kind]
        rx = h / 2 if n.kind in ("input", "output") else 4
        out.append(
            f'<rect id="{n.id}" class="node" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
            f'height="{h:.1f}" rx="{rx:.1f}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{width_px}"/>'
        )
        weight = ' font-weight="bold"' if n.kind == "heavy" else ""
        for i, line in enumerate(_lines(n)):
            out.append(
                f'<text x="{x + w / 2:.1f}" y="{y + PAD / 2 + (i + 0.8) * LINE_H:.1f}" '
                f'text-anchor="middle"{weight}>{escape(line)}</text>'
            )
    out += ["</g>", "</svg>"]
    return "\n".join(out) + "\n"


def _label_at(route: list[Point]) -> Point:
    """Where an edge's label goes: 40% down its route (clear of a cluster's title at the
    target end), just right of the line."""
    (xa, ya), (xb, yb) = route[0], route[-1]
    return xa + 0.4 * (xb - xa) + 6, ya + 0.4 * (yb - ya) + 4


def to_png(p: Picture, path: str, dpi: int = 110) -> None:
    """The same drawing as :func:`to_svg`, rasterised with matplotlib (the ``plot`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import FancyBboxPatch, Rectangle
    except ImportError:
        raise ValueError("--format png needs matplotlib (pip install 'tilegraph[plot]')") from None
    d = layout(p)
    w, h = _canvas(d)
    width, height = w + 40, h + 40
    fig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-20, width - 20)
    ax.set_ylim(height - 20, -20)
    ax.axis("off")
    for cluster in p.all_clusters():
        x0, y0, fw, fh = d.frames[cluster.id]
        fill, stroke, dash = FRAME[cluster.kind]
        ax.add_patch(
            Rectangle((x0, y0), fw, fh, fill=True, fc=fill, ec=stroke, ls="--" if dash else "-")
        )
        ax.text(x0 + 4, y0 + 12, cluster.label, color=stroke, fontsize=8, family="monospace")
    for _, _, label, route in d.edges:
        xs, ys = zip(*route, strict=True)
        arrow = {"arrowstyle": "->", "color": "#555"}
        ax.annotate("", xy=route[-1], xytext=route[-2], arrowprops=arrow)
        ax.plot(xs, ys, color="#555", lw=1)
        ax.text(*_label_at(route), label, fontsize=7, family="monospace", color="#333")
    for n in p.all_nodes():
        x, y, w, h = d.boxes[n.id]
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
