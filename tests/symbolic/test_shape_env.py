"""ShapeEnv: symbols with hints, expect/assert guards, replacements, simplify, static_check.

The cases follow the seed document on GE's symbolic shapes (DESIGN.md section 7). Shape
functions do not use the ShapeEnv yet, so the tests decide shapes with small helpers written
the way a symbolic shape function will.
"""

from __future__ import annotations

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from tilegraph.formats.dims import Dim, dim_from_text, shape_symbol
from tilegraph.symbolic import GuardError, GuardKind, ShapeEnv, condition_text

s0, s1, s2, s3 = (shape_symbol(f"s{i}") for i in range(4))


def inputs(env: ShapeEnv, **shapes: tuple[int, ...]) -> dict[str, list[Dim]]:
    """Every axis of every input made symbolic, with the given sizes as hints."""
    return {
        name: [env.create_symbol(h, f"input '{name}' axis {i}") for i, h in enumerate(hints)]
        for name, hints in shapes.items()
    }


def broadcast_dim(env: ShapeEnv, a: Dim, b: Dim, op: str) -> Dim:
    """One output dim of a broadcast, decided as a symbolic shape function will."""
    if env.expect(sympy.Eq(a, b), op=op, reason="broadcast: equal dims"):
        return a
    if env.expect(sympy.Eq(a, 1), op=op, reason="broadcast: left dim is 1"):
        return b
    if env.expect(sympy.Eq(b, 1), op=op, reason="broadcast: right dim is 1"):
        return a
    env.assert_(sympy.false, op=op, reason=f"cannot broadcast {a} with {b}")
    raise AssertionError("unreachable")


def conditions(env: ShapeEnv, kind: GuardKind | None = None) -> list[sympy.Basic]:
    return [g.cond for g in env.guards if kind is None or g.kind is kind]


# ---- symbols, hints, modes -----------------------------------------------------------


def test_data_inputs_get_symbols_hints_and_sources():
    env = ShapeEnv()
    dims = inputs(env, data0=(4, 3), data1=(4,), data2=(7, 5))
    assert dims == {"data0": [s0, s1], "data1": [s2], "data2": [s3, shape_symbol("s4")]}
    assert env.hints() == {"s0": 4, "s1": 3, "s2": 4, "s3": 7, "s4": 5}
    assert env.source(s3) == "input 'data2' axis 0"
    assert env.hint(s0 * s3 + 1) == 29
    assert env.guards == []  # dynamic mode: no decision was made yet


def test_hint_of_an_unknown_symbol_is_a_clear_error():
    env = ShapeEnv()
    with pytest.raises(GuardError, match="no hint for s7"):
        env.hint(shape_symbol("s7") + 1)


def test_dynamic_duck_and_static_modes():
    shapes = {"x": (8, 16), "y": (8, 16)}
    dynamic = inputs(ShapeEnv("dynamic"), **shapes)
    assert dynamic["x"] != dynamic["y"]
    assert len({*dynamic["x"], *dynamic["y"]}) == 4

    duck_env = ShapeEnv("duck")
    duck = inputs(duck_env, **shapes)
    assert duck == {"x": [s0, s1], "y": [s0, s1]}
    # sharing is a decision on the hints: y's own axes are guarded equal to x's
    assert conditions(duck_env, GuardKind.EXPECT) == [sympy.Eq(s2, s0), sympy.Eq(s3, s1)]
    assert duck_env.check({"s0": 8, "s1": 16, "s2": 8, "s3": 16}) == []
    (failure,) = duck_env.check({"s0": 8, "s1": 16, "s2": 9, "s3": 16})
    assert "input 'y' axis 0" in failure.message and "duck" in failure.message

    static_env = ShapeEnv("static")
    assert inputs(static_env, **shapes) == {"x": [8, 16], "y": [8, 16]}
    assert static_env.check({"s0": 8, "s1": 16, "s2": 8, "s3": 16}) == []
    assert [f.guard.cond for f in static_env.check({"s0": 8, "s1": 32, "s2": 8, "s3": 16})] == [
        sympy.Eq(s1, 16)
    ]


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown shape mode 'lazy'"):
        ShapeEnv("lazy")  # type: ignore[arg-type]


