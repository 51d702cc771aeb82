"""Named pipelines, usable as ``-p O1`` from the tools and from Python.

A pipeline is a pass whose ``apply`` runs a pipeline string, so pipelines nest and can grow
without changing how they are called. :func:`run_passes` runs every pass, at any depth, so
tools see inside pipelines (``--print-between-passes``, ``--time-passes``,
``--pass-statistics``, ``--check-each-pass``) and an error names the pass it came from.
The pipelines track the passes that exist: each docstring says what runs.
:func:`lowering_pipeline` spells the tile lowering (graph -> tiled, synchronised kernels)
that ``tilegraph.compile`` and ``tilegraph-run`` run after the graph pipeline.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import pass_statistics, start_pass
from tilegraph.target import target_of

PassObserver = Callable[[ModulePass, ModuleOp], None]
"""Called after every leaf pass (not after the pipelines that contain it) with the module."""


class PassListener:
    """Hooks around every pass that :func:`run_passes` runs, pipelines and the passes inside
    them alike (``path``: the names of the enclosing pipelines, outermost first). The
    default hooks do nothing; tools override them (``--print-between-passes``,
    ``--time-passes``)."""

    def before(self, p: ModulePass, module: ModuleOp, path: tuple[str, ...]) -> None:
        """Called just before ``p`` runs."""

    def after(self, p: ModulePass, module: ModuleOp, path: tuple[str, ...]) -> None:
        """Called just after ``p`` ran without raising."""


class _LeafObserver(PassListener):
    def __init__(self, observer: PassObserver):
        self.observer = observer

    def after(self, p: ModulePass, module: ModuleOp, path: tuple[str, ...]) -> None:
        if not isinstance(p, PipelinePass):
            self.observer(p, module)


_LISTENERS: ContextVar[tuple[PassListener, ...]] = ContextVar(
    "tilegraph_pass_listeners", default=()
)
_PATH: ContextVar[tuple[str, ...]] = ContextVar("tilegraph_pipeline_path", default=())


@contextmanager
def listening_to_passes(listener: PassListener) -> Iterator[None]:
    """Call ``listener``'s hooks around every pass :func:`run_passes` runs inside the
    ``with`` block, at any depth of nested pipelines."""
    token = _LISTENERS.set((*_LISTENERS.get(), listener))
    try:
        yield
    finally:
        _LISTENERS.reset(token)


@contextmanager
def observing_passes(observer: PassObserver) -> Iterator[None]:
    """Call ``observer(pass, module)`` after every leaf pass that :func:`run_pipeline` runs
    inside the ``with`` block, nested pipelines included (``--check-each-pass`` uses this)."""
    with listening_to_passes(_LeafObserver(observer)):
        yield


FAILING_PASS = "tilegraph_failing_pass"
"""The attribute :func:`run_passes` sets on an exception raised inside a pass: the path of
the innermost pass that raised it (``("O2", "fuse-ops")``). Read it with
:func:`failing_pass`."""


def failing_pass(error: BaseException) -> tuple[str, ...] | None:
    """The pass an exception was raised in, with its enclosing pipelines (outermost first),
    or None if it was not raised inside a pass that :func:`run_passes` ran."""
    return getattr(error, FAILING_PASS, None)


def describe_pass_path(path: tuple[str, ...]) -> str:
    """``pass 'fuse-ops' (in O2)``: a pass with its enclosing pipelines, for messages."""
    *outer, name = path
    inside = f" (in {' > '.join(outer)})" if outer else ""
    return f"pass '{name}'{inside}"


def run_passes(passes: Sequence[ModulePass], ctx: Context, module: ModuleOp) -> None:
    """Run ``passes`` in order on ``module``, telling the active listeners before and after
    each, counting a run of each in the active statistics (for the passes that count none
    themselves), and marking an exception raised inside a pass with the innermost pass
    that raised it (:func:`failing_pass`); the exception itself propagates unchanged."""
    path = _PATH.get()
    for p in passes:
        listeners = _LISTENERS.get()
        for listener in listeners:
            listener.before(p, module, path)
        stats = pass_statistics(p.name)
        runs = stats.runs
        token = _PATH.set((*path, p.name))
        try:
            p.apply(ctx, module)
        except Exception as e:
            if failing_pass(e) is None:
                try:
                    setattr(e, FAILING_PASS, (*path, p.name))
                except AttributeError:  # an exception type without a __dict__
                    pass
            raise
        finally:
            _PATH.reset(token)
        if stats.runs == runs:
            stats.runs += 1
        for listener in listeners:
            listener.after(p, module, path)


def run_pipeline(spec: str, ctx: Context, module: ModuleOp) -> None:
    """Run a pipeline string (``"infer-shapes,cse"``) with every registered pass available
    (:class:`~tilegraph.passes.registry.PipelineSpecError`, a ValueError, if it cannot be
    parsed), through :func:`run_passes`.

    The cyclic garbage collector is paused while the outermost pipeline runs: IR objects
    point at their parents, so every full collection rescans the whole module, which made
    the passes' time per op grow with the model (1.3-2.2x from 1k to 10k ops); with the
    pause they are linear. What the passes drop is collected when the pipeline ends.
    """
    if not spec:
        return
    from tilegraph.passes.registry import all_passes, parse_pipeline_spec

    passes = parse_pipeline_spec(spec, all_passes())
    target_of(module)  # a malformed tilegraph.target is reported before any pass runs
    with _collector_paused():
        run_passes(passes, ctx, module)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while the passes run (an IR's ops, blocks and uses are
    cycles: its automatic collections made passes quadratic), then one collection of the
    youngest generation: with the collector off nothing was promoted, so that generation
    holds everything the pipeline allocated, its garbage cycles (the ops it erased) among
    them. A full collection would also traverse every older object (the imported
    dialects, the model's weights): two of them were ~1 s of bert_dynamo's
    ``tilegraph-run --estimate``, for the same peak memory (docs/running.md)."""
    if not gc.isenabled():  # nested pipeline, or the caller manages the collector
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


