"""``tilegraph-opt``: xdsl-opt with tilegraph's dialects, passes and pipelines.

Every xdsl-opt flag works (``-p``, ``--print-between-passes``, ``--time-passes``,
``--split-input-file``, ``--verify-diagnostics``, ``--print-op-generic``, ``-o``, ...).
Added here:

* ``--print-constants``: print constant data in full (default: elided above
  ``--elide-constants-larger-than`` elements, 16 by default);
* ``--pass-statistics``: after the pipeline, print what every pass did (rules fired by name,
  ops removed, groups made, ...) to stderr, as MLIR's ``-mlir-pass-statistics`` does;
* ``--lowering-remarks``: after the pipeline, print to stderr a remark (MLIR's
  ``LOC: remark: MESSAGE``) per fused group ``lower-graph-to-kernels`` could not lower whole
  — its ops, the strategy that refused it and why, what it made instead — and per host
  kernel, then one line of the lowering's counts (kernels by unit, groups whole / split);
* ``--check-each-pass``: run the reference interpreter on seeded inputs before the
  pipeline and after every pass (NaN in padding lanes) and stop at the first pass that
  changes the outputs beyond ``--check-rtol`` / ``--check-atol``, naming it and the largest
  difference (exit 1); otherwise a one-line summary goes to stderr;
* ``--explore FILE.html``: write the pass explorer page (:mod:`tilegraph.tools.opt.explorer`):
  each pass's time and statistics, the IR after it with a diff, the graph before / after;
* ``--emit-onnx FILE.onnx``: after the pipeline, write the graph as an ONNX model
  (:mod:`tilegraph.frontend.onnx_export`: standard ops, TransData and fused groups in the
  ``tilegraph`` domain), checked with ``onnx.checker``; the IR is still printed;
* ``--profile [N]``: after the pipeline (one that lowers to tiled kernels), print the cycle
  model's estimate to stderr — the N slowest kernels (15), their bound and cube
  utilisation, the totals — scheduled as ``--launch sunk|host`` says (sunk by default);
* ``--list-rules``: print the catalogue of named rewrite rules (name, pattern, result,
  caveat, peers, implementing pass) and exit;
* ``--help-pass NAME``: a pass's docstring and options (type, default), plugins included;
* errors (parse, verification, pass failures, bad options, missing files) print one located
  message and exit 1 — never a traceback (set ``TILEGRAPH_DEBUG=1`` to get one). A pipeline
  error names the pass, the option or the column, with the closest names; an error raised
  inside a pass names the pass (``error: pass 'fuse-ops' (in O2): ...``);
* ``--print-between-passes``, ``--time-passes``, ``--pass-statistics``, ``--check-each-pass``
  and ``--explore`` see every pass inside O1/O2 (:func:`~tilegraph.passes.pipelines.run_passes`);
* stdout closed early (``| head``): exit 141, no message.

``--help`` imports none of tilegraph's passes or dialects: keep imports that need them inside
the functions that use them (a test checks ``sys.modules`` after ``--help``).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from tilegraph.passes.pipelines import (
    PassListener,
    PipelinePass,
    describe_pass_path,
    failing_pass,
    listening_to_passes,
    observing_passes,
    run_passes,
)
from tilegraph.passes.registry import (
    PassFactory,
    PipelineSpecError,
    did_you_mean,
    parse_pipeline_spec,
    pass_options,
    pass_summary,
    tilegraph_dialects,
    tilegraph_passes,
)
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.tools.arg_types import non_negative_float, non_negative_int, positive_int
from tilegraph.tools.opt.diagnostics import SourceText, located_message

ELIDE_LIMIT = 16
"""tilegraph-opt's default for ``--elide-constants-larger-than``."""


class LocatedError(VerifyException):
    """A verification failure whose message is complete (location included).

    A ``VerifyException`` so that ``--verify-diagnostics`` prints it like xdsl-opt does.
    """


