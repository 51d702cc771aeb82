"""tilegraph-run's input shapes: ``--shape``, ``--dim``, ``--sweep``, ``--dynamic``.

A model with dynamic dims runs at the shapes the user asks for:

- ``--shape x=1,3,48,320`` (repeatable) gives an input's shape for random data; the same
  input named twice makes two *shape sets*, run one after the other through one
  :class:`~tilegraph.runtime.session.Session`;
- ``--sweep x:0=1..64`` runs a set per size of one axis (the other axes from ``--shape`` or
  the model);
- ``--dim NAME=N`` sizes a named symbol (an ONNX dim_param);
- a dynamic axis nobody sized is 1 on axis 0 (a batch), else an error naming the input and
  axis (a 1-pixel-high image fails deep inside a pooling op, not here);
- ``--dynamic dynamic|duck|static`` is the ShapeEnv mode of the compilations.

With several sets the report lists, per run, the shapes, whether it compiled or reused an
artifact, and why it recompiled (the failed guard with its values), as a table
(:mod:`.tables`). On a terminal the sweep shows its progress on stderr, run by run and pass
by pass while a run compiles (:mod:`.progress`; not with ``--quiet``).
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import dim_to_text, is_symbolic
from tilegraph.frontend.onnx_symbols import ssa_name
from tilegraph.progress import Task, task
from tilegraph.symbolic.env import MODES
from tilegraph.tools.random_inputs import random_inputs

if TYPE_CHECKING:
    from tilegraph.runtime.session import Session

Shapes = dict[str, tuple[int, ...]]


class ShapeArgumentError(ValueError):
    """A malformed or inconsistent --shape / --sweep / --dim (message complete)."""


def add_shape_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument(
        "--shape",
        action="append",
        default=[],
        metavar="NAME=D0,D1,...",
        help="shape of a random input (repeatable; an input given twice runs twice)",
    )
    ap.add_argument(
        "--sweep",
        metavar="NAME:AXIS=LO..HI",
        help="run once per size LO..HI of one input axis, reporting compiles and cache hits",
    )
    ap.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="SYMBOL=N",
        help="size of a named symbolic dim for random inputs",
    )
    ap.add_argument(
        "--dynamic",
        choices=MODES,
        default="dynamic",
        help="how dynamic dims are compiled: symbols, duck-shared symbols, or static shapes",
    )


def _parse_shapes(items: Sequence[str]) -> dict[str, list[tuple[int, ...]]]:
    shapes: dict[str, list[tuple[int, ...]]] = {}
    for item in items:
        name, sep, dims = item.partition("=")
        parts = [p.strip() for p in dims.split(",")] if dims.strip() else []
        if not sep or not name or not all(p.isdigit() for p in parts):
            raise ShapeArgumentError(f"--shape expects NAME=D0,D1,... (sizes), got '{item}'")
        shapes.setdefault(name, []).append(tuple(int(p) for p in parts))
    return shapes


_SWEEP = re.compile(r"^(?P<name>[^:]+):(?P<axis>\d+)=(?P<lo>\d+)\.\.(?P<hi>\d+)$")


def _parse_sweep(item: str) -> tuple[str, int, range]:
    m = _SWEEP.match(item.strip())
    if m is None:
        raise ShapeArgumentError(f"--sweep expects NAME:AXIS=LO..HI, got '{item}'")
    lo, hi = int(m["lo"]), int(m["hi"])
    if lo > hi:
        raise ShapeArgumentError(f"--sweep {item}: {lo} > {hi}")
    return m["name"], int(m["axis"]), range(lo, hi + 1)


def _parse_dims(items: Sequence[str]) -> dict[str, int]:
    dims: dict[str, int] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not value.isdigit():
            raise ShapeArgumentError(f"--dim expects SYMBOL=N, got '{item}'")
        dims[name] = int(value)
    return dims


def input_shapes(
    module: ModuleOp,
    dims: Mapping[str, int],
    given: Mapping[str, tuple[int, ...]],
    trusted: set[str] | frozenset[str] = frozenset(),
    every_dim: bool = False,
) -> Shapes:
    """Each input's shape: as given (checked against the model unless ``trusted``), else
    its static dims with symbols sized by ``dims``, unsized dynamic axes 1 on axis 0 and an
    error elsewhere (``every_dim``: an error on axis 0 too — an estimate at an invented
    batch would mislead)."""
    fn = entry_function(module)
    names = input_names(fn)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ShapeArgumentError(f"unknown input(s) {unknown}; the model takes {names}")
    dims = _input_dims(fn.function_type.inputs.data, dims)
    out: Shapes = {}
    for name, t in zip(names, fn.function_type.inputs.data, strict=True):
        assert isinstance(t, TensorType)
        if name in given:
            out[name] = given[name] if name in trusted else _checked(name, t, given[name])
            continue
        shape = []
        for axis, d in enumerate(t.origin_shape):
            if isinstance(d, int) and d >= 0:
                shape.append(d)
            elif is_symbolic(d) and str(d) in dims:
                shape.append(dims[str(d)])
            elif axis == 0 and not every_dim:
                shape.append(1)
            else:
                hint = f" or --dim {d}=N" if is_symbolic(d) else ""
                raise ShapeArgumentError(
                    f"input '{name}' axis {axis} is dynamic ({dim_to_text(d)}): give its size "
                    f"with --shape {name}=...{hint}"
                )
        out[name] = tuple(shape)
    return out


def _input_dims(types: Sequence[Attribute], dims: Mapping[str, int]) -> dict[str, int]:
    """``--dim`` sizes by the symbols of the inputs' dims. A symbol may be named as the ONNX
    file spells its dim_param (``DynamicDimension.0``, imported as ``DynamicDimension_0``);
    a name that is no input dim is an error listing the ones there are (it was ignored, and
    the axis silently got its default)."""
    symbols = sorted(
        {
            str(free)
            for t in types
            if isinstance(t, TensorType)
            for d in t.origin_shape
            if is_symbolic(d)
            for free in cast(sympy.Expr, d).free_symbols
        }
    )
    sized: dict[str, int] = {}
    for name, size in dims.items():
        symbol = name if name in symbols else ssa_name(name)
        if symbol not in symbols:
            known = ", ".join(symbols) if symbols else "none (every input dim is static)"
            raise ShapeArgumentError(
                f"--dim {name}: no input dim is named '{name}'; the inputs' dims: {known}"
            )
        sized[symbol] = size
    return sized


def _checked(name: str, t: TensorType, shape: tuple[int, ...]) -> tuple[int, ...]:
    if len(shape) != t.rank:
        raise ShapeArgumentError(f"--shape {name}: rank {len(shape)}, the model says {t.rank}")
    for axis, (got, want) in enumerate(zip(shape, t.origin_shape, strict=True)):
        if isinstance(want, int) and want >= 0 and got != want:
            raise ShapeArgumentError(f"--shape {name}: axis {axis} is {got}, the model says {want}")
    return shape


def shape_sets(
    args: argparse.Namespace,
    module: ModuleOp,
    known: Mapping[str, tuple[int, ...]] | None = None,
    every_dim: bool = False,
) -> list[Shapes]:
    """The shape sets to run: one per repeated --shape or --sweep size (one by default);
    ``known`` are the shapes of inputs given as arrays; ``every_dim``: every dynamic dim
    must be sized (:func:`input_shapes`)."""
    shapes = _parse_shapes(args.shape)
    dims = _parse_dims(args.dim)
    first = {name: options[0] for name, options in shapes.items()}
    if known or every_dim:  # arrays the user gave: their shapes as they are (the run checks them)
        given = {**first, **(known or {})}
        return [input_shapes(module, dims, given, set(known or ()), every_dim)]
    if args.sweep:
        name, axis, sizes = _parse_sweep(args.sweep)
        base = input_shapes(module, dims, first)
        if name not in base:
            raise ShapeArgumentError(f"--sweep: no input '{name}'; the model takes {list(base)}")
        if axis >= len(base[name]):
            raise ShapeArgumentError(f"--sweep: input '{name}' has rank {len(base[name])}")
        sets = []
        for size in sizes:
            shape = list(base[name])
            shape[axis] = size
            sets.append({**base, name: _checked(name, _input_type(module, name), tuple(shape))})
        return sets
    count = max((len(options) for options in shapes.values()), default=1)
    return [
        input_shapes(module, dims, {n: o[min(i, len(o) - 1)] for n, o in shapes.items()})
        for i in range(count)
    ]


def _input_type(module: ModuleOp, name: str) -> TensorType:
    fn = entry_function(module)
    t = fn.function_type.inputs.data[input_names(fn).index(name)]
    assert isinstance(t, TensorType)
    return t


def run_shape_sets(
    args: argparse.Namespace, module: ModuleOp, sets: list[Shapes]
) -> dict[str, Any]:
    """Run every shape set through one Session; the report of compiles and cache hits."""
    from tilegraph.runtime.session import Session

    session = Session(
        args.model,
        args.pipeline or "O2",
        args.dynamic,
        target="reference" if args.reference else "tiles",
        platform=args.platform,
        precision=args.precision,
        keep_dtype=args.keep_dtype,
        executor=args.executor,
        tune_db=args.tune_db,
        log=lambda _: None,
    )
    from tilegraph.passes.pipelines import observing_passes

    runs = []
    with task("shape sets", total=len(sets)) as progress:
        for i, shapes in enumerate(sets):
            label = f"run {i + 1}/{len(sets)}: {_shapes_text(shapes)}"
            progress.relabel(label)
            with observing_passes(_relabel_per_pass(progress, label)):
                runs.append(_run_one(args, module, session, i, shapes))
            progress.advance()
    stats = session.stats
    return {
        "model": args.model,
        "pipeline": args.pipeline or "O2",
        "dynamic": args.dynamic,
        "target": session.target,
        "runs": runs,
        "compiles": stats.compiles,
        "cache_hits": stats.hits,
        "tilings": stats.tilings,
        "compare_ok": all(r.get("compare_ok", True) for r in runs),
    }


def _shapes_text(shapes: Shapes) -> str:
    return ", ".join(f"{n}{list(s)}" for n, s in shapes.items())


def _relabel_per_pass(progress: Task, label: str) -> Callable[[Any, ModuleOp], None]:
    """A pass observer naming, in ``progress``'s label, the pass a compile has reached."""
    count = 0

    def observe(done: Any, module: ModuleOp) -> None:
        nonlocal count
        count += 1
        progress.relabel(f"{label}: compiling, pass {count}, {getattr(done, 'name', '?')}")

    return observe