def test_zero_one_specialisation():
    env = ShapeEnv()
    batch, width = inputs(env, x=(1, 5))["x"]
    assert batch == 1 and width == s1
    (guard,) = env.guards
    assert guard.kind is GuardKind.EXPECT and guard.cond == sympy.Eq(s0, 1)
    assert "input 'x' axis 0" in guard.reason
    # a later batch of 4 does not fit the artifact compiled for batch 1
    (failure,) = env.check({"s0": 4, "s1": 5})
    assert failure.kind is GuardKind.EXPECT and failure.values == {"s0": 4}

    plain = ShapeEnv(specialize_zero_one=False)
    assert inputs(plain, x=(1, 5))["x"] == [s0, s1]
    assert plain.guards == []
    # zero is always specialised: a symbol is a positive integer, it cannot be 0
    assert inputs(plain, y=(0,))["y"] == [0]
    assert plain.check({"s0": 1, "s1": 5, "s2": 0}) == []
    assert len(plain.check({"s0": 1, "s1": 5, "s2": 3})) == 1


def test_named_dims_are_one_symbol_and_must_agree():
    env = ShapeEnv()
    assert env.create_symbol(4, "input 'a' axis 0", name="batch") == shape_symbol("batch")
    assert env.create_symbol(4, "input 'b' axis 0", name="batch") == shape_symbol("batch")
    assert env.create_symbol(9, "input 'b' axis 1") == s0
    with pytest.raises(GuardError, match="input 'c' axis 0: size 5, but dimension 'batch' is 4"):
        env.create_symbol(5, "input 'c' axis 0", name="batch")


@pytest.mark.parametrize("mode", ["dynamic", "static"])
@pytest.mark.parametrize("size", [0, 1])
def test_a_specialised_named_dim_is_its_size_on_every_axis_that_names_it(mode, size):
    """A decoder's ``past_key`` and ``past_value`` share the dim ``past``; at the first step
    it is 0 on both. Zero is never a replacement (a symbol is positive), so the second axis
    came back as the symbol: its concat had ``past + 7`` rows against the keys' 7."""
    env = ShapeEnv(mode)  # type: ignore[arg-type]
    assert env.create_symbol(size, "input 'past_key' axis 2", name="past") == size
    assert env.create_symbol(size, "input 'past_value' axis 2", name="past") == size


# ---- expect guards: the Add broadcast ------------------------------------------------


@pytest.mark.parametrize(
    ("hints", "result", "recorded"),
    [
        ((4, 4), s0, [sympy.Eq(s0, s1)]),
        ((1, 4), s1, [sympy.Ne(s0, s1), sympy.Eq(s0, 1)]),
        ((4, 1), s0, [sympy.Ne(s0, s1), sympy.Ne(s0, 1), sympy.Eq(s1, 1)]),
    ],
    ids=["equal", "left-is-1", "right-is-1"],
)
def test_add_broadcast_branches_record_their_expect_guards(hints, result, recorded):
    env = ShapeEnv(specialize_zero_one=False)  # keep the 1 symbolic so the branch is a guard
    (a,), (b,) = inputs(env, x=(hints[0],), y=(hints[1],)).values()
    out = broadcast_dim(env, a, b, op="add_0")
    assert env.simplify(out) == env.simplify(result)
    assert conditions(env) == recorded
    assert all(g.kind is GuardKind.EXPECT and g.op == "add_0" for g in env.guards)
    assert env.check({"s0": hints[0], "s1": hints[1]}) == []


def test_broadcast_guard_fails_for_other_sizes_as_an_expect():
    env = ShapeEnv(specialize_zero_one=False)
    (a,), (b,) = inputs(env, x=(4,), y=(4,)).values()
    broadcast_dim(env, a, b, op="add_0")
    assert env.check({"s0": 6, "s1": 6}) == []
    failures = env.check({"s0": 6, "s1": 1})
    assert failures.asserts == [] and len(failures.expects) == 1
    message = failures.expects[0].message
    for part in ("s0 == s1", "s0 = 6 (input 'x' axis 0)", "s1 = 1 (input 'y' axis 0)"):
        assert part in message
    assert "add_0" in message and "recompile" in message


def test_broadcast_with_a_specialised_one():
    env = ShapeEnv()  # y's dim is the constant 1 (guarded at the input)
    (a,), (b,) = inputs(env, x=(4,), y=(1,)).values()
    assert b == 1
    assert broadcast_dim(env, a, b, op="add_0") == a
    # only "s0 != 1" is a decision; "s0 == 1" is then known false and "1 == 1" true
    assert [(g.op, g.cond) for g in env.guards] == [
        ("<inputs>", sympy.Eq(s1, 1)),
        ("add_0", sympy.Ne(s0, 1)),
    ]


