"""``tilegraph.compile(model, ...) -> CompiledModel``: the Python entry point.

::

    import tilegraph
    model = tilegraph.compile("resnet50.onnx", pipeline="O2", target="tiles")
    (probabilities,) = model(data=image)          # or model(image), positionally
    model.kernels                                 # what runs where, and why

``target="tiles"`` lowers the optimised graph to kernels and tiled loops for ``platform`` (a
hardware preset; default: the module's ``tilegraph.target``, else the default preset — set
on the module before the pipeline runs, so O2's format engine and fusion use it too)
(``lower-graph-to-kernels``, ``tile-kernels``), prepares them for the NPU
(:data:`~tilegraph.passes.pipelines.NPU_PASSES`: ping-pong buffers, on-chip addresses,
blocks over the cores, flags between the pipes, the GM workspace), proves the flags
sufficient (``verify-sync``; ``verify_sync=False`` skips it) and runs them with
``executor`` ("fast": compiled to Python, or "interpret": xDSL's interpreter, every op);
``"reference"`` runs the graph level with the reference interpreter. ``precision`` is a
precision value (``docs/precision.md``): ``"origin"`` (the model's types), ``"fp16"`` or
``"bf16"`` (the cube's inputs rounded, fp32 accumulation), ATC's ``--precision_mode``
values (``force_fp16``, ``allow_mix_precision``, ...; ``keep_dtype`` keeps ops in float32).

An ONNX model whose input dims are dynamic, or that branches on its inputs' shapes or values,
cannot be tiled before its inputs are seen: for ``target="tiles"`` it compiles when called,
bound to each call's inputs, through a :class:`~tilegraph.runtime.session.Session` kept in
the model (``model.session``: its compiles and their reasons); ``module`` and ``kernels``
are those of the latest call's shapes.

``hooks`` (a :class:`CompileHooks`) lets a caller watch the stages without repeating them:
``tilegraph-run`` times each stage, shows its progress, collects pass statistics, checks
every pass against the reference interpreter (``--check-each-pass``) and reports the
optimised graph through them. ``reference_fallback=True`` runs a module that cannot be
lowered as a whole (symbolic shapes) on the reference interpreter instead of raising;
:attr:`CompiledModel.not_lowered` says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from tilegraph.cost_model.kernel_report import KernelInfo, kernel_report
from tilegraph.target import PRECISIONS, TargetError, pin_target, target_of

if TYPE_CHECKING:
    from tilegraph.passes.apply_precision import KeepDtype
    from tilegraph.runtime.session import Session
    from tilegraph.runtime.tile_interpreter import TileCounters

TARGETS = ("tiles", "reference")


class CompileError(ValueError):
    """The model cannot be compiled as asked (the message says why)."""


class NotTiledYet(RuntimeError):
    """What is asked of a model compiled per call's input shapes is known only after its
    first call (its tiles depend on the shapes the call binds)."""


@dataclass
class CompiledModel:
    """A compiled model: call it with inputs (by name or position), get the outputs."""

    module: ModuleOp
    target: str
    executor: str
    input_names: list[str]
    output_names: list[str]
    kernels: list[KernelInfo] = field(default_factory=list)
    session: Session | None = None
    """For a model bound to each call's inputs: the Session that compiles it per shape."""
    not_lowered: str | None = None
    """Why a ``target="tiles"`` model runs on the reference interpreter instead (only with
    ``compile(..., reference_fallback=True)``)."""
    _compiled: Any = None

    def __call__(self, *args: np.ndarray, **kwargs: np.ndarray) -> list[np.ndarray]:
        if args and kwargs:
            raise TypeError("pass inputs either by position or by name, not both")
        return self.run(kwargs if kwargs else args)

    def run(
        self,
        inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
        *,
        counters: TileCounters | None = None,
    ) -> list[np.ndarray]:
        """The outputs for ``inputs`` (by name or position); ``counters`` observe the tiled
        kernels as they run (tilegraph-run's progress display)."""
        if self.session is not None:
            outputs = self.session.run(inputs)
            latest = self.session.latest_tiled
            if latest is not None:
                self.module, self.kernels = latest.module, latest.kernels
            return outputs
        if self.target == "reference":
            from tilegraph.runtime.reference import run_reference

            return run_reference(self.module, inputs)
        from tilegraph.runtime.tiles import run_tiles

        return run_tiles(self.module, inputs, executor=self.executor, counters=counters)

    @property
    def host_ops(self) -> list[dict[str, str]]:
        """The ops that run on the host (GE's AI CPU), with the reason: of the latest call's
        tiles for a model compiled per call's input shapes, which raises
        :class:`NotTiledYet` before its first call (an empty list would read as "none")."""
        if self.session is not None and self.session.latest_tiled is None:
            raise NotTiledYet(
                "the host ops of a model compiled per call's input shapes are known after its "
                "first call (run it, or compile it with every input dim given)"
            )
        return [
            {"op": op, "reason": k.reason or ""}
            for k in self.kernels
            if k.unit == "host"
            for op in k.ops
            if op.startswith("graph.")
        ]