class TilegraphOptMain(xDSLOptMain):
    """The xDSLOptMain of tilegraph; see the module docstring."""

    version_format = "tilegraph-opt (xdsl {xdsl_version})"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description=_description(), args=args)
        if self.args.help_pass is not None:
            print(describe_pass(self.args.help_pass, self.available_passes))
            raise SystemExit(0)
        if self.args.list_rules:
            from tilegraph.passes.simplify.rule import format_rule_markdown, rule_catalog

            rules = rule_catalog()
            if self.args.rules_markdown:
                print(format_rule_markdown(rules))
            else:
                from tilegraph.tools.tables import print_rule_catalog

                print_rule_catalog(rules)
            raise SystemExit(0)
        from tilegraph.dialects.graph import dense  # the dialects: not for --help

        if self.args.print_constants:
            dense.set_elide_limit(None)
        else:
            dense.set_elide_limit(self.args.elide_constants_larger_than)

    def setup_pipeline(self) -> None:
        """Parse ``-p`` (PipelineSpecError: one line naming the pass, the option or the
        column; passes are run by :meth:`apply_passes`, not by xDSL's callback)."""
        self.pipeline = PassPipeline(parse_pipeline_spec(self.args.passes, self.available_passes))

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
        """Run the pipeline pass by pass (inside O1/O2 too) with the listeners the flags ask
        for, verifying the module after each top-level pass; then ``--emit-onnx``."""
        with ExitStack() as stack:
            collector = None
            if self.args.pass_statistics or self.args.explore or self.args.lowering_remarks:
                collector = stack.enter_context(collecting_statistics())
            if self.args.print_between_passes or self.args.time_passes:
                stack.enter_context(listening_to_passes(_PassPrinter(self.args)))
            checker = self._checker(prog) if self.args.check_each_pass else None
            explorer = None
            if self.args.explore:
                from tilegraph.tools.opt.explorer import Explorer

                assert collector is not None  # opened above for --explore
                explorer = Explorer(prog, collector)
                stack.enter_context(observing_passes(explorer.after_pass))
            if checker is not None:
                stack.enter_context(observing_passes(checker.after_pass))
            with _check_errors():
                for p in self.pipeline.passes:
                    run_passes((p,), self.ctx, prog)
                    self._verify(prog, p)
            if collector is not None and self.args.pass_statistics:
                print(collector.format(), file=sys.stderr)
            if collector is not None and self.args.lowering_remarks:
                _print_lowering_remarks(collector)
            if checker is not None:
                print(checker.summary(), file=sys.stderr)
            if explorer is not None:
                self._write_explorer(explorer)
        if self.args.emit_onnx:
            self._emit_onnx(prog)
        if self.args.profile is not None:
            self._profile(prog)

    def _profile(self, prog: ModuleOp) -> None:
        from tilegraph.cost_model.cycles import CycleModelOptions, simulate_module
        from tilegraph.cost_model.cycles.simulate import launches

        if not launches(prog):
            raise LocatedError(
                "error: --profile: the module has no kernel launches; lower it first "
                "(-p '...,lower-graph-to-kernels,tile-kernels,split-cores,inject-sync')"
            )
        options = CycleModelOptions(launch=self.args.launch)
        print(simulate_module(prog, options=options).render(self.args.profile), file=sys.stderr)

    def _verify(self, prog: ModuleOp, p: ModulePass) -> None:
        """Verify after a top-level pass: a located message naming the pass."""
        if self.args.disable_verify:
            return
        try:
            prog.verify()
        except DiagnosticException as e:
            message = located_message(prog, None, f"after pass '{p.name}'")
            if message is None:
                raise
            raise LocatedError(message) from e

    def _checker(self, prog: ModuleOp):  # noqa: ANN202
        """The --check-each-pass checker, seeded on the module before the pipeline."""
        from tilegraph.runtime.pass_check import PassChecker
        from tilegraph.tools.random_inputs import random_inputs

        with _check_errors():
            return PassChecker(
                prog, random_inputs(prog, 0, {}, {}), self.args.check_rtol, self.args.check_atol
            )

    def _write_explorer(self, explorer) -> None:  # noqa: ANN001
        """Write the explorer page (--explore)."""
        from pathlib import Path

        pipeline = ",".join(str(p.spec()) for p in self.pipeline.passes)
        Path(self.args.explore).write_text(explorer.html(self.get_input_name(), pipeline))
        print(f"wrote {self.args.explore} ({len(explorer.snapshots) - 1} passes)", file=sys.stderr)

    def _emit_onnx(self, prog: ModuleOp) -> None:
        """Write the module after the pipeline as a checked ONNX model (--emit-onnx); an
        OnnxExportError (a ValueError) becomes one ``error:`` line and exit 1."""
        from tilegraph.frontend.onnx_export import OnnxExportError, summary, write_onnx

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

            # By path where there is one: the weights may be in an external data file
            # beside the model.
            path = Path(self.get_input_name())
            source = path if path.is_file() else None
            try:
                return load_onnx(source or stream.read(), name=self.get_input_name())
            except OnnxImportError as e:
                raise LocatedError(f"error: {e}") from None

        self.available_frontends["onnx"] = onnx_frontend

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in tilegraph_passes().items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.formatter_class = _HelpFormatter
        arg_parser.epilog = _PASSES_EPILOG
        arg_parser.add_argument(
            "--help-pass",
            metavar="NAME",
            help="print a pass's description and its options (type, default), then exit",
        )
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
            "--lowering-remarks",
            action="store_true",
            help="print to stderr a remark per fused group lower-graph-to-kernels could not "
            "lower whole (ops, ONNX nodes, the strategy's reason, the kernels made) and per "
            "host kernel, then the lowering's summary",
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
        arg_parser.add_argument(
            "--profile",
            nargs="?",
            const=15,
            type=positive_int,
            metavar="N",
            help="after the pipeline, print the cycle model's estimate of the lowered module "
            "to stderr: the N slowest kernels (15) and the totals",
        )
        arg_parser.add_argument(
            "--launch",
            choices=("sunk", "host"),  # cycles.simulate.LAUNCH_MODES, not imported for --help
            default="sunk",
            help="with --profile: kernels scheduled on the device (sunk) or launched one by "
            "one from the host",
        )
        arg_parser.add_argument("--check-rtol", type=non_negative_float, default=1e-4, metavar="R")
        arg_parser.add_argument("--check-atol", type=non_negative_float, default=1e-5, metavar="A")
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
            type=non_negative_int,
            default=ELIDE_LIMIT,
            metavar="N",
            help="print constants with more than N elements as dense<__elided__> "
            "(default: %(default)s)",
        )