# ---- assert guards: MatMul, Reshape, Slice -------------------------------------------


def matmul_shape(env: ShapeEnv, a: list[Dim], b: list[Dim], op: str) -> list[Dim]:
    env.assert_(sympy.Eq(a[1], b[0]), op=op, reason="MatMul: K of A equals K of B")
    return [a[0], b[1]]


def test_matmul_k_mismatch_fails_at_compile_time():
    env = ShapeEnv()
    dims = inputs(env, a=(2, 3), b=(4, 5))
    with pytest.raises(GuardError) as info:
        matmul_shape(env, dims["a"], dims["b"], op="matmul_7")
    text = str(info.value)
    for part in ("matmul_7", "s1 == s2", "s1 = 3 (input 'a' axis 1)", "s2 = 4 (input 'b' axis 0)"):
        assert part in text
    assert env.guards == []


def test_matmul_k_equality_is_an_assert_guard_and_a_replacement():
    env = ShapeEnv()
    dims = inputs(env, a=(2, 3), b=(3, 5))
    assert matmul_shape(env, dims["a"], dims["b"], op="matmul_7") == [s0, s3]
    (guard,) = env.guards
    assert guard.kind is GuardKind.ASSERT and guard.cond == sympy.Eq(s1, s2)
    assert env.simplify(s2) == s1
    failures = env.check({"s0": 2, "s1": 3, "s2": 4, "s3": 5})
    assert failures.expects == [] and [f.guard for f in failures.asserts] == [guard]
    assert "violate" in failures[0].message


def test_reshape_divisibility_is_a_mod_guard():
    env = ShapeEnv()
    a, b = inputs(env, x=(3, 4))["x"]
    # Reshape x to [-1, 2]: the element count must be even
    assert env.assert_(sympy.Eq(sympy.Mod(a * b, 2), 0), op="reshape_1", reason="-1 of [-1, 2]")
    assert (a, b) == (s0, s1)
    rows = s0 * s1 / 2
    assert env.hint(rows) == 6
    (guard,) = env.guards
    assert condition_text(guard.cond) == "Mod(s0*s1, 2) == 0"
    assert dim_from_text(condition_text(guard.cond).split(" == ")[0]) == sympy.Mod(s0 * s1, 2)
    assert env.check({"s0": 5, "s1": 2}) == []
    assert [f.kind for f in env.check({"s0": 5, "s1": 3})] == [GuardKind.ASSERT]
    # the guard holds from now on, without a new guard
    assert env.static_check(sympy.Eq(sympy.Mod(s1 * s0, 2), 0)) is True
    assert len(env.guards) == 1


def test_slice_bound():
    env = ShapeEnv()
    (n,) = inputs(env, x=(5,))["x"]
    # x[0:2] needs at least two elements
    env.assert_(sympy.Le(2, n), op="slice_3", reason="end 2 within the axis")
    assert conditions(env, GuardKind.ASSERT) == [sympy.Le(2, s0)]
    assert env.static_check(sympy.Ge(n, 2)) is True
    assert env.static_check(sympy.Lt(n, 2)) is False
    assert env.static_check(n + 3 >= 5) is True  # from the lower bound 2
    assert env.static_check(sympy.Ge(n, 3)) is None
    (failure,) = env.check({"s0": 1})
    assert failure.kind is GuardKind.ASSERT and "2 <= s0" in failure.message
    with pytest.raises(GuardError, match="slice_9"):
        fresh = ShapeEnv(specialize_zero_one=False)
        (m,) = inputs(fresh, x=(1,))["x"]
        fresh.assert_(sympy.Le(2, m), op="slice_9", reason="end 2 within the axis")


# ---- the step scenario: guards on new sizes decide recompilation ---------------------


def compile_concat_add(env: ShapeEnv) -> Dim:
    """Concat(x, y) + z along one axis: the sum must broadcast with z."""
    x, y, z = (env.create_symbol(h, f"input '{n}' axis 0") for n, h in HINTS.items())
    return broadcast_dim(env, x + y, z, op="add_2")


HINTS: dict[str, int] = {}


