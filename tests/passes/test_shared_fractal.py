"""The format engine gives an elementwise op a shared FRACTAL_NZ storage only when all its
slots have one fractal: a bool (1 byte: 16x32) next to float32 (16x16) keeps ND, else the
vector kernel cannot walk them with one tile (a Where selecting between two matmul results
on a computed bool went to the host)."""

from __future__ import annotations

from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph import GraphOp
from tilegraph.formats import Format
from tilegraph.passes.layout_plan import LayoutPlanner


def _choices(build) -> list:
    b = GraphBuilder()
    out = build(b)
    module = b.build(out)
    (op,) = [o for o in module.walk() if isinstance(o, GraphOp) and o.name == out.owner.name]
    return LayoutPlanner("ascend910b").choices(op)


def test_a_bool_and_floats_share_no_fractal():
    def where(b: GraphBuilder):
        c, x, y = b.input("c", [32, 48], "bool"), b.input("x", [32, 48]), b.input("y", [32, 48])
        return b.op("where", c, x, y)

    assert all(choice.shared != Format.FRACTAL_NZ for choice in _choices(where))


def test_floats_of_one_fractal_do():
    def add(b: GraphBuilder):
        return b.op("add", b.input("x", [32, 48]), b.input("y", [32, 48]))

    assert any(choice.shared == Format.FRACTAL_NZ for choice in _choices(add))