class _PassPrinter(PassListener):
    """``--print-between-passes`` and ``--time-passes`` at every depth (inside O1/O2 too).

    The IR is printed after each leaf pass that another leaf pass follows, as xdsl-opt
    prints it between passes (the last pass's IR is the output); every pass's time is
    printed when it ends, a pipeline's after those of its passes
    (``pass 'infer-shapes' (in O2 > O1) took 0.0012 seconds``)."""

    def __init__(self, args: argparse.Namespace):
        self.print_ir: bool = args.print_between_passes
        self.print_generic: bool = args.print_op_generic
        self.time: bool = args.time_passes
        self.previous: str | None = None
        self.started: list[float] = []

    def before(self, p: ModulePass, module: ModuleOp, path: tuple[str, ...]) -> None:
        if self.print_ir and self.previous is not None and not isinstance(p, PipelinePass):
            from xdsl.printer import Printer

            print(f"IR after {self.previous}:")
            Printer(stream=sys.stdout, print_generic_format=self.print_generic).print_op(module)
            print("\n\n\n")
            self.previous = None
        self.started.append(time.perf_counter())

    def after(self, p: ModulePass, module: ModuleOp, path: tuple[str, ...]) -> None:
        took = time.perf_counter() - self.started.pop()
        if not isinstance(p, PipelinePass):
            self.previous = p.name
        if self.time:
            print(f"{describe_pass_path((*path, p.name))} took {took:.6f} seconds")


def _print_lowering_remarks(collector) -> None:  # noqa: ANN001 - not imported for --help
    """``--lowering-remarks``: each remark of ``lower-graph-to-kernels`` as MLIR prints a
    remark, then the summary line of the lowering (or that the pass did not run)."""
    from tilegraph.lowering.conversion.graph_to_kernels_remarks import (
        PASS_NAME,
        lowering_lines,
        lowering_remarks,
        lowering_section,
    )

    if PASS_NAME not in collector.passes:
        print(f"lowering: {PASS_NAME} did not run (no remarks)", file=sys.stderr)
        return
    for remark in lowering_remarks(collector):
        print(remark.format(), file=sys.stderr)
    for line in lowering_lines(lowering_section(collector), limit=0):
        print(line, file=sys.stderr)


@contextmanager
def _check_errors() -> Iterator[None]:
    """A ``--check-each-pass`` failure (PassCheckError) as one ``error:`` line."""
    try:
        yield
    except Exception as e:
        from tilegraph.runtime.pass_check import PassCheckError

        if isinstance(e, PassCheckError):
            raise LocatedError(f"error: check-each-pass: {e}") from None
        raise


def describe_pass(name: str, available: dict[str, PassFactory]) -> str:
    """``--help-pass NAME``: the pass's docstring, then each option with its type and
    default (as written in a pipeline). PipelineSpecError for an unknown name, with the
    closest names."""
    import inspect

    from tilegraph.passes.registry import BUILTIN_PASSES, plugin_passes
    from tilegraph.tools.tables import render_table

    if name not in available:
        raise PipelineSpecError(
            f"--help-pass: unknown pass '{name}'{did_you_mean(name, sorted(available))}"
        )
    cls = available[name]()
    plugin = plugin_passes().get(name)
    origin = (
        "tilegraph"
        if name in BUILTIN_PASSES
        else f"plugin {plugin.origin}"
        if plugin is not None
        else "xDSL"
    )
    lines = [f"{name}  ({cls.__module__}.{cls.__qualname__}, from {origin})", ""]
    lines += [
        "  " + line if line else "" for line in inspect.cleandoc(cls.__doc__ or "").splitlines()
    ]
    options = pass_options(cls)
    if not options:
        lines += ["", "options: none"]
    else:
        rows = [
            (o.name, o.type, o.default if o.default is not None else "(required)") for o in options
        ]
        example = " ".join(f"{o.name}=..." for o in options[:2])
        lines += ["", f"options (-p '{name}{{{example}}}'):"]
        lines.append(render_table(["option", "type", "default"], rows, indent=2))
    return "\n".join(lines)


