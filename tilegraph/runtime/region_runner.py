"""A leaner walk of single-block regions for xDSL's interpreter (:class:`TileInterpreter`).

xDSL's :meth:`~xdsl.interpreter.Interpreter.run_ssacfg_region` looks every operand up
through a chain of scoped dicts (one scope per loop iteration, keyed by SSA values whose
hash is a Python method) and finds every op's implementation by its type, on every
execution. A tiled kernel runs the same loop body thousands of times, so that walk — not
the tile ops — was most of the interpreter's time.

:class:`TileInterpreter` plans each block once: the implementation of every op, and where
each operand comes from. One execution of the block holds its values in a list of
registers: first the values defined outside the block that it reads (looked up in the
scope once per execution), then its arguments, then its ops' results. Values that regions
nested in the block read are also put into the scope, as xDSL does, so nested regions and
implementations that call back into the interpreter see them. Every op still runs through
its registered implementation, in order, with xDSL's checks and errors (an op with no
implementation, a wrong number of results, an exception in an implementation); regions
with several blocks, and interpreters with listeners, take xDSL's own walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from xdsl.dialects.builtin import SymbolRefAttr
from xdsl.interpreter import Interpreter, ReturnedValues
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import InterpretationError
from xdsl.utils.scoped_dict import ScopedDict

Fetch = Callable[[list[Any]], tuple[Any, ...]]


class _Step(NamedTuple):
    op: Operation
    fetch: Fetch
    """The op's operands from the registers."""
    results: tuple[int, ...]
    """The registers of its results."""
    scoped: tuple[tuple[SSAValue, int], ...]
    """Results that nested regions read: put into the scope as well."""
    functions: Any
    """The ``InterpreterFunctions`` of its implementation (None: it has none)."""
    implementation: Callable[..., Any] | None


@dataclass(frozen=True)
class _BlockPlan:
    outer: tuple[SSAValue, ...]
    """Registers 0..len(outer)-1: values defined outside the block."""
    args: int
    """The next ``args`` registers: the block's arguments."""
    scoped_args: tuple[tuple[SSAValue, int], ...]
    free: int
    """Registers for the ops' results."""
    steps: tuple[_Step, ...]


def _fetch(indices: list[int]) -> Fetch:
    if not indices:
        return lambda registers: ()
    if len(indices) == 1:
        (only,) = indices
        return lambda registers: (registers[only],)
    return itemgetter(*indices)  # pyright: ignore[reportReturnType]


def _read_by_nested_region(value: SSAValue, block: Block) -> bool:
    return any(use.operation.parent_block() is not block for use in value.uses)


def _plan(interpreter: Interpreter, block: Block) -> _BlockPlan:
    impls = interpreter._impls._impl_dict  # pyright: ignore[reportPrivateUsage]
    outer = list(
        dict.fromkeys(
            v
            for op in block.ops
            for v in op.operands
            if not (
                v.owner is block or (isinstance(v.owner, Operation) and v.owner.parent is block)
            )
        )
    )
    register: dict[SSAValue, int] = {v: i for i, v in enumerate(outer)}
    for arg in block.args:
        register[arg] = len(register)
    first_free = len(register)
    steps = []
    for op in block.ops:
        fetch = _fetch([register[v] for v in op.operands])
        for value in op.results:
            register[value] = len(register)
        results = tuple(register[v] for v in op.results)
        scoped = tuple((v, register[v]) for v in op.results if _read_by_nested_region(v, block))
        functions, implementation = impls.get(type(op), (None, None))
        steps.append(_Step(op, fetch, results, scoped, functions, implementation))
    scoped_args = tuple((a, register[a]) for a in block.args if _read_by_nested_region(a, block))
    return _BlockPlan(
        tuple(outer), len(block.args), scoped_args, len(register) - first_free, tuple(steps)
    )


def _lookup(scope: ScopedDict[SSAValue, Any], value: SSAValue) -> Any:
    ctx: ScopedDict[SSAValue, Any] | None = scope
    while ctx is not None:
        local = ctx._local_scope  # pyright: ignore[reportPrivateUsage]
        if value in local:
            return local[value]
        ctx = ctx.parent
    raise InterpretationError(f"no value for {value} in the interpreter's scope")


@dataclass
class TileInterpreter(Interpreter):
    """xDSL's interpreter with :mod:`this module's <tilegraph.runtime.region_runner>` walk
    of single-block regions."""

    _plans: dict[Block, _BlockPlan] = field(default_factory=dict, init=False, repr=False)
    _outer: dict[Block, tuple[ScopedDict[SSAValue, Any], list[Any]]] = field(
        default_factory=dict, init=False, repr=False
    )
    """Per block, the scope it last ran in and the outer values read there: a loop body
    runs in the same enclosing scope on every iteration, and SSA values defined outside it
    do not change meanwhile (the scope is held, so its identity cannot be reused)."""
    _symbols: dict[str, Operation] = field(default_factory=dict, init=False, repr=False)

    def get_op_for_symbol(self, symbol: str | SymbolRefAttr) -> Operation:
        """xDSL's lookup, remembered per name (the module does not change while it runs;
        a kernel launched a thousand times is looked up once)."""
        key = symbol if isinstance(symbol, str) else str(symbol)
        found = self._symbols.get(key)
        if found is None:
            found = self._symbols[key] = super().get_op_for_symbol(symbol)
        return found

    def run_ssacfg_region(
        self, region: Region, args: tuple[Any, ...], name: str = "unknown"
    ) -> tuple[Any, ...]:
        block = region.blocks.first
        if block is None or block.next_block is not None or self.listeners:
            return super().run_ssacfg_region(region, args, name)
        plan = self._plans.get(block)
        if plan is None:
            plan = self._plans[block] = _plan(self, block)
        if len(args) != plan.args:
            raise InterpretationError(
                f"{name}: the block takes {plan.args} arguments, not {len(args)}"
            )
        enclosing = self._ctx
        cached = self._outer.get(block)
        if cached is not None and cached[0] is enclosing:
            registers = cached[1].copy()
        else:
            registers = [_lookup(enclosing, v) for v in plan.outer]
            self._outer[block] = (enclosing, registers.copy())
        registers += args
        registers += [None] * plan.free
        scope: ScopedDict[SSAValue, Any] = ScopedDict(enclosing, name=name)
        local = scope._local_scope  # pyright: ignore[reportPrivateUsage]
        for value, index in plan.scoped_args:
            local[value] = registers[index]
        self._ctx = scope
        try:
            for op, fetch, results, scoped, functions, implementation in plan.steps:
                if implementation is None:
                    raise InterpretationError(
                        f"Could not find interpretation function for op {op.name}"
                    )
                try:
                    result = implementation(functions, self, op, fetch(registers))
                except Exception as e:
                    op.emit_error("Error while interpreting op", e)
                values = result.values
                if len(values) != len(results):
                    self.raise_error(
                        f"Incorrect number of results for op {op.name}, expected "
                        f"{len(results)} but got {len(values)}"
                    )
                for index, value in zip(results, values, strict=True):
                    registers[index] = value
                for value, index in scoped:
                    local[value] = registers[index]
                if result.terminator_value is not None:
                    if isinstance(result.terminator_value, ReturnedValues):
                        return result.terminator_value.values
                    raise InterpretationError(f"{op.name} branches within a one-block region")
            return ()
        finally:
            self._ctx = enclosing
