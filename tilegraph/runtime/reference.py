"""``run_reference(module, inputs)``: execute a graph-level module with numpy.

The reference semantics every later stage is checked against. Inputs are given in origin
layout (as the user has them); if an argument's type has a storage format, the array is laid
out accordingly before the call, and results come back in origin layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from tilegraph.dialects.entry import InputError, entry_function, input_names
from tilegraph.dialects.layout_storage import bound_symbols, storage_array
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import is_symbolic
from tilegraph.passes.registry import plugin_interpreter_functions
from tilegraph.runtime.boundary import accepts, expected_type, held_input, interface_value
from tilegraph.runtime.interpreter import GraphFunctions, LayoutFunctions


def check_inputs(
    fn: func.FuncOp, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    """Order and validate inputs against the signature; raises :class:`InputError`.

    Tensors are given in their declared element type (:mod:`tilegraph.runtime.boundary`) and
    returned in the type's container, as the executors hold them."""
    names = input_names(fn)
    if isinstance(inputs, Mapping):
        unknown = sorted(set(inputs) - set(names))
        if unknown:
            raise InputError(f"unknown input(s) {unknown}; the model takes {names}")
        missing = [n for n in names if n not in inputs]
        if missing:
            raise InputError(f"missing input(s) {missing}")
        arrays = [_input_value(inputs[n]) for n in names]
    else:
        if len(inputs) != len(names):
            raise InputError(f"expected {len(names)} input(s) {names}, got {len(inputs)}")
        arrays = [_input_value(a) for a in inputs]
    bindings: dict[object, int] = {}
    for i, (name, array, t) in enumerate(
        zip(names, arrays, fn.function_type.inputs.data, strict=True)
    ):
        if not isinstance(t, TensorType):
            continue  # a sequence or optional: checked by the ops that read it
        if not accepts(array.dtype, t.dtype):
            raise InputError(
                f"input '{name}' has dtype {array.dtype}, expected {expected_type(t.dtype)}"
            )
        arrays[i] = held_input(array, t.dtype)
        shape = t.origin_shape
        if array.ndim != len(shape):
            raise InputError(
                f"input '{name}' has rank {array.ndim} (shape {list(array.shape)}), "
                f"expected rank {len(shape)}"
            )
        for axis, (got, want) in enumerate(zip(array.shape, shape, strict=True)):
            if isinstance(want, int) and want >= 0 and got != want:
                raise InputError(
                    f"input '{name}' has shape {list(array.shape)}, expected "
                    f"{[d if not is_symbolic(d) and d != -1 else '?' for d in shape]} "
                    f"(dim {axis} is {got}, expected {want})"
                )
            if isinstance(want, sympy.Symbol):
                if bindings.setdefault(want, got) != got:
                    raise InputError(
                        f"input '{name}' dim {axis} is {got}, but symbol {want} is already "
                        f"{bindings[want]}"
                    )
    return arrays


def _input_value(value: object) -> Any:
    """An input as the interpreter holds it: an array, a list of arrays (a sequence) or
    None (an empty optional)."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [np.asarray(v) for v in value]
    return np.asarray(value)


def input_bindings(fn: func.FuncOp, arrays: Sequence[np.ndarray]) -> dict[sympy.Symbol, int]:
    """The sizes the inputs give the shape symbols of ``fn``'s signature (inputs already
    checked by :func:`check_inputs`)."""
    bindings: dict[sympy.Symbol, int] = {}
    for array, t in zip(arrays, fn.function_type.inputs.data, strict=True):
        if isinstance(t, TensorType):
            for got, want in zip(array.shape, t.origin_shape, strict=True):
                if isinstance(want, sympy.Symbol):
                    bindings[want] = int(got)
    return bindings


def run_reference(
    module: ModuleOp,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    *,
    function: str | None = None,
    pad_value: float | None = None,
    listeners: Sequence[Interpreter.Listener] = (),
) -> list[np.ndarray]:
    """Run the module's entry function on origin-layout inputs; origin-layout outputs.
    Inputs and outputs are in their declared element types (:mod:`tilegraph.runtime.boundary`).

    ``pad_value`` (e.g. ``float("nan")``) fills the padding lanes of every padded storage
    tensor — inputs, constants, results of ops and conversions — to catch kernels that read
    padding; by default padding holds zeros. ``listeners`` observe every op interpreted.
    """
    fn = entry_function(module, function)
    arrays = check_inputs(fn, inputs)
    args = [
        storage_array(a, t, pad_value) if isinstance(t, TensorType) else a
        for a, t in zip(arrays, fn.function_type.inputs.data, strict=True)
    ]
    interpreter = Interpreter(module, listeners=tuple(listeners))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GraphFunctions(pad_value))
    interpreter.register_implementations(LayoutFunctions(pad_value))
    for functions in plugin_interpreter_functions():  # tilegraph.interpreters entry points
        interpreter.register_implementations(functions)
    with bound_symbols(input_bindings(fn, arrays)):
        results = interpreter.call_op(fn, tuple(args))
        return [
            interface_value(value, t)
            for value, t in zip(results, fn.function_type.outputs.data, strict=True)
        ]