class PipelinePass(ModulePass):
    """A pass that only runs other passes (observers see its leaves, not it)."""


@dataclass(frozen=True)
class NamedPipeline(PipelinePass):
    """Base of named pipelines: ``SPEC`` is the pipeline string it runs."""

    SPEC: ClassVar[str] = ""

    def spec(self) -> str:
        """The pipeline string this instance runs (``SPEC`` with its options applied)."""
        return self.SPEC

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pipeline(self.spec(), ctx, op)


@register_pass
@dataclass(frozen=True)
class O0Pipeline(NamedPipeline):
    """O0: import only, no transformation."""

    name = "O0"
    SPEC = ""


SIMPLIFY_ROUND = "infer-shapes,constant-fold,algebraic-simplify,fold-batchnorm,cse,dce"
"""One round of O1's simplification; O1 repeats it until nothing changes."""


@register_pass
@dataclass(frozen=True)
class O1Pipeline(PipelinePass):
    """O1: simplify — infer-shapes, constant-fold, algebraic-simplify, fold-batchnorm, cse,
    dce, repeated to a fixpoint.

    A round that leaves the module unchanged (same :func:`module_fingerprint`) ends the
    loop; ``max-rounds`` bounds it. Statistics: ``rounds``.
    """

    name = "O1"

    max_rounds: int = 4
    disable: str = ""
    """Rules of ``algebraic-simplify`` not to run (its ``disable`` option, e.g.
    ``combine-parallel``; a graph-level choice ``tilegraph-tune`` searches)."""

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise ValueError(f"O1: max-rounds must be at least 1, got {self.max_rounds}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from tilegraph.passes.fingerprint import module_fingerprint  # imports the dialects

        stats = start_pass(self.name)
        spec = SIMPLIFY_ROUND
        if self.disable:
            spec = spec.replace(
                "algebraic-simplify", f"algebraic-simplify{{disable={self.disable}}}"
            )
        for _ in range(self.max_rounds):
            before = module_fingerprint(op)
            run_pipeline(spec, ctx, op)
            stats.add("rounds")
            if module_fingerprint(op) == before:
                return


O2_SPEC = (
    "expand-quantized-lstm,expand-qoperator,fold-integer-ops,fold-qdq,fold-requant,"
    "expand-recurrent-lengths,hoist-recurrent-projection,hoist-loop-projection,O1,"
    "hoist-loop-elementwise,format{strategy=ge},fuse-ops,fuse-dynamic-quantize"
)
"""What O2 runs."""


def o2_with_strategy(strategy: str) -> str:
    """O2 with ``strategy`` (naive, ge, optimal) selecting the storage formats: ``O2``
    itself for GE's (what a sweep over strategies compiles with)."""
    return "O2" if strategy == "ge" else f"O2{{strategy={option_value(strategy)}}}"


@register_pass
@dataclass(frozen=True)
class O2Pipeline(NamedPipeline):
    """O2: everything — expand-quantized-lstm, expand-qoperator, fold-integer-ops and
    fold-qdq (under the ``int8`` precision: DynamicQuantizeLSTM's input projection a
    quantised matmul, QLinearConv / QLinearMatMul become their QDQ pattern, DynamicQuantizeLinear
    its parameters op and a QuantizeLinear, MatMulInteger / ConvInteger and QDQ
    convolutions and matmuls int8 cube ops, before constant folding dequantises their
    weights), fold-requant (an int8 convolution feeding the next one requantises in
    fixpipe), expand-recurrent-lengths (a recurrent layer with ``sequence_lens`` as the
    layer without it and ops with kernels), hoist-recurrent-projection (a float recurrent
    layer whose ``W`` would stream per step: its input projection one matmul first),
    hoist-loop-projection (a loop body's product of row ``t`` of a loop-invariant tensor
    by a loop-invariant matrix: every row's product one matmul before the loop), O1,
    hoist-loop-elementwise (a loop body's unary elementwise op of row ``t`` of a
    loop-invariant tensor: the op of every row one kernel before the loop; after O1, whose
    CSE leaves one op where the export repeats it), then the format
    engine with GE's strategy, then fuse-ops and fuse-dynamic-quantize (each
    DynamicQuantizeLinear's two halves one kernel).

    ``small-channel=true`` passes ATC's small-channel mode to ``select-storage-format``.
    The graph-level choices ``tilegraph-tune`` searches are options too: ``strategy`` (the
    format engine's: ge, naive, optimal), ``disable`` (rules O1 does not run, e.g.
    ``combine-parallel``), ``max-ops`` and ``ub-percent`` (``fuse-ops``'); their defaults
    are the heuristic's. ``coupled-attention`` is ``fuse-ops``' choice on a coupled
    preset (``ge``: GE's attention fusion conditions; ``always``)."""

    name = "O2"
    SPEC = O2_SPEC
    small_channel: bool = False
    strategy: str = "ge"
    disable: str = ""
    max_ops: int = 64
    ub_percent: int = 100
    coupled_attention: str = "ge"

    def spec(self) -> str:
        spec = self.SPEC
        if self.small_channel or self.strategy != "ge":
            small = " small-channel=true" if self.small_channel else ""
            spec = spec.replace("{strategy=ge}", f"{{strategy={self.strategy}{small}}}")
        if self.disable:
            spec = spec.replace(",O1,", f",O1{{disable={self.disable}}},")
        fuse = " ".join(
            f"{name}={value}"
            for name, value, default in (
                ("max-ops", self.max_ops, 64),
                ("ub-percent", self.ub_percent, 100),
                ("coupled-attention", self.coupled_attention, "ge"),
            )
            if value != default
        )
        return spec.replace("fuse-ops", f"fuse-ops{{{fuse}}}") if fuse else spec


@register_pass
@dataclass(frozen=True)
class FormatPipeline(PipelinePass):
    """format: the whole format engine (conv-forms, origin inference ... fold), then
    format-report."""

    name = "format"

    strategy: str = "ge"
    platform: str = ""
    """Preset name; empty: the module's target (:mod:`tilegraph.target`)."""
    time_limit: float = 60.0
    small_channel: bool = False
    """ATC's small-channel mode, passed to ``select-storage-format``."""

    def spec(self) -> str:
        platform = f" platform={option_value(self.platform)}" if self.platform else ""
        small = " small-channel=true" if self.small_channel else ""
        select = (
            f"select-storage-format{{strategy={self.strategy}{platform} "
            f"time-limit={self.time_limit}{small}}}"
        )
        return (
            f"conv-forms,infer-origin-format,{select},insert-trans-data,cancel-trans-data,"
            "fold-trans-data,dce,format-report"
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_pipeline(self.spec(), ctx, op)


NPU_PASSES = ("multi-buffer", "plan-local-memory", "split-cores", "inject-sync", "plan-memory")
"""What follows tiling: ping-pong slots for the loads, on-chip addresses, blocks over the
cores, flags between the pipes (they must see the addresses), one GM workspace."""

VERIFY_PASSES = ("verify-sync",)
"""What the lowering pipeline ends with unless told not to: checks that change nothing
(``verify-sync``: the pipe-queue checker on every kernel)."""


def quoted_option(value: str) -> str:
    """``value`` as a pass option in a pipeline string (quoted: a path may hold spaces,
    commas or braces)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def option_value(value: str) -> str:
    """``value`` as a pass option's value in a pipeline string: as it is when xDSL's lexer
    reads it as one word, else quoted (a platform with what-if overrides,
    ``"ascend910b:ub=256KiB,l1=1MiB"``: ``:``, ``=`` and ``,`` are syntax outside quotes)."""
    return value if re.fullmatch(r"[A-Za-z0-9_.\-]+", value) else quoted_option(value)


def lowering_pipeline(
    platform: str = "",
    precision: str = "",
    verify_sync: bool = True,
    tune_db: str = "",
    place_concat: str = "contiguous",
) -> str:
    """Graph level -> kernels -> tiled loops -> multi-core, synchronised kernels (on the
    module's target; ``platform`` / ``precision`` set it where it has none, see
    :mod:`tilegraph.target`), then (``verify_sync``) the synchronisation proved
    sufficient (:data:`VERIFY_PASSES`). ``tune_db``: a tuning database whose best points
    ``apply-tuning`` writes on the kernels before they are tiled. ``place_concat``: the
    concats whose inputs are regions of their output run no kernel (``place-concat``;
    ``"contiguous"``, the default: contiguous runs only, GE's no-task concat;
    ``"strided"``: strided regions too, whose kernels must not view the argument inside —
    docs/tile-level.md; ``""``: no placement)."""
    options = " ".join(
        f"{key}={option_value(value)}"
        for key, value in (("platform", platform), ("precision", precision))
        if value
    )
    apply = (f"apply-tuning{{db={quoted_option(tune_db)}}}",) if tune_db else ()
    if place_concat not in ("", "contiguous", "strided"):
        raise ValueError(f"place_concat: '', 'contiguous' or 'strided', got {place_concat!r}")
    place = {"": (), "contiguous": ("place-concat{strided=false}",)}.get(
        place_concat, ("place-concat",)
    )
    tiling = ("tile-kernels" + (f"{{{options}}}" if options else ""),)
    return ",".join(
        ("lower-graph-to-kernels", "alias-reshapes", *place, *apply, *tiling, *NPU_PASSES)
        + (VERIFY_PASSES if verify_sync else ())
    )


SMALL_CHANNEL_PASSES = ("O2", "format", "select-storage-format")
"""The passes that take the ``small-channel`` option (they select storage formats)."""


def with_small_channel(pipeline: str) -> str:
    """``pipeline`` with ATC's small-channel mode (``small-channel=true``) set on each of
    its passes that selects storage formats (:data:`SMALL_CHANNEL_PASSES`); what
    ``tilegraph.compile(small_channel=True)`` and ``tilegraph-run --small-channel`` run.
    ValueError when the pipeline has no such pass (the option would do nothing)."""
    import dataclasses

    from xdsl.utils.arg_spec import parse_pipeline

    specs = list(parse_pipeline(pipeline))
    if not any(s.name in SMALL_CHANNEL_PASSES for s in specs):
        raise ValueError(
            f"small-channel mode needs a pipeline that selects storage formats "
            f"({', '.join(SMALL_CHANNEL_PASSES)}); '{pipeline}' has none"
        )
    return ",".join(
        str(
            dataclasses.replace(s, parameters={**s.parameters, "small-channel": (True,)})
            if s.name in SMALL_CHANNEL_PASSES
            else s
        )
        for s in specs
    )
