"""Run a module lowered to the tile level: ``run_tiles(module, inputs, executor=...)``.

The host function takes GM buffers; its ``tile.signature`` (the graph function's tensor
types, kept by ``lower-graph-to-kernels``) says how origin-layout inputs are laid out and how
results are read back, as :func:`~tilegraph.runtime.reference.run_reference` does at the
graph level. Two executors run the same IR:

* ``"interpret"``: xDSL's interpreter with :class:`TileFunctions` — every op interpreted;
* ``"fast"``: :mod:`tilegraph.runtime.fast_executor` — each function compiled to Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Operation

from tilegraph.dialects.entry import entry_function
from tilegraph.dialects.graph.provenance import nodes_text, onnx_nodes
from tilegraph.dialects.layout_storage import storage_array
from tilegraph.dialects.layout_type import TensorType
from tilegraph.lowering.analysis.kernel_attrs import OPS_ATTR, SIGNATURE_ATTR
from tilegraph.passes.registry import plugin_interpreter_functions
from tilegraph.runtime.boundary import interface_value
from tilegraph.runtime.errors import is_internal, plain_words
from tilegraph.runtime.interpreter import GraphFunctions, KernelError, LayoutFunctions
from tilegraph.runtime.reference import check_inputs
from tilegraph.runtime.region_runner import TileInterpreter
from tilegraph.runtime.tile_interpreter import (
    IndexArithFunctions,
    TileCounters,
    TileFunctions,
)
from tilegraph.runtime.tile_interpreter.arena import LoopCountingFunctions

EXECUTORS = ("interpret", "fast")


class TileRunError(ValueError):
    """The module is not at the tile level, or the executor is unknown."""


def host_signature(fn: func.FuncOp) -> FunctionType:
    sig = fn.attributes.get(SIGNATURE_ATTR)
    if not isinstance(sig, FunctionType):
        raise TileRunError(
            f"@{fn.sym_name.data} is not a lowered host function (run lower-graph-to-kernels first)"
        )
    return sig


def _graph_view(fn: func.FuncOp, sig: FunctionType) -> func.FuncOp:
    """A stand-in with the tensor signature, for input checking."""
    view = func.FuncOp(fn.sym_name.data, sig)
    for key in ("onnx.input_names", "onnx.output_names"):
        if key in fn.attributes:
            view.attributes[key] = fn.attributes[key]
    for arg, old in zip(view.body.block.args, fn.body.block.args, strict=False):
        arg.name_hint = old.name_hint
    return view


def interpreter_for(module: ModuleOp, counters: TileCounters | None = None) -> Interpreter:
    interpreter = TileInterpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(ScfFunctions())
    interpreter.register_implementations(ArithFunctions())
    interpreter.register_implementations(GraphFunctions())
    interpreter.register_implementations(LayoutFunctions())
    tiles = TileFunctions(counters)
    interpreter.register_implementations(tiles)
    # scf.for counting its iterations: the slot of a multi-buffered buffer follows them
    interpreter.register_implementations(LoopCountingFunctions(tiles.iterations), override=True)
    interpreter.register_implementations(IndexArithFunctions(), override=True)
    for functions in plugin_interpreter_functions():  # tilegraph.interpreters entry points
        interpreter.register_implementations(functions)
    return interpreter


_FAST: dict[tuple[int, bool], tuple[ModuleOp, int, Any]] = {}


def _fingerprint(module: ModuleOp) -> int:
    """Changes when ops are added, removed or replaced (a pass ran on the module). Taken
    on every run: the ops are visited along their blocks' links, ten times faster than
    xDSL's generator walk (which cost a fifth of a small model's run)."""
    ids: list[int] = []

    def visit(op: Operation) -> None:
        ids.append(id(op))
        for region in op.regions:
            for block in region.blocks:
                inner = block.first_op
                while inner is not None:
                    visit(inner)
                    inner = inner.next_op

    visit(module)
    return hash(tuple(ids))


def fast_module(module: ModuleOp, batch: bool = True) -> Any:
    """The fast executor's compilation of ``module``, kept while the module lives and its
    ops stay the same (a pass that rewrites the module makes the next run recompile)."""
    from tilegraph.runtime.fast_executor import compile_module

    key = (id(module), batch)
    found = _FAST.get(key)
    fingerprint = _fingerprint(module)
    if found is None or found[0] is not module or found[1] != fingerprint:
        if len(_FAST) > 8:
            _FAST.clear()
        found = _FAST[key] = (module, fingerprint, compile_module(module, batch))
    return found[2]


def run_tiles(
    module: ModuleOp,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    *,
    executor: str = "interpret",
    function: str | None = None,
    pad_value: float | None = None,
    counters: TileCounters | None = None,
    batch: bool = True,
) -> list[np.ndarray]:
    """Run the lowered module on origin-layout inputs; origin-layout outputs, both in their
    declared element types (:mod:`tilegraph.runtime.boundary`).

    ``pad_value`` (e.g. NaN) fills the padding lanes of the inputs' storage layout, so that
    a kernel reading padding it must not read shows up in the comparison. ``batch=False``
    makes the fast executor run every tile by itself, as the interpreter does (for
    differential tests, and to measure what per-tile execution costs)."""
    if executor not in EXECUTORS:
        raise TileRunError(f"unknown executor {executor!r}; choose from {', '.join(EXECUTORS)}")
    fn = entry_function(module, function)
    sig = host_signature(fn)
    arrays = check_inputs(_graph_view(fn, sig), inputs)
    in_types = [t for t in sig.inputs.data if isinstance(t, TensorType)]
    args = [
        np.asarray(storage_array(a, t, pad_value), order="C")  # ascontiguousarray makes 0-d 1-d
        for a, t in zip(arrays, in_types, strict=True)
    ]
    # NaN and infinities are values here, as on the hardware (sqrt of a negative is NaN).
    with np.errstate(all="ignore"):
        if executor == "interpret":
            results = interpreter_for(module, counters).call_op(fn, tuple(args))
        else:
            results = fast_module(module, batch).run(fn.sym_name.data, args, counters)
    return [interface_value(value, t) for value, t in zip(results, sig.outputs.data, strict=True)]


def kernel_failure(module: ModuleOp, e: Exception) -> KernelError | None:
    """A failure that input values cause inside a compiled tile kernel (an index out of
    range in a gather), as a :class:`KernelError` naming the kernel's ONNX nodes and graph
    ops; None for any other exception. The kernel is the innermost ``<tile:NAME>`` frame of
    the traceback (the fast executor compiles each function under that file name)."""
    if isinstance(e, KernelError) or is_internal(e):
        return None
    name, tb = None, e.__traceback__
    while tb is not None:
        file = tb.tb_frame.f_code.co_filename
        if file.startswith("<tile:") and file.endswith(">"):
            name = file[len("<tile:") : -1]
        tb = tb.tb_next
    kernel = next(
        (f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == name), None
    )
    if kernel is None:
        return None
    ops = kernel.attributes.get(OPS_ATTR)
    what = ops.data if isinstance(ops, StringAttr) else f"kernel @{name}"
    nodes = onnx_nodes(kernel.location)
    label = f"{nodes_text(nodes)} ({what})" if nodes else what
    return KernelError(f"{label}: {plain_words(e)}")