def load_model(model: str | Path | onnx.ModelProto | ModuleOp) -> ModuleOp:
    """The model as a new module: a copy of a module, an imported ONNX model (file or
    proto), a parsed ``.mlir`` file (the loader of :func:`compile` and of the tools)."""
    if isinstance(model, ModuleOp):
        return model.clone()
    from tilegraph.frontend import load_onnx

    if isinstance(model, onnx.ModelProto):
        return load_onnx(model)
    path = str(model)
    if path.endswith(".mlir"):
        from tilegraph.passes.context import parse_mlir_file

        return parse_mlir_file(path)
    return load_onnx(path)


def _is_mlir(model: str | Path | onnx.ModelProto) -> bool:
    return isinstance(model, str | Path) and str(model).endswith(".mlir")


def _bound_on_call(
    model: str | Path | onnx.ModelProto,
    pipeline: str,
    platform: str,
    precision: str,
    executor: str,
    verify_sync: bool,
    keep_dtype: KeepDtype = None,
    tune_db: str | Path | None = None,
) -> CompiledModel | None:
    """A model compiled per call's inputs (see the module docstring) when its inputs are
    dynamic or it branches on them; None for a model that can be tiled as it is."""
    from tilegraph.dialects.entry import entry_function, input_names, output_names
    from tilegraph.frontend.onnx_errors import ValueDependentError
    from tilegraph.runtime.binding import needs_binding
    from tilegraph.runtime.session import Session, model_io_names

    try:
        module = load_model(model)
    except ValueDependentError:
        module = None
    if module is not None:
        if not needs_binding(module):
            return None
        fn = entry_function(module)
        names_in, names_out = input_names(fn), output_names(fn)
    else:
        names_in, names_out = model_io_names(model)
    source = model if isinstance(model, onnx.ModelProto) else str(model)
    session = Session(
        source,
        pipeline,
        target="tiles",
        platform=platform,
        precision=precision,
        keep_dtype=keep_dtype,
        executor=executor,
        verify_sync=verify_sync,
        tune_db=tune_db,
    )
    placeholder = module or ModuleOp([])
    return CompiledModel(placeholder, "tiles", executor, names_in, names_out, session=session)


class CompileHooks:
    """What a caller of :func:`compile` sees of its stages; every method's default does
    nothing. ``tilegraph-run`` subclasses it to time, show, check and report the stages
    without running them itself."""

    def stage(self, name: str, module: ModuleOp) -> AbstractContextManager[object]:
        """Wraps one stage as it runs on ``module``: ``"passes"`` (the pipeline, only when
        there is one) and ``"lowering"`` (the lowering pipeline, ``target="tiles"``). An
        exception the stage raises passes through it (it may raise another instead)."""
        return nullcontext()

    def optimised(self, module: ModuleOp) -> None:
        """The module after the pipeline, before lowering (the optimised graph)."""


