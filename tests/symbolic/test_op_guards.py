"""The seed document's guard cases through the graph ops' own shape functions.

Each op is built on symbolic input types with a ShapeEnv active (as a Session's compilation
does): the shape function decides on the hints and records its guards in the env.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import f32
from xdsl.ir import Block

from tilegraph.dialects.graph import ConstantOp, GraphOp, ShapeError
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.data_movement import ConcatOp, GatherOp, SliceOp, SplitOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.pooling import MaxPoolOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.symbolic import GuardKind, ShapeEnv
from tilegraph.symbolic.guards import condition_text
from tilegraph.symbolic.inference import shape_env


def _inputs(env: ShapeEnv, *shapes: tuple[int | str, ...]) -> list:
    """Block arguments whose string dims are symbols of ``env`` with the given hints:
    ``("s0:3", 4)`` is a dim s0 with hint 3 and a static 4."""
    types = []
    for shape in shapes:
        dims = []
        for d in shape:
            if isinstance(d, str):
                name, hint = d.split(":")
                dims.append(env.create_symbol(int(hint), f"test {name}", name=name))
            else:
                dims.append(d)
        types.append(TensorType(dims, f32))
    return list(Block(arg_types=types).args)


def _make(env: ShapeEnv, cls: type[GraphOp], *operands, **attrs) -> TensorType:
    with shape_env(env):
        op = cls.make(*operands, **attrs)
    t = op.results[0].type
    assert isinstance(t, TensorType)
    return t


def _guards(env: ShapeEnv) -> list[tuple[str, str]]:
    return [(g.kind.value, condition_text(g.cond)) for g in env.guards if g.op != "<inputs>"]


@pytest.mark.parametrize(
    ("hints", "result", "recorded"),
    [
        ((3, 3), "a", [("expect", "a == b")]),
        ((1, 3), "b", [("expect", "a != b"), ("expect", "a == 1")]),
        ((3, 1), "a", [("expect", "a != b"), ("expect", "a != 1"), ("expect", "b == 1")]),
    ],
)
def test_add_broadcast_takes_a_branch_per_hints_with_its_expect_guard(hints, result, recorded):
    env = ShapeEnv("dynamic", specialize_zero_one=False)
    x, y = _inputs(env, (f"a:{hints[0]}",), (f"b:{hints[1]}",))
    t = _make(env, AddOp, x, y)
    assert t.origin_shape == (sympy.Symbol(result, integer=True, positive=True),)
    assert _guards(env) == recorded
    assert all(g.kind is GuardKind.EXPECT for g in env.guards)


def test_add_of_dims_that_cannot_broadcast_on_the_hints_is_refused():
    env = ShapeEnv("dynamic")
    x, y = _inputs(env, ("a:3",), ("b:4",))
    with pytest.raises(ShapeError, match="do not broadcast"):
        _make(env, AddOp, x, y)


def test_matmul_k_equality_is_an_assert_guard_that_fails_at_compile_time_on_bad_hints():
    env = ShapeEnv("dynamic")
    a, b = _inputs(env, ("m:2", "k:4"), ("j:4", "n:5"))
    t = _make(env, MatMulOp, a, b)
    assert [str(d) for d in t.origin_shape] == ["m", "n"]
    assert _guards(env) == [("assert", "k == j")]
    bad = ShapeEnv("dynamic")
    a, b = _inputs(bad, ("m:2", "k:4"), ("j:5", "n:5"))
    with pytest.raises(ShapeError, match=r"K of the lhs equals K of the rhs: k == j does not hold"):
        _make(bad, MatMulOp, a, b)


def test_reshape_records_the_divisibility_guard():
    env = ShapeEnv("dynamic")
    (x,) = _inputs(env, ("s0:3", "s1:4"))
    shape = ConstantOp(np.array([-1, 2], np.int64))
    t = _make(env, ReshapeOp, x, shape.results[0])
    assert _guards(env) == [("assert", "Mod(s0*s1, 2) == 0")]
    assert t.origin_shape == (
        sympy.floor(
            sympy.Symbol("s0", integer=True, positive=True)
            * sympy.Symbol("s1", integer=True, positive=True)
            / 2
        ),
        2,
    )
    assert env.check({"s0": 3, "s1": 5}).asserts  # 15 elements do not split in 2


def test_slice_from_2_needs_2_le_s0():
    env = ShapeEnv("dynamic")
    (x,) = _inputs(env, ("s0:5", 8))
    starts = ConstantOp(np.array([2], np.int64)).results[0]
    ends = ConstantOp(np.array([2**62], np.int64)).results[0]
    t = _make(env, SliceOp, x, starts, ends)
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    assert t.origin_shape == (s0 - 2, 8)
    assert ("assert", "2 <= s0") in _guards(env)
    assert env.check({"s0": 1}).asserts


def test_pool_output_is_a_floor_expression_with_the_window_guard():
    env = ShapeEnv("dynamic")
    (x,) = _inputs(env, (1, 3, "h:9", "w:10"))
    t = _make(env, MaxPoolOp, x, kernel_shape=[3, 3], strides=[2, 2])
    h, w = (sympy.Symbol(n, integer=True, positive=True) for n in "hw")
    assert t.origin_shape[2:] == (sympy.floor((h - 3) / 2) + 1, sympy.floor((w - 3) / 2) + 1)
    assert ("assert", "h - 3 >= 0") in _guards(env)


def test_step_scenario_concat_then_add_recompiles_when_s0_plus_s1_eq_s2_fails():
    """step 0: compile with hints (2, 3, 5): Add decides s0 + s1 == s2 (an expect guard);
    step 1 and 2: new sizes satisfy it (reuse); step 3: s2 = 1 breaks it (recompile)."""
    env = ShapeEnv("dynamic")
    a, b, c = _inputs(env, ("s0:2",), ("s1:3",), ("s2:5",))
    with shape_env(env):
        cat = ConcatOp.make(a, b, axis=0)
        add = AddOp.make(cat.results[0], c)
    assert _guards(env) == [("expect", "s0 + s1 == s2")]
    s0, s1 = (sympy.Symbol(n, integer=True, positive=True) for n in ("s0", "s1"))
    t = add.results[0].type
    assert isinstance(t, TensorType) and t.origin_shape == (s0 + s1,)
    assert not env.check({"s0": 2, "s1": 3, "s2": 5})  # step 1
    assert not env.check({"s0": 4, "s1": 6, "s2": 10})  # step 2
    failed = env.check({"s0": 2, "s1": 3, "s2": 1})  # step 3
    assert [f.kind for f in failed] == [GuardKind.EXPECT]
    assert "recompile" in failed[0].message


def test_concat_asserts_the_other_axes_are_equal():
    env = ShapeEnv("dynamic")
    a, b = _inputs(env, ("n:2", "c:3"), ("m:2", "d:5"))
    t = _make(env, ConcatOp, a, b, axis=1)
    n, c, d = (sympy.Symbol(x, integer=True, positive=True) for x in "ncd")
    assert t.origin_shape == (n, c + d)
    assert _guards(env) == [("assert", "m == n")]


def test_gather_bounds_and_split_sizes_are_assert_guards_named_by_the_op():
    env = ShapeEnv("dynamic")
    (x,) = _inputs(env, ("s0:4", "s1:6"))
    indices = ConstantOp(np.array([0, 3], np.int64)).results[0]
    t = _make(env, GatherOp, x, indices, axis=0)
    assert t.origin_shape[0] == 2
    sizes = ConstantOp(np.array([2, 4], np.int64)).results[0]
    with shape_env(env):
        SplitOp.make(x, sizes, axis=1)
    found = {(g.op, condition_text(g.cond)) for g in env.guards if g.op != "<inputs>"}
    assert found == {("graph.gather", "3 < s0"), ("graph.split", "s1 == 6")}
    assert env.check({"s0": 3, "s1": 6}).asserts and env.check({"s0": 4, "s1": 7}).asserts


def test_without_an_env_undecidable_dims_stay_unknown_and_nothing_is_recorded():
    env = ShapeEnv("dynamic")
    x, y = _inputs(env, ("a:3",), ("b:3",))
    t = AddOp.make(x, y).results[0].type
    assert isinstance(t, TensorType) and t.origin_shape == (-1,)
    assert _guards(env) == []
