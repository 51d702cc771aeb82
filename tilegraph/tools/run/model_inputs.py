"""The model ``tilegraph-run`` compiles and the inputs it runs it on, from the command line.

:func:`imported_model` reads ``--input`` arrays (:func:`read_array`: .npy or ONNX .pb) and
imports the model with the target (``--platform`` / ``--precision``, :func:`set_target`) and
the ``--entry`` it names; an ONNX model whose dims or branches its inputs decide is imported
for them (:func:`import_for`, :mod:`tilegraph.runtime.binding`), at once when the import
cannot type it alone, else once the inputs are made (:func:`bound_to_inputs`).
:func:`run_inputs` fills in seeded random arrays for the inputs not given. Every problem is
a :class:`~tilegraph.tools.run.watch.RunError` naming the file or input.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.entry import set_entry
from tilegraph.frontend import OnnxImportError
from tilegraph.progress import task
from tilegraph.runtime.session import model_io_names
from tilegraph.tools.model_files import load_module
from tilegraph.tools.random_inputs import random_inputs
from tilegraph.tools.run.npy_files import load_npy
from tilegraph.tools.run.shapes import declared_stand_ins, shape_sets
from tilegraph.tools.run.watch import RunError


def read_array(path: str) -> np.ndarray:
    """The array of a .npy or ONNX .pb (TensorProto) file."""
    if path.endswith(".npy"):
        return load_npy(path)
    if path.endswith(".pb"):
        import onnx
        from onnx import numpy_helper

        return numpy_helper.to_array(onnx.load_tensor(path))
    raise RunError(f"{path}: inputs must be .npy or .pb files")


def set_target(args: argparse.Namespace, module: ModuleOp) -> None:
    """``--platform`` / ``--precision`` become the module's target (:mod:`tilegraph.target`)
    before any pass runs (the format report's too); they must agree with a target the
    model already records."""
    from tilegraph.target import pin_target, target_of

    by = f"--platform {args.platform}" if args.platform else "tilegraph-run"
    try:
        pin_target(module, by, args.platform, args.precision or target_of(module).precision)
    except ValueError as e:
        raise RunError(str(e)) from None


def imported_model(args: argparse.Namespace) -> tuple[dict[str, np.ndarray], ModuleOp, Any]:
    """The --input arrays, the model imported (:func:`_import`) with the target and entry
    the command line sets, and its :class:`BoundImport` (or None)."""
    given = _given_arrays(args)
    with task(f"importing {Path(args.model).name}"):
        module, bound = _import(args, given)
    set_target(args, module)
    if args.entry is not None:
        set_entry(module, args.entry)
    return given, module, bound


def _import(args: argparse.Namespace, given: Mapping[str, np.ndarray]) -> tuple[ModuleOp, Any]:
    """The model as a module; an ONNX model that branches on its inputs' shapes or values
    (an If the import cannot type alone) is imported for the given arrays, which must then
    cover every input. The second item is the :class:`BoundImport` when that happened."""
    from tilegraph.frontend.onnx_errors import ValueDependentError

    if not args.model.endswith(".onnx"):
        return load_module(args.model), None
    try:
        return load_module(args.model, bindable=False), None
    except ValueDependentError as e:
        missing = [n for n in model_io_names(args.model)[0] if n not in given]
        # Inputs whose values decide must be given; the rest only need sizes.
        unvalued = [n for n in e.value_inputs if n not in given]
        stand_ins = declared_stand_ins(args, args.model) if missing else None
        if stand_ins is not None and not unvalued:  # shapes decide: --dim / --shape size them
            imported = import_for(args, {**stand_ins, **given})
            args.dim = []  # the module's dims are these sizes now: no symbol is left to size
            return imported
        if stand_ins is not None:
            raise RunError(
                f"{e}; give {', '.join(unvalued)} with --input: their values decide (--shape "
                "and --dim size the other inputs)"
            ) from None
        if missing:
            raise RunError(
                f"{e}; give every input with --input to compile it (missing: {', '.join(missing)})"
            ) from None
        return import_for(args, given)


def bound_to_inputs(
    args: argparse.Namespace, module: ModuleOp, inputs: Mapping[str, np.ndarray]
) -> tuple[ModuleOp, Any]:
    """An ONNX model whose dims or branches the inputs decide
    (:func:`~tilegraph.runtime.binding.needs_binding`), imported for them: static (every
    dim its size) for the tiles, per --dynamic for --reference; else the module as it is."""
    from tilegraph.runtime.binding import needs_binding

    if not args.model.endswith(".onnx") or not needs_binding(module):
        return module, None
    return import_for(args, inputs)


def import_for(args: argparse.Namespace, inputs: Mapping[str, np.ndarray]) -> tuple[ModuleOp, Any]:
    """The ONNX model imported for ``inputs`` (static for the tiles, per ``--dynamic`` for
    ``--reference``) and its :class:`BoundImport`; an import error as a RunError."""
    from tilegraph.runtime.binding import import_bound

    try:
        bound = import_bound(args.model, inputs, mode=args.dynamic, static=not args.reference)
    except OnnxImportError as e:
        raise RunError(str(e)) from None
    return bound.module, bound


def run_inputs(
    args: argparse.Namespace, module: ModuleOp, given: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The run's inputs: the given arrays, and seeded random ones of the --shape / --dim
    sizes for the rest."""
    sets = shape_sets(args, module, {name: tuple(a.shape) for name, a in given.items()})
    return random_inputs(module, args.seed, sets[0], given)


def _given_arrays(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """The arrays of --input NAME=FILE."""
    given: dict[str, np.ndarray] = {}
    for item in args.input:
        name, sep, file = item.partition("=")
        if not sep:
            raise RunError(f"--input expects NAME=FILE, got '{item}'")
        try:
            given[name] = read_array(file)
        except FileNotFoundError:
            raise RunError(f"{file}: no such file") from None
        except ValueError as e:
            raise RunError(f"{file}: {e}") from None
    return given
