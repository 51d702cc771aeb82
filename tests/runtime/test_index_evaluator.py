"""Every consumer of index arithmetic computes MLIR's semantics, through the one evaluator
(:mod:`tilegraph.dialects.index_arith`): the tile interpreter, the fast executor (scalar
code and code on batches of indices), the cycle model (its generated issuing code and its
trip-count evaluation) and the kernel walk run the same ops on negative operands and agree
with values computed here from the definitions (``divsi`` rounds toward zero, ``remsi``
keeps the dividend's sign, ``floordivsi`` rounds down, ``ceildivsi`` up, the unsigned ops
read 64-bit two's complement). And no consumer keeps a table of its own."""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region, SSAValue

from tilegraph.cost_model.cycles import program as cycles_program
from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.dialects import index_arith
from tilegraph.dialects.tile import SetFlagOp
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis import kernel_walk
from tilegraph.lowering.analysis.kernel_walk import KernelWalk
from tilegraph.runtime import tile_interpreter
from tilegraph.runtime.fast_executor import batching, codegen
from tilegraph.runtime.fast_executor.batching import NestPlan
from tilegraph.runtime.fast_executor.codegen import CompiledModule, _FunctionWriter, compile_module
from tilegraph.runtime.tile_interpreter import IndexArithFunctions

INDEX = IndexType()
CASES = [(-7, 2), (7, -2), (-7, -2), (7, 2), (0, 3), (-6, 3), (5, 7), (-5, 7), (2**33 + 5, 3)]
M = 2**64


def _u(v: int) -> int:
    return v % M


def _s(v: int) -> int:
    return v - M if v >= M // 2 else v


def _trunc(a: int, b: int) -> int:
    return math.trunc(Fraction(a, b))


# The definitions, in terms of exact rational division: what MLIR's arith ops compute.
DEFINITIONS: dict[str, Callable[[int, int], int]] = {
    "addi": lambda a, b: a + b,
    "subi": lambda a, b: a - b,
    "muli": lambda a, b: a * b,
    "divsi": _trunc,
    "remsi": lambda a, b: a - b * _trunc(a, b),
    "floordivsi": lambda a, b: math.floor(Fraction(a, b)),
    "ceildivsi": lambda a, b: math.ceil(Fraction(a, b)),
    "minsi": min,
    "maxsi": max,
    "divui": lambda a, b: _s(_u(a) // _u(b)),
    "remui": lambda a, b: _s(_u(a) - _u(b) * (_u(a) // _u(b))),
    "ceildivui": lambda a, b: _s(math.ceil(Fraction(_u(a), _u(b)))),
    "minui": lambda a, b: a if _u(a) <= _u(b) else b,
    "maxui": lambda a, b: a if _u(a) >= _u(b) else b,
    "cmpi_eq": lambda a, b: int(a == b),
    "cmpi_ne": lambda a, b: int(a != b),
    "cmpi_slt": lambda a, b: int(a < b),
    "cmpi_sle": lambda a, b: int(a <= b),
    "cmpi_sgt": lambda a, b: int(a > b),
    "cmpi_sge": lambda a, b: int(a >= b),
    "cmpi_ult": lambda a, b: int(_u(a) < _u(b)),
    "cmpi_ule": lambda a, b: int(_u(a) <= _u(b)),
    "cmpi_ugt": lambda a, b: int(_u(a) > _u(b)),
    "cmpi_uge": lambda a, b: int(_u(a) >= _u(b)),
    # index -> i32 -> index: the low 32 bits, sign-extended
    "index_cast": lambda a, b: (a + 2**31) % 2**32 - 2**31,
}
PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]


def test_the_definitions_on_the_issues_examples():
    assert DEFINITIONS["remsi"](-7, 2) == -1
    assert DEFINITIONS["floordivsi"](-7, 2) == -4
    assert DEFINITIONS["divsi"](-7, 2) == -3
    assert DEFINITIONS["ceildivsi"](-7, 2) == -3


def _const(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, INDEX))).results[0]