def test_step_scenario_recompiles_when_an_expect_guard_fails(monkeypatch):
    # step 0: first inputs x[2], y[3], z[5]; step 1: compile
    monkeypatch.setitem(HINTS, "x", 2)
    monkeypatch.setitem(HINTS, "y", 3)
    monkeypatch.setitem(HINTS, "z", 5)
    env = ShapeEnv()
    assert env.simplify(compile_concat_add(env)) == s0 + s1
    assert conditions(env) == [sympy.Eq(s0 + s1, s2)]
    assert env.simplify(s2) == s0 + s1
    # step 2: new sizes that still satisfy s0 + s1 == s2 reuse the artifact
    assert env.check({"s0": 4, "s1": 6, "s2": 10}) == []
    # step 3: z broadcasts now; the expect guard fails, naming the sizes -> recompile
    (failure,) = env.check({"s0": 4, "s1": 6, "s2": 1})
    assert failure.kind is GuardKind.EXPECT
    assert failure.values == {"s0": 4, "s1": 6, "s2": 1}
    assert "s0 + s1 == s2" in failure.message
    monkeypatch.setitem(HINTS, "z", 1)
    recompiled = ShapeEnv()
    recompiled_out = compile_concat_add(recompiled)
    assert recompiled_out == s0 + s1
    assert recompiled.check({"s0": 4, "s1": 6, "s2": 1}) == []


# ---- replacements and simplification -------------------------------------------------


@pytest.mark.parametrize("order", ["sum-first", "constant-first"])
def test_simplify_with_sum_and_constant(order):
    env = ShapeEnv()
    inputs(env, a=(2,), b=(3,), c=(5,))
    facts = [sympy.Eq(s2, s0 + s1), sympy.Eq(s0, 2)]
    for cond in facts if order == "sum-first" else facts[::-1]:
        assert env.expect(cond, op="op", reason="test")
    assert env.simplify(s2) == 2 + s1
    assert env.simplify(s0) == 2
    assert env.simplify(s2 * s0 - s1) == s1 + 4


def test_canonical_form_replaces_with_the_positive_solution():
    env = ShapeEnv()
    inputs(env, a=(5,), b=(4,))
    env.expect(sympy.Eq(s0 + 1, s1 + 2), op="op", reason="test")
    # s0 == s1 + 1, not s1 == s0 - 1 (which could not be seen to be positive)
    assert env.replacements.items() == [(s0, s1 + 1)]


def test_constant_beats_expression_beats_symbol():
    env = ShapeEnv()
    inputs(env, a=(3,), b=(3,), c=(6,))
    env.expect(sympy.Eq(s0, s1), op="op", reason="test")
    assert env.simplify(s1) == s0 and env.simplify(s0) == s0  # the newer symbol goes
    env.expect(sympy.Eq(s2, 2 * s1), op="op", reason="test")
    assert env.simplify(s2) == 2 * s0
    env.expect(sympy.Eq(s1, 3), op="op", reason="test")
    assert [env.simplify(s) for s in (s0, s1, s2)] == [3, 3, 6]


def test_equality_cycles_end():
    env = ShapeEnv()
    inputs(env, a=(7,), b=(7,), c=(7,))
    for lhs, rhs in [(s1, s0), (s2, s1), (s0, s2), (s2, s0)]:
        env.expect(sympy.Eq(lhs, rhs), op="op", reason="test")
    assert {env.simplify(s) for s in (s0, s1, s2)} == {s0}
    # the last two were already known: no guard for them
    assert len(env.guards) == 2


def test_nonlinear_equality_adds_no_replacement():
    env = ShapeEnv()
    inputs(env, a=(2,), b=(3,), c=(6,))
    env.expect(sympy.Eq(s0 * s1, s2), op="op", reason="test")
    assert env.simplify(s2) == s0 * s1  # s2 appears alone: it is solved for
    env.expect(sympy.Eq(sympy.Mod(s0 * s1, 4), 2), op="op", reason="test")
    assert len(env.replacements.items()) == 1


def test_static_check_three_answers_and_no_guards():
    env = ShapeEnv()
    inputs(env, a=(2,), b=(3,), c=(5,))
    env.expect(sympy.Eq(s2, s0 + s1), op="op", reason="test")
    env.expect(sympy.Eq(s0, 2), op="op", reason="test")
    before = list(env.guards)
    assert env.static_check(sympy.Eq(s2, s1 + 2)) is True  # from replacements
    assert env.static_check(s0 + s1 >= 2) is True  # symbols are positive integers
    assert env.static_check(sympy.Eq(s2, s1)) is False
    assert env.static_check(sympy.Eq(s1, 0)) is False
    assert env.static_check(sympy.Eq(s1, 3)) is None  # true on the hints, but not known
    assert env.static_check(s1 > 2) is None
    assert env.guards == before
    # a decided condition needs no guard when a shape function asks for it
    assert env.expect(sympy.Eq(s2, s1 + 2), op="op", reason="known") is True
    assert env.guards == before


