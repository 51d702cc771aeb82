"""Binding an ONNX model to the inputs it will run on, before anything is decided on shapes.

Real exports compute shapes at run time (``Shape`` -> ``Gather`` -> ``Concat`` ->
``Reshape``), choose branches on shapes (PyTorch's ``squeeze(dim)`` becomes an ``If`` on
``Shape(x)[dim] == 1``) and on scalar inputs (Silero VAD's sample rate ``sr``). Compiled
symbolically, such a model keeps unknown dims (``?``) that no layout conversion or tiling can
use. Given the concrete inputs of a call, :func:`import_bound` imports the model so that
every dim the inputs fix is known:

1. **shapes**: with ``static=True`` every input dim is its size (expect guards ``s == size``
   make a different size recompile); shape computations then fold at import (ONNX's data
   propagation, :func:`~tilegraph.dialects.graph.operand_values.known_value`) and Ifs on
   shapes are inlined. A symbolic import (``static=False``) that meets an If it cannot type
   without its inputs' shapes is imported again with ``static=True``;
2. **values**: an If whose branches cannot be one type, or whose results stay unknown, and
   whose condition is computed from small inputs (at most :data:`MAX_BOUND_ELEMENTS`
   elements), is specialised on those inputs' values: the import reads them as constants
   (``load_onnx(..., input_values=)``) and a :class:`ValueGuard` (``sr == 16000``) is kept
   with the artifact, so that a call with another value recompiles.

What is still unknown after binding is data-dependent (NonZero's count, a Loop that stops
on a condition computed from data): :func:`unknown_dims` lists those values, and
:func:`observe_unknown_dims` runs the graph-level reference on the call's inputs and gives
each of them the shape it had, so that the tiles can be compiled. The module is then valid
for inputs that produce the same sizes; an op whose result has another shape at run time
raises :class:`~tilegraph.runtime.interpreter.ShapeChanged` (every executor checks the
static type of what a graph op returns), and the Session compiles again for the new sizes.

Every step says why in :attr:`BoundImport.reasons` (the Session logs them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.control_flow import IfOp, LoopOp, RegionOp, walk_outside_bodies
from tilegraph.dialects.graph.input_dependence import input_dependence
from tilegraph.dialects.graph.provenance import onnx_nodes, value_label
from tilegraph.dialects.layout import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.frontend.onnx_errors import OnnxImportError, ValueDependentError
from tilegraph.symbolic.env import Mode, ShapeEnv

MAX_BOUND_ELEMENTS = 64
"""The largest input specialised by its value (a scalar flag, a sample rate, a small shape
tensor); a larger one deciding a branch is an error that says so."""

ModelSource = str | Path | bytes | onnx.ModelProto


@dataclass(frozen=True)
class ValueGuard:
    """The artifact was specialised to ``input == value``; ``node`` needed it."""

    input: str
    value: np.ndarray
    node: str

    def holds(self, array: np.ndarray) -> bool:
        array = np.asarray(array)
        return array.shape == self.value.shape and bool(np.array_equal(array, self.value))

    def __str__(self) -> str:
        value = _value_text(self.value)
        return f"expect {self.input} == {value} (node '{self.node}' depends on its value)"

    def failure(self, array: np.ndarray) -> str:
        """The Session's reason when a call's value breaks the guard."""
        return (
            f"expect guard {self.input} == {_value_text(self.value)} failed with "
            f"{self.input} = {_value_text(np.asarray(array))}; node '{self.node}' was "
            "compiled for the old value: recompile"
        )


@dataclass
class BoundImport:
    """A module imported for concrete inputs, and what was bound to get there."""

    module: ModuleOp
    env: ShapeEnv
    static: bool
    """Whether every input dim is its size (else the env's mode decided)."""
    value_guards: list[ValueGuard] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    """Why each binding was made, in order (the Session logs them)."""


def import_bound(
    source: ModelSource,
    inputs: Mapping[str, np.ndarray],
    *,
    mode: Mode = "dynamic",
    specialize_zero_one: bool = True,
    static: bool = False,
    values: Mapping[str, tuple[np.ndarray, str]] | None = None,
) -> BoundImport:
    """Import ``source`` for ``inputs`` (see the module docstring). ``values`` are inputs to
    specialise from the start (name -> (value, the node that needed it)), as a Session does
    when it lowers an artifact that was specialised on them.

    Raises :class:`OnnxImportError` when the model cannot be imported, or when a branch
    depends on an input that cannot be bound (too large, or not among ``inputs``)."""
    shapes = {name: tuple(int(d) for d in np.shape(a)) for name, a in inputs.items()}
    guards = {n: ValueGuard(n, np.asarray(v), node) for n, (v, node) in (values or {}).items()}
    reasons: list[str] = []
    while True:
        env = ShapeEnv("static" if static else mode, specialize_zero_one)
        bound = {n: g.value for n, g in guards.items()}
        try:
            module = load_onnx(source, shape_env=env, input_shapes=shapes, input_values=bound)
        except ValueDependentError as e:
            again = _bind(e, inputs, static, guards, reasons)
            if again is None:
                raise OnnxImportError(_unbindable(str(e), e.value_inputs, inputs)) from None
            static = again
            continue
        pending = _branching_on_values(module, guards, static)
        if pending is not None:
            node, names = pending
            again = _bind(ValueDependentError("", node, [], names), inputs, static, guards, reasons)
            if again is not None:
                static = again
                continue
        return BoundImport(module, env, static, list(guards.values()), reasons)


def _bind(
    needed: ValueDependentError,
    inputs: Mapping[str, np.ndarray],
    static: bool,
    guards: dict[str, ValueGuard],
    reasons: list[str],
) -> bool | None:
    """Bind what ``needed`` names; the new ``static``, or None when nothing more can be
    bound."""
    progress = False
    if needed.shape_inputs and not static:
        static, progress = True, True
        first = needed.shape_inputs[0]
        reasons.append(
            f"input shapes bound: node '{needed.deciders.get(first, needed.node)}' "
            f"{needed.how} the shape of {', '.join(repr(n) for n in needed.shape_inputs)}"
        )
    for name in needed.value_inputs:
        if name in guards or name not in inputs:
            continue
        array = np.asarray(inputs[name])
        if array.size > MAX_BOUND_ELEMENTS:
            continue
        node = needed.deciders.get(name, needed.node)
        guards[name] = ValueGuard(name, array.copy(), node)
        reasons.append(
            f"input '{name}' specialised to {_value_text(array)}: node '{node}' depends on "
            "its value"
        )
        progress = True
    return static if progress else None


def _unbindable(message: str, value_inputs: list[str], inputs: Mapping[str, np.ndarray]) -> str:
    large = [
        n for n in value_inputs if n in inputs and np.asarray(inputs[n]).size > MAX_BOUND_ELEMENTS
    ]
    if large:
        return (
            f"{message} (input(s) {', '.join(large)} have more than {MAX_BOUND_ELEMENTS} "
            "elements: tilegraph specialises branches on small inputs only)"
        )
    return message


def _branching_on_values(
    module: ModuleOp, guards: Mapping[str, ValueGuard], static: bool = False
) -> tuple[str, list[str]] | None:
    """The first If / Loop outside bodies whose results are not static and whose condition
    or trip count is computed from the values of unbound inputs: (its name, those inputs).
    ``static`` (an import for the tiles, which have no kernel for an If): an If whose
    results are static too, so that the branch taken is inlined (Silero VAD at batch 2
    types both branches alike and still branches on ``sr``)."""
    for op in walk_outside_bodies(module):
        if not isinstance(op, IfOp | LoopOp):
            continue
        settled = all(isinstance(r.type, TensorType) and r.type.is_static for r in op.results)
        if settled and not (static and isinstance(op, IfOp)):
            continue
        deciding: list[SSAValue] = (
            [op.cond]
            if isinstance(op, IfOp)
            else [v for v in (op.max_trip_count, op.condition) if v is not None]
        )
        names: list[str] = []
        for value in deciding:
            names += [n for n in input_dependence(value).values if n not in guards]
        if names:
            return _op_label(op), names
    return None


def _op_label(op: IfOp | LoopOp) -> str:
    hint = op.results[0].name_hint if op.results else None
    nodes = onnx_nodes(op.location)
    return nodes[0] if nodes else hint or op.name


def unknown_dims(module: ModuleOp) -> list[str]:
    """Values of the module's functions (outside control-flow bodies) whose type is not
    static (a symbol or an unknown dim), as ``%name (op): type``; after a static import,
    the data-dependent ones."""
    found = []
    for fn in module.ops:
        if not isinstance(fn, func.FuncOp):
            continue
        for op in walk_outside_bodies(fn.body):
            for r in op.results:
                if isinstance(r.type, TensorType) and not r.type.is_static:
                    found.append(f"%{r.name_hint or '?'} ({op.name}): {r.type}")
    return found


def needs_binding(module: ModuleOp) -> bool:
    """Whether the module (an ONNX import) cannot be tiled until its inputs are seen: an
    input dim is not static, or a value has an unknown dim (:func:`unknown_dims`). Such a
    model is imported again for the inputs (:func:`import_bound`): per call by
    ``tilegraph.compile``'s Session, once by ``tilegraph-run``."""
    from tilegraph.dialects.entry import entry_function

    fn = entry_function(module)
    static = all(getattr(t, "is_static", True) for t in fn.function_type.inputs.data)
    return not static or bool(unknown_dims(module))


@dataclass(frozen=True)
class ObservedShape:
    """A data-dependent value (``%name (op)``) and the shape it had when compiling."""

    value: str
    shape: tuple[int, ...]
    produced: bool = True
    """Whether the op made the size (its operands were static), rather than passing on a
    size made earlier."""

    def __str__(self) -> str:
        return f"{self.value} observed as {list(self.shape)}"


class _ShapeRecorder(Interpreter.Listener):
    def __init__(self, wanted: set[SSAValue]) -> None:
        self.wanted = wanted
        self.shapes: dict[SSAValue, tuple[int, ...]] = {}

    def did_interpret_op(self, op: Operation, results: tuple[Any, ...]) -> None:
        for value, result in zip(op.results, results, strict=False):
            if value in self.wanted:
                self.shapes[value] = tuple(int(d) for d in np.shape(result))


def observe_unknown_dims(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    produced: Mapping[str, np.ndarray] | None = None,
) -> list[ObservedShape]:
    """Give every value of :func:`unknown_dims` (in a module that has no storage layouts
    yet: a fresh import) the shape it has when the reference interpreter runs ``inputs``;
    the values and shapes, in program order.

    ``produced`` maps data-dependent values (by :func:`value_label`) to the data a tiled run
    computed for them (:attr:`ShapeChanged.produced`): the reference continues from that
    data rather than from its own, so the sizes after such a value are those the tiles meet.
    A count such as NMS's turns on comparisons the tiles' rounding can tip (a detector's
    IoU at its threshold), so the reference alone can observe another size than the tiles
    produce for the same inputs. A label that names no single value here is an error."""
    from tilegraph.runtime.reference import run_reference

    wanted = [
        r
        for fn in module.ops
        if isinstance(fn, func.FuncOp)
        for op in walk_outside_bodies(fn.body)
        for r in op.results
        if isinstance(r.type, TensorType) and not r.type.is_static
    ]
    if not wanted:
        return []
    run_on, in_run = module, {v: v for v in wanted}
    if produced:
        run_on, in_run = _with_produced_data(module, wanted, produced)
    recorder = _ShapeRecorder(set(in_run.values()))
    run_reference(run_on, inputs, listeners=[recorder])
    made = {v for v in wanted if _operands_static(v.owner)}
    found = []
    for value in wanted:
        shape = recorder.shapes.get(in_run[value])
        t = value.type
        if shape is None or not isinstance(t, TensorType):
            continue  # not reached (a branch that did not run)
        found.append(ObservedShape(value_label(value), shape, value in made))
        Rewriter.replace_value_with_new_type(value, t.with_shape(list(shape)))
    for op in module.walk():
        if isinstance(op, RegionOp):  # a retyped value may be a body's capture
            op.sync_capture_types()
    for fn in module.ops:
        if isinstance(fn, func.FuncOp) and (returned := fn.get_return_op()) is not None:
            fn.function_type = FunctionType.from_lists(
                fn.function_type.inputs.data, [v.type for v in returned.operands]
            )
    module.verify()
    return found


def _with_produced_data(
    module: ModuleOp, wanted: Sequence[SSAValue], produced: Mapping[str, np.ndarray]
) -> tuple[ModuleOp, dict[SSAValue, SSAValue]]:
    """A copy of ``module`` whose values named in ``produced`` are read from constants of
    that data (the op that computed them still runs; its result is read by nothing), and
    each wanted value's counterpart in the copy (a replaced value's is the constant)."""
    from tilegraph.dialects.graph.constant_ops import ConstantOp
    from tilegraph.runtime.interpreter import KernelError

    mapper: dict[SSAValue, SSAValue] = {}
    copy = module.clone(value_mapper=mapper)
    in_copy = {v: mapper[v] for v in wanted}
    for label, data in produced.items():
        named = [v for v in wanted if value_label(v) == label]
        if len(named) != 1:
            raise KernelError(
                f"{label}: a tiled run produced it, but the model has "
                f"{'no such value' if not named else 'several values of that name'}",
                internal=True,
            )
        value = in_copy[named[0]]
        owner = value.owner
        assert isinstance(owner, Operation)  # a data-dependent value is an op's result
        constant = ConstantOp(np.asarray(data))
        Rewriter.insert_op(constant, InsertPoint.before(owner))
        value.replace_all_uses_with(constant.output)
        in_copy[named[0]] = constant.output
    return copy, in_copy


def _operands_static(op: object) -> bool:
    return isinstance(op, Operation) and all(
        not isinstance(v.type, TensorType) or v.type.is_static for v in op.operands
    )


def _value_text(array: np.ndarray) -> str:
    flat = np.asarray(array).reshape(-1)
    if flat.size == 1:
        return str(flat[0].item())
    return str(flat.tolist())
