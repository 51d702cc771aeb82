"""The interpreter's walk of one-block regions (:class:`TileInterpreter`) computes what
xDSL's own walk computes — nested loops reading values of the blocks around them (an inner
loop reading a value of the outer loop's body, which changes per outer iteration), loop-
carried values, calls — and fails as xDSL's does: an op with no implementation, an
exception inside one, an unknown symbol. With a listener it takes xDSL's walk (every op is
reported)."""

from __future__ import annotations

import pytest
from xdsl.builder import Builder, InsertPoint
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.interpreter import Interpreter, OpCounter
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import InterpretationError

from tilegraph.runtime.region_runner import TileInterpreter

INDEX = IndexType()


def _const(builder: Builder, value: int):
    return builder.insert(arith.ConstantOp(IntegerAttr(value, INDEX))).results[0]


def _nested_sum_module() -> ModuleOp:
    """f(n, scale) = sum over i < n, j < i + 1 of (i * scale + j), by two nested loops with
    a carried sum; g(n) calls f(n, 3) and adds 1."""
    block = Block(arg_types=[INDEX, INDEX])
    n, scale = block.args
    b = Builder(InsertPoint.at_end(block))
    zero, one = _const(b, 0), _const(b, 1)

    outer_body = Block(arg_types=[INDEX, INDEX])
    i, acc = outer_body.args
    ob = Builder(InsertPoint.at_end(outer_body))
    bound = ob.insert(arith.AddiOp(i, one)).results[0]
    base = ob.insert(arith.MuliOp(i, scale)).results[0]  # a value of this block, read inside
    inner_body = Block(arg_types=[INDEX, INDEX])
    j, inner_acc = inner_body.args
    ib = Builder(InsertPoint.at_end(inner_body))
    term = ib.insert(arith.AddiOp(base, j)).results[0]
    total = ib.insert(arith.AddiOp(inner_acc, term)).results[0]
    ib.insert(scf.YieldOp(total))
    inner = ob.insert(scf.ForOp(zero, bound, one, [acc], Region(inner_body)))
    ob.insert(scf.YieldOp(inner.results[0]))
    loop = b.insert(scf.ForOp(zero, n, one, [zero], Region(outer_body)))
    b.insert(func.ReturnOp(loop.results[0]))
    f = func.FuncOp("f", ([INDEX, INDEX], [INDEX]), Region(block))

    gblock = Block(arg_types=[INDEX])
    gb = Builder(InsertPoint.at_end(gblock))
    three = _const(gb, 3)
    called = gb.insert(func.CallOp("f", [gblock.args[0], three], [INDEX])).results[0]
    plus = gb.insert(arith.AddiOp(called, _const(gb, 1))).results[0]
    gb.insert(func.ReturnOp(plus))
    g = func.FuncOp("g", ([INDEX], [INDEX]), Region(gblock))
    return ModuleOp([f, g])


def _interpreter(cls: type[Interpreter], module: ModuleOp, arith_impls: bool = True):
    interpreter = cls(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(ScfFunctions())
    if arith_impls:
        interpreter.register_implementations(ArithFunctions())
    return interpreter


def _expected(n: int, scale: int) -> int:
    return sum(i * scale + j for i in range(n) for j in range(i + 1))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_nested_loops_and_calls_match_xdsl(n):
    module = _nested_sum_module()
    ours = _interpreter(TileInterpreter, module).call_op("g", (n,))
    theirs = _interpreter(Interpreter, module).call_op("g", (n,))
    assert ours == theirs == (_expected(n, 3) + 1,)


def test_an_op_with_no_implementation_fails_as_in_xdsl():
    module = _nested_sum_module()
    for cls in (TileInterpreter, Interpreter):
        with pytest.raises(InterpretationError, match="arith.constant"):
            _interpreter(cls, module, arith_impls=False).call_op("g", (2,))


def test_an_error_inside_an_implementation_names_the_op():
    module = _nested_sum_module()
    with pytest.raises(Exception, match="Error while interpreting op") as ours:
        _interpreter(TileInterpreter, module).call_op("g", ("not an index",))
    with pytest.raises(Exception, match="Error while interpreting op") as theirs:
        _interpreter(Interpreter, module).call_op("g", ("not an index",))
    assert type(ours.value) is type(theirs.value)


def test_with_a_listener_every_op_is_reported():
    module = _nested_sum_module()
    counts = []
    for cls in (TileInterpreter, Interpreter):
        counter = OpCounter()
        interpreter = _interpreter(cls, module)
        interpreter.listeners = (counter,)
        assert interpreter.call_op("g", (4,)) == (_expected(4, 3) + 1,)
        counts.append(dict(counter.ops))
    assert counts[0] == counts[1] and counts[0]["arith.addi"] > 10


def test_symbols_are_found_once_and_unknown_ones_fail_as_in_xdsl():
    module = _nested_sum_module()
    interpreter = _interpreter(TileInterpreter, module)
    assert (
        interpreter.call_op("f", (3, 2)) == interpreter.call_op("f", (3, 2)) == (_expected(3, 2),)
    )
    assert interpreter.get_op_for_symbol("f") is interpreter.get_op_for_symbol("f")
    for cls in (TileInterpreter, Interpreter):
        with pytest.raises(InterpretationError, match="Could not find symbol"):
            _interpreter(cls, module).call_op("missing", ())