def test_recorded_inequality_is_a_fact_both_ways():
    env = ShapeEnv()
    inputs(env, a=(2,), b=(3,))
    assert env.expect(sympy.Eq(s0, s1), op="op", reason="test") is False
    assert conditions(env) == [sympy.Ne(s0, s1)]
    assert env.static_check(sympy.Eq(s1, s0)) is False
    assert env.static_check(sympy.Ne(s1, s0)) is True


def test_check_names_an_unbound_symbol_and_its_input():
    env = ShapeEnv()
    inputs(env, a=(2,), b=(2,))
    env.expect(sympy.Eq(s0, s1), op="op", reason="test")
    with pytest.raises(GuardError, match=r"no value for s1 \(input 'b' axis 0\)"):
        env.check({"s0": 2})


# ---- properties ----------------------------------------------------------------------

SYMS = [shape_symbol(f"s{i}") for i in range(4)]

equalities = st.lists(
    st.tuples(
        st.sampled_from(["sym", "const", "sum", "shift"]),
        st.integers(0, 3),
        st.integers(0, 3),
        st.integers(0, 3),
        st.integers(1, 4),
    ),
    max_size=6,
)


def make_condition(kind: str, i: int, j: int, k: int, c: int) -> sympy.Basic:
    a, b, d = SYMS[i], SYMS[j], SYMS[k]
    return {
        "sym": sympy.Eq(a, b),
        "const": sympy.Eq(a, c),
        "sum": sympy.Eq(a, b + d),
        "shift": sympy.Eq(a + c, b + 1),
    }[kind]


def holds_on(cond: sympy.Basic, values: dict[str, int]) -> bool:
    """The truth of ``cond`` with the symbols replaced by ``values`` (plain sympy)."""
    result = cond.xreplace({shape_symbol(n): sympy.Integer(v) for n, v in values.items()})
    assert result in (sympy.true, sympy.false), result
    return bool(result)


@given(
    hints=st.lists(st.integers(2, 9), min_size=4, max_size=4),
    conds=equalities,
    free_values=st.lists(st.integers(2, 12), min_size=4, max_size=4),
)
def test_simplify_preserves_values_under_bindings_that_satisfy_the_guards(
    hints, conds, free_values
):
    env = ShapeEnv()
    for n, h in enumerate(hints):
        env.create_symbol(h, f"input 'x{n}' axis 0")
    for args in conds:
        cond = make_condition(*args)
        taken = env.expect(cond, op="op", reason="property")
        assert taken == holds_on(cond, env.hints())
    # the hints satisfy every guard, and simplify keeps every value on them
    assert env.check(env.hints()) == []
    probe = SYMS[0] * SYMS[1] + SYMS[2] - SYMS[3] + 7
    assert env.hint(env.simplify(probe)) == env.hint(probe)
    # new values: pick the representatives freely, derive the replaced symbols
    values = {s: v for s, v in zip(SYMS, free_values, strict=True) if s not in env.replacements}
    for s, expr in env.replacements.items():
        value = expr.xreplace({k: sympy.Integer(v) for k, v in values.items()})
        assert isinstance(value, sympy.Integer)
        values[s] = int(value)
    if all(v > 0 for v in values.values()) and not env.check(values):
        at = {k: sympy.Integer(v) for k, v in values.items()}
        assert sympy.sympify(env.simplify(probe)).xreplace(at) == probe.xreplace(at)


@given(
    hints=st.lists(st.integers(1, 6), min_size=4, max_size=4),
    conds=equalities,
    query=st.tuples(
        st.sampled_from(["sym", "const", "sum", "shift"]),
        st.integers(0, 3),
        st.integers(0, 3),
        st.integers(0, 3),
        st.integers(1, 4),
    ),
)
def test_static_check_never_contradicts_the_hints(hints, conds, query):
    env = ShapeEnv(specialize_zero_one=False)
    for n, h in enumerate(hints):
        env.create_symbol(h, f"input 'x{n}' axis 0")
    for args in conds:
        env.expect(make_condition(*args), op="op", reason="property")
    question = make_condition(*query)
    for q in (question, _negation(question)):
        guards = len(env.guards)
        decided = env.static_check(q)
        if decided is not None:
            assert decided == holds_on(q, env.hints())
        assert len(env.guards) == guards


def _negation(cond: sympy.Basic) -> sympy.Basic:
    return cond.negated if isinstance(cond, sympy.Rel) else ~cond  # type: ignore[operator]
