"""``tilegraph-viz``: the graph as a picture, with the origin and storage view on every edge.

    tilegraph-viz MODEL [-p PIPELINE] [--format mermaid|dot|svg|png] [-o FILE] [--collapse]

MODEL is an ``.onnx`` or ``.mlir`` file; ``-p`` runs a pipeline first (``format{strategy=
naive}``, ``O2``). Every op of the entry function is a node, every SSA value an edge
labelled with its origin format and shape, and with ``→ storage format [storage shape]``
where the storage view differs. ``layout.trans_data`` nodes are highlighted (red), heavy ops
(Conv, MatMul, Gemm: the ones that seed storage selection) are bold, constants are folded
into their consumer's label (``w: FRACTAL_Z``), each ``graph.fused`` group is a cluster
of its ops (``--collapse``: one node per group, for large models), and each control-flow op
(``graph.if``, ``graph.loop``, ...) is a cluster holding its head node (its operands come in
there), one nested cluster per body (``then`` / ``else`` / ``body``: the body's ops, reading
its arguments from the head) and an ``end`` node (the yielded values go in there, the op's
results come out).

Mermaid (renders in GitHub / GitLab markdown and mermaid.live) and Graphviz DOT are text;
SVG is laid out by grandalf (a pip dependency; no Graphviz needed) in :mod:`.viz_svg` as a
compound layout (each cluster laid out on its own, then placed as one box), and
PNG is the same drawing rasterised by matplotlib (the ``plot`` extra).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tilegraph.tools.model_files import ModelFileError, load_module
from tilegraph.tools.viz.picture import FORMATS, picture, render


def run(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tilegraph-viz", description=(__doc__ or "").splitlines()[0])
    ap.add_argument("model", help=".onnx or .mlir file")
    ap.add_argument("-p", "--pipeline", default="", help="pass pipeline to run first (e.g. O2)")
    ap.add_argument("--format", choices=FORMATS, default="mermaid")
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    ap.add_argument("--collapse", action="store_true", help="one node per fused group")
    args = ap.parse_args(argv)
    try:
        module = load_module(args.model)
        if args.pipeline:
            from tilegraph.passes.context import make_context
            from tilegraph.passes.pipelines import run_pipeline

            run_pipeline(args.pipeline, make_context(), module)
        if args.format == "png":
            if not args.output:
                raise ValueError("--format png needs -o FILE")
            from tilegraph.tools.viz.svg import to_png

            to_png(picture(module, args.collapse), args.output)
            return 0
        text = render(module, args.format, args.collapse)
    except (ModelFileError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def main() -> None:
    sys.exit(run())