_PASSES_EPILOG = "(the passes: computed when --help is printed)"
"""The epilog placeholder that :class:`_HelpFormatter` replaces by :func:`_passes_epilog`,
so that the pass table (which reads every pass's docstring) is built for ``--help`` only."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    def add_text(self, text: str | None) -> None:
        super().add_text(_passes_epilog() if text is _PASSES_EPILOG else text)


def _description() -> str:
    return "tilegraph-opt: run tilegraph and xDSL passes on .mlir files"


def _passes_epilog() -> str:
    """The ``--help`` epilog: tilegraph's passes, then plugin passes and dialects with the
    distribution each comes from (a plugin that fails to load is named, never fatal).

    Summaries are read from the sources without importing the passes, and the columns are
    laid out here rather than by ``rich`` (tables.py), to keep ``--help`` quick."""
    from tilegraph.passes.registry import BUILTIN_PASSES, plugin_dialects, plugin_passes

    lines = ["tilegraph passes and pipelines (-p NAME, options as NAME{key=value ...};"]
    lines.append("--help-pass NAME describes one, with its options):")
    rows = [(name, pass_summary(name)) for name in sorted(BUILTIN_PASSES)]
    lines += _columns(("pass", "summary"), rows)
    plugins = plugin_passes()
    if plugins:
        lines += ["", "plugin passes (entry points 'tilegraph.passes'):"]
        plugin_rows = []
        for name, entry in plugins.items():
            shadowed = f"(ignored: tilegraph has a pass '{name}')"
            summary = shadowed if name in BUILTIN_PASSES else pass_summary(name)
            plugin_rows.append((name, summary, entry.origin))
        lines += _columns(("pass", "summary", "from"), plugin_rows)
    lines.append("")
    lines.append("dialects: layout, graph, tile (plus every upstream xDSL dialect)")
    for name, entry in plugin_dialects().items():
        lines.append(f"plugin dialect: {name}  [from {entry.origin}]")
    lines.append("All xDSL passes (cse, dce, canonicalize, ...) are available too.")
    return "\n".join(lines)


def _columns(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """A header and rows in aligned columns two spaces apart, indented by two, as
    :func:`tilegraph.tools.tables.render_table` prints a table when piped."""
    table = [header, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]


def _fail(message: str) -> int:
    print(message.rstrip(), file=sys.stderr)
    return 1


def _in_pass(e: BaseException, text: str) -> str:
    """``text`` (``e``'s message) prefixed by ``pass 'fuse-ops' (in O2): `` if ``e`` was
    raised inside a pass (a message that already starts with the pass's name, bare or as
    ``pass 'fuse-ops': ``, loses it)."""
    path = failing_pass(e)
    if not path:
        return text
    text = text.removeprefix(f"{path[-1]}: ").removeprefix(f"pass '{path[-1]}': ")
    return f"{describe_pass_path(path)}: {text}"


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so that the interpreter's final flush
    does not fail again and print a message."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


def run(argv: Sequence[str] | None = None) -> int:
    """Run tilegraph-opt; returns the exit code (0; 1 on an error, printed as one line on
    stderr; 141, silently, when stdout is a pipe closed early, as ``| head`` does)."""
    debug = bool(os.environ.get("TILEGRAPH_DEBUG"))
    try:
        main = TilegraphOptMain(args=argv)
        main.run()
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except LocatedError as e:
        if debug:
            raise
        return _fail(str(e))
    except SystemExit as e:  # argparse --help / usage errors
        return int(e.code) if isinstance(e.code, int) else 1
    except FileNotFoundError as e:
        if debug:
            raise
        return _fail(f"error: {_in_pass(e, f'cannot open {e.filename}: {e.strerror}')}")
    except (ParseError, DiagnosticException, ValueError, TypeError) as e:
        if debug:
            raise
        return _fail(f"error: {_in_pass(e, str(e))}")
    except Exception as e:  # a bug: still no traceback unless asked
        if debug:
            raise
        from tilegraph.runtime.errors import plain_words

        return _fail(
            f"internal error: {_in_pass(e, plain_words(e))}\n(this is a bug of tilegraph: "
            "please report it; set TILEGRAPH_DEBUG=1 to see the traceback)"
        )
    return 0


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