def _probe(b: Builder, name: str, x: SSAValue, y: SSAValue) -> SSAValue:
    """``name`` applied to x, y as an index value (a compare through ``select``)."""
    if name.startswith("cmpi_"):
        flag = b.insert(arith.CmpiOp(x, y, PREDICATES.index(name[5:]))).results[0]
        return b.insert(arith.SelectOp(flag, _const(b, 1), _const(b, 0))).results[0]
    if name == "index_cast":
        narrow = b.insert(arith.IndexCastOp(x, i32)).results[0]
        return b.insert(arith.IndexCastOp(narrow, INDEX)).results[0]
    cls = next(c for c, s in index_arith.BINARY.items() if s.name == name)
    return b.insert(cls(x, y)).results[0]


def _scalar_function(
    finish: Callable[[Builder, list[SSAValue]], None] | None = None,
) -> tuple[func.FuncOp, list[SSAValue], list[int]]:
    """f() computing every definition on every case from constants, returning them (or
    ending with ``finish``); its results and the values they must have."""
    block = Block()
    b = Builder(InsertPoint.at_end(block))
    results, expected = [], []
    for a, c in CASES:
        x, y = _const(b, a), _const(b, c)
        for name, definition in DEFINITIONS.items():
            results.append(_probe(b, name, x, y))
            expected.append(definition(a, c))
    if finish is None:
        b.insert(func.ReturnOp(*results))
    else:
        finish(b, results)
        b.insert(func.ReturnOp())
    types = [r.type for r in results] if finish is None else []
    return func.FuncOp("f", ([], types), Region(block)), results, expected


def test_the_interpreter():
    fn, _, expected = _scalar_function()
    interpreter = Interpreter(ModuleOp([fn]))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(IndexArithFunctions())
    assert [int(v) for v in interpreter.call_op("f", ())] == expected


def test_the_fast_executor_scalar_code():
    fn, _, expected = _scalar_function()
    assert [int(v) for v in compile_module(ModuleOp([fn])).run("f", ())] == expected


def test_the_fast_executor_batched_code():
    """Operands varying along a batch: the code the fast executor writes for them, run on
    arrays of the cases."""
    block = Block(arg_types=[INDEX, INDEX])
    x, y = block.args
    b = Builder(InsertPoint.at_end(block))
    results = [_probe(b, name, x, y) for name in DEFINITIONS]
    b.insert(func.ReturnOp(*results))
    fn = func.FuncOp("g", ([INDEX] * 2, [INDEX] * len(results)), Region(block))
    module = CompiledModule(ModuleOp([]))
    writer = _FunctionWriter(module, fn)
    writer.plan = NestPlan(varying={x: frozenset({0}), y: frozenset({0})})
    for op in block.ops:
        if not isinstance(op, func.ReturnOp | arith.ConstantOp):
            assert writer.index_expression(op) is not None
    writer.plan.varying.update(
        {op.results[0]: frozenset({0}) for op in block.ops if op.results and op.operands}
    )
    writer.block(list(block.ops)[:-1], 0)
    scope = dict(module.namespace)
    scope[writer.name(x)] = np.array([a for a, _ in CASES], dtype=np.int64)
    scope[writer.name(y)] = np.array([c for _, c in CASES], dtype=np.int64)
    exec("\n".join(writer.lines), scope)  # noqa: S102
    for name, result in zip(DEFINITIONS, results, strict=True):
        got = np.broadcast_to(scope[writer.name(result)], (len(CASES),))
        assert [int(v) for v in got] == [DEFINITIONS[name](a, c) for a, c in CASES], name


def test_the_kernel_walk():
    fn, results, expected = _scalar_function()
    walk = KernelWalk(fn)
    assert list(walk) == []
    assert [int(walk.value(r)) for r in results] == expected


def _flag_slots(b: Builder, results: list[SSAValue]) -> None:
    for r in results:
        b.insert(SetFlagOp("MTE2", "V", 0, r))