def _run_one(
    args: argparse.Namespace, module: ModuleOp, session: Session, i: int, shapes: Shapes
) -> dict[str, Any]:
    """Run shape set ``i`` through the session: the report's row for it."""
    inputs = random_inputs(module, args.seed + i, shapes, {})
    compiles = session.stats.compiles
    t0 = time.perf_counter()
    outputs = session.run(inputs)
    row: dict[str, Any] = {
        "shapes": {n: list(s) for n, s in shapes.items()},
        "compiled": session.stats.compiles > compiles,
        "ms": round((time.perf_counter() - t0) * 1e3, 3),
    }
    if row["compiled"]:
        row["reason"] = session.stats.recompiles[-1].reason
    if args.compare:
        from tilegraph.frontend.onnxruntime_oracle import compare_with_onnxruntime
        from tilegraph.target import precision_mode, target_of

        names = [f"output {k}" for k in range(len(outputs))]
        precision = args.precision or target_of(module).precision
        rounding = precision_mode(precision).rounding_type(tiles=session.target == "tiles")
        rows = compare_with_onnxruntime(
            args.model, inputs, names, outputs, args.rtol, args.atol, rounding
        )
        row["compare_ok"] = all(r["ok"] for r in rows)
    return row


def print_shape_sets(report: dict[str, Any]) -> None:
    """Print a shape-set report: one table row per run (shapes, compile or cache hit,
    time, the onnxruntime verdict with --compare, why it compiled), then the totals."""
    from tilegraph.tools.tables import Col, print_table

    print(f"model: {report['model']}")
    print(
        f"pipeline: {report['pipeline']}, dynamic: {report['dynamic']}, target: {report['target']}"
    )
    compared = any("compare_ok" in row for row in report["runs"])
    rows = []
    for k, row in enumerate(report["runs"]):
        shapes = ", ".join(f"{n}{s}" for n, s in row["shapes"].items())
        cells = [k + 1, shapes, "compile" if row["compiled"] else "cache hit", f"{row['ms']:.1f}"]
        if compared:
            cells.append("PASS" if row.get("compare_ok") else "FAIL")
        rows.append([*cells, row.get("reason", "")])
    columns = [Col("run", right=True), "shapes", "artifact", Col("ms", right=True)]
    print_table([*columns, *(["onnxruntime"] if compared else []), "reason"], rows, indent=2)
    print(
        f"{len(report['runs'])} runs: {report['compiles']} compiles, {report['cache_hits']} "
        f"cache hits" + (f", {report['tilings']} tilings" if report["tilings"] else "")
    )


def declared_stand_ins(args: argparse.Namespace, path: str) -> dict[str, Any] | None:
    """Zero arrays of every input of the ONNX model at ``path``, at its declared shapes with
    the command line's ``--dim`` / first ``--shape`` filled in, for an import that depends on
    input shapes only (their values do not matter); None when a dim stays unsized."""
    import numpy as np
    import onnx
    from onnx.helper import tensor_dtype_to_np_dtype

    graph = onnx.load(path, load_external_data=False).graph
    dims = _parse_dims(args.dim)
    shapes = {name: options[0] for name, options in _parse_shapes(args.shape).items()}
    initialised = {t.name for t in graph.initializer}
    arrays: dict[str, Any] = {}
    for value in graph.input:
        if value.name in initialised:
            continue
        tensor = value.type.tensor_type
        shape = shapes.get(value.name)
        if shape is None:
            sized = [
                d.dim_value if d.HasField("dim_value") else dims.get(d.dim_param)
                for d in tensor.shape.dim
            ]
            if any(d is None for d in sized):
                return None
            shape = tuple(cast(int, d) for d in sized)
        arrays[value.name] = np.zeros(shape, tensor_dtype_to_np_dtype(tensor.elem_type))
    return arrays
