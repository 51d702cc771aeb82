"""The interpreter's index arithmetic (:class:`IndexArithFunctions`) computes what xDSL's
own ``arith`` implementations compute, on index values (negative ones included: ``divsi``
truncates, ``remsi`` keeps the dividend's sign, ``floordivsi`` rounds down, the unsigned
``cmpi`` predicates compare two's complement) and on other integer types (which it hands
to xDSL's)."""

from __future__ import annotations

import pytest
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32
from xdsl.interpreter import Interpreter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region

from tilegraph.runtime.tile_interpreter import IndexArithFunctions

BINARY = [
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.DivSIOp,
    arith.FloorDivSIOp,
    arith.RemSIOp,
]


def _module(element) -> ModuleOp:
    block = Block(arg_types=[element, element])
    a, b = block.args
    builder = Builder(InsertPoint.at_end(block))
    results = [builder.insert(cls(a, b)).results[0] for cls in BINARY]
    results += [builder.insert(arith.CmpiOp(a, b, p)).results[0] for p in range(10)]
    three = builder.insert(arith.ConstantOp(IntegerAttr(3, element))).results[0]
    results.append(builder.insert(arith.AddiOp(three, a)).results[0])
    builder.insert(func.ReturnOp(*results))
    fn = func.FuncOp("f", ([element, element], [r.type for r in results]), Region(block))
    return ModuleOp([fn])


def _run(module: ModuleOp, functions, a: int, b: int):
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(ArithFunctions())
    if functions is not None:
        interpreter.register_implementations(functions, override=True)
    return interpreter.call_op("f", (a, b))


@pytest.mark.parametrize("element", [IndexType(), i32])
@pytest.mark.parametrize(("a", "b"), [(7, 3), (-7, 3), (7, -3), (-7, -3), (0, 5), (12, 4)])
def test_index_arith_matches_xdsl(element, a, b):
    module = _module(element)
    ours = _run(module, IndexArithFunctions(), a, b)
    theirs = _run(module, None, a, b)
    assert [int(v) for v in ours] == [int(v) for v in theirs]


def test_minsi_maxsi_have_an_implementation():
    block = Block(arg_types=[IndexType(), IndexType()])
    a, b = block.args
    builder = Builder(InsertPoint.at_end(block))
    lo = builder.insert(arith.MinSIOp(a, b)).results[0]
    hi = builder.insert(arith.MaxSIOp(a, b)).results[0]
    builder.insert(func.ReturnOp(lo, hi))
    fn = func.FuncOp("f", ([IndexType()] * 2, [IndexType()] * 2), Region(block))
    assert _run(ModuleOp([fn]), IndexArithFunctions(), -4, 9) == (-4, 9)