def _loops_around_zero(b: Builder, results: list[SSAValue]) -> None:
    """Per value r, loops from r to 0 and from 0 to r: r is the second's trips less the
    first's."""
    zero, one = _const(b, 0), _const(b, 1)
    for r in results:
        for lb, ub in ((r, zero), (zero, r)):
            body = Block(arg_types=[INDEX])
            body.add_op(scf.YieldOp())
            b.insert(scf.ForOp(lb, ub, one, [], body))


def test_the_cycle_model_issuing_code():
    """Each value the slot of a ``set_flag``: the offset the generated code issues it with."""
    fn, _, expected = _scalar_function(_flag_slots)
    program = compile_kernel(fn, hardware_preset("test"))
    issued: list[int] = []
    program.flags(0, 1, lambda i, reads, writes, offset: issued.append(int(offset)))
    assert issued == expected


def test_the_cycle_model_trip_counts():
    """:meth:`KernelProgram.shape` evaluates loop bounds without running the loops."""
    fn, _, expected = _scalar_function(_loops_around_zero)
    trips, _ = compile_kernel(fn, hardware_preset("test")).shape(0, 1)
    assert trips is not None
    assert [up - down for down, up in zip(trips[::2], trips[1::2], strict=True)] == expected


def test_every_form_of_the_evaluator_agrees_with_the_definitions():
    block = Block(arg_types=[INDEX, INDEX])
    x, y = block.args
    b = Builder(InsertPoint.at_end(block))
    for name in DEFINITIONS:
        if name == "index_cast":
            continue
        result = _probe(b, name, x, y)
        op = result.owner
        if isinstance(op, arith.SelectOp):  # the compare under it
            op = op.cond.owner
        assert isinstance(op, (arith.CmpiOp, *index_arith.BINARY))
        scalar, vector = index_arith.evaluator(op), index_arith.vector_evaluator(op)
        assert scalar is not None and vector is not None
        a = np.array([p for p, _ in CASES], dtype=np.int64)
        c = np.array([q for _, q in CASES], dtype=np.int64)
        want = [DEFINITIONS[name](p, q) for p, q in CASES]
        assert [int(scalar(p, q)) for p, q in CASES] == want, name
        assert [int(v) for v in vector(a, c)] == want, name


# ---- no consumer evaluates with a table of its own --------------------------------------

CONSUMERS = [tile_interpreter, codegen, batching, cycles_program, kernel_walk]
EVALUATED = {cls.__name__ for cls in index_arith.INDEX_OPS}


def test_the_interpreter_implements_exactly_the_evaluators_ops():
    implemented = {cls for cls, _ in IndexArithFunctions._impls()}
    assert implemented - {arith.ConstantOp} == set(index_arith.INDEX_OPS)


def test_batching_varies_exactly_the_evaluators_ops():
    assert set(batching._INDEX_OPS) == set(index_arith.INDEX_OPS)


@pytest.mark.parametrize("module", CONSUMERS, ids=lambda m: m.__name__)
def test_no_consumer_keeps_a_table_of_its_own(module):
    """No dict keyed by an index op class, no ``operator`` functions, no tuple or dict of
    Python operator symbols: a consumer asks :mod:`tilegraph.dialects.index_arith`."""
    tree = ast.parse(inspect.getsource(module))
    symbols = {"+", "-", "*", "//", "%", "==", "!=", "<", "<=", ">", ">="}
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict | ast.DictComp):
            keys = node.keys if isinstance(node, ast.Dict) else [node.key]
            for key in keys:
                assert not (isinstance(key, ast.Attribute) and key.attr in EVALUATED), (
                    f"{module.__name__}: a table keyed by arith.{key.attr}"
                )
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names]
            assert "operator" not in names, f"{module.__name__} imports operator"
        if isinstance(node, ast.Dict | ast.Tuple | ast.List | ast.Set):
            items = node.values if isinstance(node, ast.Dict) else node.elts
            found = {e.value for e in items if isinstance(e, ast.Constant)} & symbols
            assert not found, f"{module.__name__}: a table of operators {found}"
