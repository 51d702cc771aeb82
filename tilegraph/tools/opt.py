"""``tilegraph-opt``: xdsl-opt with tilegraph's dialects, passes and pipelines.

Every xdsl-opt flag works (``-p``, ``--print-between-passes``, ``--time-passes``,
``--split-input-file``, ``--verify-diagnostics``, ``--print-op-generic``, ``-o``, ...).
Added here:

* ``--print-constants``: print constant data in full (default: elided above
  ``--elide-constants-larger-than`` elements, 16 by default);
* ``--pass-statistics``: after the pipeline, print what every pass did (rules fired by name,
  ops removed, groups made, ...) to stderr, as MLIR's ``-mlir-pass-statistics`` does;
* ``--check-each-pass``: run the reference interpreter on seeded inputs before the
  pipeline and after every pass (NaN in padding lanes) and stop at the first pass that
  changes the outputs beyond ``--check-rtol`` / ``--check-atol``, naming it and the largest
  difference (exit 1); otherwise a one-line summary goes to stderr;
* ``--explore FILE.html``: write the pass explorer page (:mod:`tilegraph.tools.explorer`):
  each pass's time and statistics, the IR after it with a diff, the graph before / after;
* ``--emit-onnx FILE.onnx``: after the pipeline, write the graph as an ONNX model
  (:mod:`tilegraph.tools.onnx_export`: standard ops, TransData and fused groups in the
  ``tilegraph`` domain), checked with ``onnx.checker``; the IR is still printed;
* ``--list-rules``: print the catalogue of named rewrite rules (name, pattern, result,
  caveat, peers, implementing pass) and exit;
* errors (parse, verification, pass failures, bad options, missing files) print one located
  message and exit 1 — never a traceback (set ``TILEGRAPH_DEBUG=1`` to get one).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from tilegraph.dialects.graph import dense
from tilegraph.passes.registry import pass_summary, tilegraph_dialects, tilegraph_passes
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.errors import plain_words
from tilegraph.tools.diagnostics import SourceText, located_message


class LocatedError(VerifyException):
    """A verification failure whose message is complete (location included).

    A ``VerifyException`` so that ``--verify-diagnostics`` prints it like xdsl-opt does.
    """


class TilegraphOptMain(xDSLOptMain):
    """The xDSLOptMain of tilegraph; see the module docstring."""

    version_format = "tilegraph-opt (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description=_description(), args=args)
        if self.args.list_rules:
            from tilegraph.passes.simplify.rule import format_rule_markdown, rule_catalog

            rules = rule_catalog()
            if self.args.rules_markdown:
                print(format_rule_markdown(rules))
            else:
                from tilegraph.tools.tables import print_rule_catalog

                print_rule_catalog(rules)
            raise SystemExit(0)
        if self.args.print_constants:
            dense.set_elide_limit(None)
        else:
            dense.set_elide_limit(self.args.elide_constants_larger_than)

    def parse_chunk(self, chunk, file_extension: str, start_offset: int = 0):  # type: ignore[override]
        data = chunk.read()
        self._source = SourceText(
            self.get_input_name(), data.decode(errors="replace"), start_offset
        )
        module = super().parse_chunk(io.BytesIO(data), file_extension, start_offset)
        if module is not None and not self.args.disable_verify:
            message = located_message(module, self._source)
            if message is not None:
                raise LocatedError(message)
        return module

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            if self.args.pass_statistics:
                with collecting_statistics() as collector:
                    self._apply(prog)
                print(collector.format(), file=sys.stderr)
            else:
                self._apply(prog)
        except DiagnosticException as e:
            message = located_message(prog, None, "after running the pipeline")
            if message is None:
                raise
            raise LocatedError(message) from e
        if self.args.emit_onnx:
            self._emit_onnx(prog)

    def _apply(self, prog: ModuleOp) -> None:
        if self.args.explore:
            self._explore(prog)
            return
        if not self.args.check_each_pass:
            super().apply_passes(prog)
            return
        from tilegraph.passes.pipelines import PipelinePass, observing_passes
        from tilegraph.runtime.pass_check import PassChecker, PassCheckError
        from tilegraph.tools.run_shapes import random_inputs

        try:
            checker = PassChecker(
                prog,
                random_inputs(prog, 0, {}, {}),
                self.args.check_rtol,
                self.args.check_atol,
            )
            with observing_passes(checker.after_pass):
                for p in self.pipeline.passes:
                    p.apply(self.ctx, prog)
                    if not isinstance(p, PipelinePass):
                        checker.after_pass(p, prog)
        except PassCheckError as e:
            raise LocatedError(f"error: check-each-pass: {e}") from None
        print(checker.summary(), file=sys.stderr)

    def _explore(self, prog: ModuleOp) -> None:
        """Run the pipeline pass by pass and write the explorer page (--explore)."""
        from pathlib import Path

        from tilegraph.passes.pipelines import PipelinePass, observing_passes
        from tilegraph.tools.explorer import Explorer

        with collecting_statistics() as collector:
            explorer = Explorer(prog, collector)
            with observing_passes(explorer.after_pass):
                for p in self.pipeline.passes:
                    p.apply(self.ctx, prog)
                    if not isinstance(p, PipelinePass):
                        explorer.after_pass(p, prog)
        pipeline = ",".join(str(p.spec()) for p in self.pipeline.passes)
        Path(self.args.explore).write_text(explorer.html(self.get_input_name(), pipeline))
        print(f"wrote {self.args.explore} ({len(explorer.snapshots) - 1} passes)", file=sys.stderr)

    def _emit_onnx(self, prog: ModuleOp) -> None:
        """Write the module after the pipeline as a checked ONNX model (--emit-onnx); an
        OnnxExportError (a ValueError) becomes one ``error:`` line and exit 1."""
        from tilegraph.tools.onnx_export import OnnxExportError, summary, write_onnx

        if self.args.split_input_file:
            raise OnnxExportError("--emit-onnx writes one model: not with --split-input-file")
        model = write_onnx(prog, self.args.emit_onnx)
        print(f"wrote {self.args.emit_onnx} ({summary(model)})", file=sys.stderr)

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in tilegraph_dialects().items():
            self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def onnx_frontend(stream) -> ModuleOp:  # noqa: ANN001
            from tilegraph.frontend import OnnxImportError, load_onnx

            try:
                return load_onnx(stream.read(), name=self.get_input_name())
            except OnnxImportError as e:
                raise LocatedError(f"error: {e}") from None

        self.available_frontends["onnx"] = onnx_frontend

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in tilegraph_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = _passes_epilog()
        arg_parser.add_argument(
            "--print-constants",
            action="store_true",
            help="print constant data in full instead of eliding large constants",
        )
        arg_parser.add_argument(
            "--pass-statistics",
            action="store_true",
            help="print each pass's statistics (rules fired, ops removed, ...) to stderr",
        )
        arg_parser.add_argument(
            "--check-each-pass",
            action="store_true",
            help="run the reference interpreter after every pass and name the first pass "
            "that changes the outputs",
        )
        arg_parser.add_argument(
            "--explore",
            metavar="FILE.html",
            help="write a self-contained page: every pass's time, statistics, IR, diff and "
            "graph picture",
        )
        arg_parser.add_argument(
            "--emit-onnx",
            metavar="FILE.onnx",
            help="after the pipeline, write the graph as ONNX (standard ops; TransData and "
            "fused groups in the 'tilegraph' domain), checked with onnx.checker",
        )
        arg_parser.add_argument("--check-rtol", type=float, default=1e-4, metavar="R")
        arg_parser.add_argument("--check-atol", type=float, default=1e-5, metavar="A")
        arg_parser.add_argument(
            "--list-rules",
            action="store_true",
            help="print the named rewrite rules (name, pattern, result, caveat) and exit",
        )
        arg_parser.add_argument(
            "--rules-markdown",
            action="store_true",
            help="with --list-rules: print the catalogue as a Markdown table",
        )
        arg_parser.add_argument(
            "--elide-constants-larger-than",
            type=int,
            default=dense.ELIDE_LIMIT,
            metavar="N",
            help="print constants with more than N elements as dense<__elided__> "
            "(default: %(default)s)",
        )


def _description() -> str:
    return "tilegraph-opt: run tilegraph and xDSL passes on .mlir files"


def _passes_epilog() -> str:
    """The ``--help`` epilog: tilegraph's passes, then plugin passes and dialects with the
    distribution each comes from (a plugin that fails to load is named, never fatal)."""
    from tilegraph.passes.registry import builtin_passes, plugin_dialects, plugin_passes
    from tilegraph.tools.tables import render_table

    builtin = builtin_passes()
    lines = ["tilegraph passes and pipelines (-p NAME, options as NAME{key=value ...}):"]
    rows = [(name, pass_summary(name)) for name in sorted(builtin)]
    lines.append(render_table(["pass", "summary"], rows, indent=2))
    plugins = plugin_passes()
    if plugins:
        lines += ["", "plugin passes (entry points 'tilegraph.passes'):"]
        plugin_rows = []
        for name, entry in plugins.items():
            shadowed = f"(ignored: tilegraph has a pass '{name}')"
            summary = shadowed if name in builtin else pass_summary(name)
            plugin_rows.append((name, summary, entry.origin))
        lines.append(render_table(["pass", "summary", "from"], plugin_rows, indent=2))
    lines.append("")
    lines.append("dialects: layout, graph, tile (plus every upstream xDSL dialect)")
    for name, entry in plugin_dialects().items():
        lines.append(f"plugin dialect: {name}  [from {entry.origin}]")
    lines.append("All xDSL passes (cse, dce, canonicalize, ...) are available too.")
    return "\n".join(lines)


def _fail(message: str) -> int:
    print(message.rstrip(), file=sys.stderr)
    return 1


def run(argv: Sequence[str] | None = None) -> int:
    """Run tilegraph-opt; returns the exit code."""
    debug = bool(os.environ.get("TILEGRAPH_DEBUG"))
    try:
        main = TilegraphOptMain(args=argv)
        main.run()
    except LocatedError as e:
        if debug:
            raise
        return _fail(str(e))
    except SystemExit as e:  # argparse --help / usage errors
        return int(e.code) if isinstance(e.code, int) else 1
    except ParseError as e:
        if debug:
            raise
        return _fail(f"error: {e}")
    except DiagnosticException as e:
        if debug:
            raise
        return _fail(f"error: {e}")
    except FileNotFoundError as e:
        return _fail(f"error: cannot open {e.filename}: {e.strerror}")
    except (ValueError, TypeError) as e:
        if debug:
            raise
        return _fail(f"error: {e}")
    except Exception as e:  # a bug: still no traceback unless asked
        if debug:
            raise
        return _fail(
            f"internal error: {plain_words(e)}\n(this is a bug of tilegraph: please report it; "
            "set TILEGRAPH_DEBUG=1 to see the traceback)"
        )
    return 0


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