def compile(  # noqa: A001 - the public name the design gives it
    model: str | Path | onnx.ModelProto | ModuleOp,
    pipeline: str = "O2",
    target: str = "tiles",
    platform: str = "",
    precision: str = "",
    executor: str = "fast",
    entry: str | None = None,
    *,
    hooks: CompileHooks | None = None,
    reference_fallback: bool = False,
    verify_sync: bool = True,
    small_channel: bool = False,
    keep_dtype: KeepDtype = None,
    tune_db: str | Path | None = None,
) -> CompiledModel:
    """Import (an ONNX file or model, an .mlir file, or a module), optimise with
    ``pipeline`` and prepare ``target``; see the module docstring. ``entry`` names the
    function to run in a module of several (default: the one no other function calls).
    ``hooks`` watch the stages; ``reference_fallback``: a module that cannot be lowered as
    a whole runs on the reference interpreter (:attr:`CompiledModel.not_lowered`) instead
    of raising :class:`CompileError`. ``verify_sync=False`` skips the last pass of the
    lowering, ``verify-sync`` (the pipe-queue checker on every kernel). ``small_channel``
    is ATC's ``--enable_small_channel=1``: the pipeline's storage-format selection gives
    convolutions of at most 4 input channels the C04 layouts (the pipeline must select
    storage formats: O2, ``format`` or ``select-storage-format``). ``keep_dtype`` is ATC's
    ``--keep_dtype``: a keep-dtype file or its entries (node names, ``OpType::T``), ops that
    keep the model's float32 under ``force_fp16`` / ``allow_mix_precision*``; those
    precisions (and a keep-list) start the pipeline with ``apply-precision``
    (``docs/precision.md``). ``tune_db``: a tuning
    database (``tilegraph-tune``; it must exist): its best points are written on the kernels
    it knows before they are tiled (``apply-tuning``), and when ``pipeline`` is ``"O2"``
    the graph-level choice it holds for this model replaces it (see
    :mod:`tilegraph.lowering.tuning_db`)."""
    from tilegraph.dialects.entry import entry_function, input_names, output_names, set_entry
    from tilegraph.passes.apply_precision import precision_prefix
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline, with_small_channel
    from tilegraph.runtime.tiles import EXECUTORS

    if small_channel:
        try:
            pipeline = with_small_channel(pipeline)
        except ValueError as e:
            raise CompileError(str(e)) from None

    hooks = hooks or CompileHooks()
    if target not in TARGETS:
        raise CompileError(f"unknown target {target!r}; choose from {', '.join(TARGETS)}")
    if precision and precision not in PRECISIONS:
        raise CompileError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    if executor not in EXECUTORS:
        raise CompileError(f"unknown executor {executor!r}; choose from {', '.join(EXECUTORS)}")
    if target == "tiles" and not isinstance(model, ModuleOp) and not _is_mlir(model):
        deferred = _bound_on_call(
            model,
            pipeline,
            platform,
            precision,
            executor,
            verify_sync,
            keep_dtype=keep_dtype,
            tune_db=tune_db,
        )
        if deferred is not None:
            return deferred
    module = load_model(model)
    try:  # the target, chosen once: every pass below reads it from the module
        by = f"compile(platform={platform!r})" if platform else "compile()"
        pin_target(module, by, platform, precision or target_of(module).precision)
    except TargetError as e:
        raise CompileError(str(e)) from None
    if entry is not None:
        set_entry(module, entry)
    if tune_db is not None:
        pipeline = _tuned_pipeline(module, pipeline, tune_db)
    prefix = precision_prefix(target_of(module).precision, keep_dtype)
    pipeline = ",".join(p for p in (prefix, pipeline) if p)
    ctx = make_context()
    if pipeline:
        with hooks.stage("passes", module):
            run_pipeline(pipeline, ctx, module)
    hooks.optimised(module)
    fn = entry_function(module)
    names_in, names_out = input_names(fn), output_names(fn)
    kernels: list[KernelInfo] = []
    if target == "tiles":
        from tilegraph.lowering.conversion.graph_to_kernels import LoweringError

        try:
            with hooks.stage("lowering", module):
                lowering = lowering_pipeline(
                    verify_sync=verify_sync, tune_db=str(tune_db) if tune_db else ""
                )
                run_pipeline(lowering, ctx, module)
        except LoweringError as e:
            if not reference_fallback:
                raise CompileError(f"cannot lower to tiles: {e}") from None
            return CompiledModel(
                module, "reference", executor, names_in, names_out, not_lowered=str(e)
            )
        kernels = kernel_report(module)
    return CompiledModel(module, target, executor, names_in, names_out, kernels)


def _tuned_pipeline(module: ModuleOp, pipeline: str, tune_db: str | Path) -> str:
    """``pipeline``, or for ``"O2"`` the graph-level choice the database holds for this
    model; a missing or unreadable database is a :class:`CompileError`."""
    from tilegraph.lowering.tuning_db import TuningDatabase, TuningDatabaseError, graph_key

    try:
        with TuningDatabase(tune_db, create=False) as db:
            if pipeline != "O2":
                return pipeline
            target = target_of(module)
            return db.best_graph(graph_key(str(module), target.hw, target.precision)) or pipeline
    except TuningDatabaseError as e:
        raise CompileError(str(e)) from None
