"""``tilegraph.Session``: a model compiled for the shapes it is called with, behind guards.

A Session holds an ONNX model and compiles it on demand, the way GE handles dynamic shapes
(DESIGN.md section 7):

1. each call binds the shape symbols from its inputs' shapes (every non-static input axis
   is a source symbol, recorded with its input and axis in the compiled module);
2. the **assert guards** are checked first: a violation means the inputs are invalid for
   the model — :class:`GuardViolation`, one message naming the guard, the values, the op
   and the input axes — and nothing is recompiled;
3. the cached artifacts are tried, most recently used first: one whose **expect guards**
   all hold is reused (a cache hit);
4. otherwise the model is compiled anew with the current shapes as hints
   (``load_onnx(..., shape_env=ShapeEnv(dynamic))``, then ``pipeline`` with the env active,
   so passes record guards too), and the reason is logged: the first call, or which expect
   guard of the most recent artifact failed, with the values.

``dynamic`` is the :class:`~tilegraph.symbolic.ShapeEnv` mode: ``"dynamic"`` (every unknown
dim a symbol; sizes 0 and 1 specialised unless ``specialize_zero_one=False``), ``"duck"``
(inputs of equal size share a symbol) or ``"static"`` (one artifact per distinct shape).

Compiling binds what the call's inputs decide (:mod:`tilegraph.runtime.binding`): an If
that branches on an input's shape makes the import static, one that branches on a small
input's value (Silero VAD's ``sr``) specialises the artifact on it with a value guard
(``sr == 16000``) that later calls check like an expect guard; the log line says why.

``target="reference"`` runs the graph-level module with the reference interpreter for every
shape its guards admit. ``target="tiles"`` binds before any layout decision: once per
distinct shape (``stats.tilings``) the model is imported again with every input dim its size
(shape computations fold, Ifs on shapes are inlined), optimised with ``pipeline`` and
lowered to kernels.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.guards import bind_symbols, module_guards, symbol_origins
from tilegraph.runtime.binding import ObservedShape, ValueGuard, import_bound
from tilegraph.symbolic.env import MODES, Mode
from tilegraph.symbolic.guards import Guard, GuardFailures, check_guards
from tilegraph.symbolic.inference import shape_env

if TYPE_CHECKING:
    from tilegraph.passes.apply_precision import KeepDtype
    from tilegraph.runtime.compiled import CompiledModel

LOG = logging.getLogger("tilegraph.session")


class GuardViolation(ValueError):
    """The inputs break a hard shape constraint of the model (an assert guard)."""


class SessionError(ValueError):
    """A Session cannot be made (bad arguments) or fed (bad inputs)."""


@dataclass(frozen=True)
class Recompile:
    """One compilation: the call that needed it, the shapes, and why."""

    call: int
    shapes: dict[str, tuple[int, ...]]
    reason: str


@dataclass
class SessionStats:
    calls: int = 0
    hits: int = 0
    compiles: int = 0
    evictions: int = 0
    tilings: int = 0
    """Tile-level compilations (``target="tiles"``: one per distinct concrete shape, and
    per distinct data-dependent sizes)."""
    recompiles: list[Recompile] = field(default_factory=list)
    retilings: list[Recompile] = field(default_factory=list)
    """Tilings of a model with data-dependent sizes, with the sizes observed."""

    def summary(self) -> str:
        return (
            f"{self.calls} calls: {self.compiles} compiles, {self.hits} cache hits, "
            f"{self.evictions} evictions" + (f", {self.tilings} tilings" if self.tilings else "")
        )


@dataclass(frozen=True)
class Tiled:
    """A tiled compilation, and the data-dependent sizes it was compiled for (none when
    the input shapes fix every size)."""

    compiled: CompiledModel
    observed: tuple[ObservedShape, ...] = ()


@dataclass
class Artifact:
    """One compiled module and what it was compiled under."""

    module: ModuleOp
    guards: list[Guard]
    origins: dict[str, tuple[str, int]]
    sources: dict[str, str]
    value_guards: list[ValueGuard] = field(default_factory=list)
    """Inputs the artifact was specialised on by value."""

    def failures(self, shapes: Mapping[str, tuple[int, ...]]) -> GuardFailures:
        return check_guards(self.guards, bind_symbols(self.origins, shapes), self.sources)

    def value_failure(self, inputs: Mapping[str, np.ndarray]) -> str | None:
        """Why the artifact does not fit the inputs' values (the first broken value
        guard), or None."""
        for guard in self.value_guards:
            if guard.input in inputs and not guard.holds(inputs[guard.input]):
                return guard.failure(inputs[guard.input])
        return None


class Session:
    """An ONNX model compiled per input-shape family; call it like a function."""

    def __init__(
        self,
        model: str | Path | bytes | onnx.ModelProto,
        pipeline: str = "O2",
        dynamic: str = "dynamic",
        *,
        target: str = "reference",
        platform: str = "",
        precision: str = "",
        keep_dtype: KeepDtype = None,
        executor: str = "fast",
        verify_sync: bool = True,
        tune_db: str | Path | None = None,
        specialize_zero_one: bool = True,
        cache_size: int = 8,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if dynamic not in MODES:
            raise SessionError(f"unknown dynamic mode {dynamic!r}; choose from {', '.join(MODES)}")
        if target not in ("reference", "tiles"):
            raise SessionError(f"unknown target {target!r}; choose from reference, tiles")
        if cache_size < 1:
            raise SessionError("cache_size must be at least 1")
        if tune_db is not None and not Path(tune_db).is_file():
            raise SessionError(f"tuning database {tune_db}: no such file")
        self.model = model
        self.pipeline = pipeline
        self.mode: Mode = cast(Mode, dynamic)
        self.target = target
        self.platform = platform
        self.precision = precision
        self.keep_dtype = keep_dtype
        self.executor = executor
        self.verify_sync = verify_sync
        self.tune_db = tune_db
        """A tuning database every tiled compile applies (``compile(tune_db=...)``)."""
        self.specialize_zero_one = specialize_zero_one
        self.cache_size = cache_size
        self.stats = SessionStats()
        self._log = log or LOG.info
        self._cache: OrderedDict[int, Artifact] = OrderedDict()
        self._next_id = 0
        self.input_names, self.output_names = model_io_names(model)
        self.latest_tiled: CompiledModel | None = None
        """The tiled model the latest call ran (``target="tiles"``)."""
        self._tiled: dict[tuple[object, ...], list[Tiled]] = {}
        """The tiled forms per input shapes and value guards (whichever artifact admitted
        the call: the tiles are bound to the shapes, not to the artifact's symbols): one,
        or one per data-dependent sizes seen."""

    # ---- calling ------------------------------------------------------------------------
    def __call__(self, *args: np.ndarray, **kwargs: np.ndarray) -> list[np.ndarray]:
        if args and kwargs:
            raise SessionError("pass inputs either by position or by name, not both")
        return self.run(kwargs if kwargs else list(args))

    def run(self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]) -> list[np.ndarray]:
        named = self._named(inputs)
        shapes = {name: tuple(int(d) for d in a.shape) for name, a in named.items()}
        self.stats.calls += 1
        artifact = self.artifact_for(shapes, named)
        if self.target == "reference":
            from tilegraph.runtime.reference import run_reference

            return run_reference(artifact.module, named)
        return self._run_tiled(artifact, named)

    def artifact_for(
        self, shapes: Mapping[str, tuple[int, ...]], inputs: Mapping[str, np.ndarray]
    ) -> Artifact:
        """The cached artifact whose guards hold for ``shapes`` and whose value guards hold
        for ``inputs``, or a new one compiled for them."""
        newest: str | None = None
        for key in reversed(self._cache):
            artifact = self._cache[key]
            failures = artifact.failures(shapes)
            if failures.asserts:
                raise GuardViolation(failures.asserts[0].message)
            broken = failures.expects[0].message if failures else artifact.value_failure(inputs)
            if broken is None:
                self._cache.move_to_end(key)
                self.stats.hits += 1
                return artifact
            if newest is None:
                newest = broken
        return self._compile(inputs, "first call" if newest is None else newest)

    # ---- compiling ----------------------------------------------------------------------
    def _compile(self, inputs: Mapping[str, np.ndarray], reason: str) -> Artifact:
        from tilegraph.passes.apply_precision import precision_prefix
        from tilegraph.passes.context import make_context
        from tilegraph.passes.pipelines import run_pipeline
        from tilegraph.target import pin_target, target_of

        shapes = _shapes_of(inputs)
        bound = import_bound(
            self._source(), inputs, mode=self.mode, specialize_zero_one=self.specialize_zero_one
        )
        module = bound.module
        # the tiles are optimised per shape (_tile): here the guards of the import suffice
        if self.target == "reference":
            pin_target(module, "Session", self.platform, self.precision)
            prefix = precision_prefix(target_of(module).precision, self.keep_dtype)
            pipeline = ",".join(p for p in (prefix, self.pipeline) if p)
            if pipeline:
                with shape_env(bound.env):
                    run_pipeline(pipeline, make_context(), module)
        artifact = Artifact(
            module,
            module_guards(module),
            symbol_origins(module),
            bound.env.sources(),
            bound.value_guards,
        )
        self.stats.compiles += 1
        if bound.reasons:
            reason += "; " + "; ".join(bound.reasons)
        record = Recompile(self.stats.calls, dict(shapes), reason)
        self.stats.recompiles.append(record)
        self._log(f"compile #{self.stats.compiles} for {_shapes_text(shapes)}: {reason}")
        self._cache[self._next_id] = artifact
        self._next_id += 1
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
            self.stats.evictions += 1
        return artifact

    def _run_tiled(self, artifact: Artifact, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        """Run the artifact's tiled form for these inputs' shapes: the newest one first; a
        form compiled for data-dependent sizes that these inputs change (ShapeChanged) gives
        way to the next, and to a new tiling when none fits."""
        from tilegraph.runtime.interpreter import ShapeChanged

        shapes = _shapes_of(inputs)
        values = tuple((g.input, g.value.tobytes()) for g in artifact.value_guards)
        forms = self._tiled.setdefault((*(shapes[n] for n in sorted(shapes)), values), [])
        changed: ShapeChanged | None = None
        for index in range(len(forms) - 1, -1, -1):
            form = forms[index]
            try:
                outputs = form.compiled(**inputs)
            except ShapeChanged as e:
                if not form.observed:
                    raise
                changed = changed or e
                continue
            forms.append(forms.pop(index))
            self.latest_tiled = form.compiled
            return outputs
        # the tiles may compute a data-dependent size other than the reference observed
        # for these very inputs (a count that rounding tips); then the sizes after it are
        # observed again from the data the tiles produced, once per such value
        produced: dict[str, np.ndarray] = {}
        while True:
            form = self._tile(artifact, inputs, changed, produced)
            try:
                outputs = form.compiled(**inputs)
            except ShapeChanged as e:
                if not form.observed or e.produced is None or e.value in produced:
                    raise
                produced[e.value] = e.produced
                changed = e
                continue
            forms.append(form)
            self.latest_tiled = form.compiled
            return outputs

    def _tile(
        self,
        artifact: Artifact,
        inputs: Mapping[str, np.ndarray],
        changed: Exception | None,
        produced: Mapping[str, np.ndarray] | None = None,
    ) -> Tiled:
        """The artifact tiled for these inputs: imported again with every input dim bound
        (and the artifact's value guards), data-dependent sizes observed on the inputs
        (continuing from the data a tiled run ``produced`` for some of them), optimised,
        then lowered."""
        from tilegraph.runtime.binding import observe_unknown_dims
        from tilegraph.runtime.compiled import compile as compile_model

        values = {g.input: (g.value, g.node) for g in artifact.value_guards}
        bound = import_bound(self._source(), inputs, static=True, values=values)
        observed = tuple(observe_unknown_dims(bound.module, inputs, produced))
        with shape_env(bound.env):
            compiled = compile_model(
                bound.module,
                pipeline=self.pipeline,
                target="tiles",
                platform=self.platform,
                precision=self.precision,
                keep_dtype=self.keep_dtype,
                executor=self.executor,
                verify_sync=self.verify_sync,
                tune_db=self.tune_db,
            )
        self.stats.tilings += 1
        if observed:
            shapes = _shapes_of(inputs)
            reason = f"{changed}: recompile" if changed else "data-dependent sizes"
            if produced:
                reason += f" from the tiles' data for {', '.join(produced)}"
            reason += "; " + ", ".join(str(o) for o in observed if o.produced)
            self.stats.retilings.append(Recompile(self.stats.calls, shapes, reason))
            self._log(f"tiling #{self.stats.tilings} for {_shapes_text(shapes)}: {reason}")
        return Tiled(compiled, observed)

    def _source(self) -> str | bytes | onnx.ModelProto:
        return str(self.model) if isinstance(self.model, Path) else self.model

    # ---- inputs -------------------------------------------------------------------------
    def _named(
        self, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
    ) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            unknown = sorted(set(inputs) - set(self.input_names))
            missing = [n for n in self.input_names if n not in inputs]
            if unknown or missing:
                raise SessionError(
                    f"the model takes inputs {self.input_names}"
                    + (f"; unknown {unknown}" if unknown else "")
                    + (f"; missing {missing}" if missing else "")
                )
            return {n: np.asarray(inputs[n]) for n in self.input_names}
        if len(inputs) != len(self.input_names):
            raise SessionError(
                f"expected {len(self.input_names)} input(s) {self.input_names}, got {len(inputs)}"
            )
        return {n: np.asarray(a) for n, a in zip(self.input_names, inputs, strict=True)}

    @property
    def artifacts(self) -> list[Artifact]:
        """The cached artifacts, least recently used first."""
        return list(self._cache.values())


def model_io_names(model: str | Path | bytes | onnx.ModelProto) -> tuple[list[str], list[str]]:
    """An ONNX model's input names (initializers apart) and output names."""
    proto = model
    if isinstance(model, str | Path):
        proto = onnx.load(str(model), load_external_data=False)
    elif isinstance(model, bytes):
        proto = onnx.load_from_string(model)
    assert isinstance(proto, onnx.ModelProto)
    inits = {t.name for t in proto.graph.initializer}
    inputs = [vi.name for vi in proto.graph.input if vi.name not in inits]
    return inputs, [o.name for o in proto.graph.output]


def _shapes_of(inputs: Mapping[str, np.ndarray]) -> dict[str, tuple[int, ...]]:
    return {name: tuple(int(d) for d in np.shape(a)) for name, a in inputs.items()}


def _shapes_text(shapes: Mapping[str, tuple[int, ...]]) -> str:
    return ", ".join(f"{n}{list(s)}" for n, s in shapes.items())
