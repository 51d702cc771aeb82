"""``tilegraph-viz``: the graph as a picture, with the origin and storage view on every edge.

    tilegraph-viz MODEL [-p PIPELINE] [--format mermaid|dot|svg|png] [-o FILE] [--collapse]

MODEL is an ``.onnx`` or ``.mlir`` file; ``-p`` runs a pipeline first (``format{strategy=
naive}``, ``O2``). What the picture shows: :mod:`.picture`; the SVG / PNG drawing:
:mod:`.svg`. Errors (bad file, bad pipeline, PNG without ``-o``) print one line, exit 1.
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
