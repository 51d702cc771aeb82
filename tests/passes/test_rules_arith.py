"""algebraic-simplify arithmetic, activation, gemm and canonicalisation rules: each fires
where its brief says, and the reference interpreter computes the same outputs afterwards.

Exact rules are also checked bit for bit on special values (signed zeros, infinities, NaN)
with :func:`_check_bitwise`; fast-math rules at a looser stated tolerance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference

RNG = np.random.default_rng(11)
SPECIALS = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1.5, -2.25, 1e-40, 3e38], np.float32)
"""Float inputs for bitwise checks: signed zeros, infinities, NaN, a subnormal, a huge value."""

FAST_RTOL = 1e-4
"""Tolerance of the fast-math rules' semantic checks (they change rounding by a few ulps)."""


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _simplify(
    module: ModuleOp,
    rules: str,
    *,
    fast: bool = False,
    rtol: float = 1e-5,
    inputs: dict[str, np.ndarray] | None = None,
) -> dict[str, float | int]:
    """Run ``algebraic-simplify{only=rules}`` with the semantic check; its statistics."""
    options = f"only={rules}" + (" fast-math=true" if fast else "")
    with collecting_statistics() as collector:
        run_pipeline_checked(
            module, f"algebraic-simplify{{{options}}}", rtol=rtol, atol=rtol, inputs=inputs
        )
    return collector.as_dict().get("algebraic-simplify", {})


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values with equal signs of zero; NaN equals NaN."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    both_nan = np.isnan(a) & np.isnan(b)
    same = (a == b) & (np.signbit(a) == np.signbit(b))
    return bool(np.all(both_nan | same))


def _check_bitwise(module: ModuleOp, pipeline: str, inputs: dict[str, np.ndarray]) -> None:
    """Run ``pipeline`` and assert that the outputs are bit-identical on ``inputs``."""
    with np.errstate(all="ignore"):
        before = run_reference(module, inputs)
        run_pipeline(pipeline, make_context(), module)
        module.verify()
        after = run_reference(module, inputs)
    for b, a in zip(before, after, strict=True):
        assert _same_bits(a, b), f"{pipeline}: {b} became {a}"


def _unary_module(
    body: Callable[[GraphBuilder, SSAValue], SSAValue], shape: tuple[int, ...] = (9,)
) -> ModuleOp:
    b = GraphBuilder()
    x = b.input("x", list(shape))
    return b.build(body(b, x))


# ---- arith_rules ------------------------------------------------------------------------------

EXACT_IDENTITIES: list[tuple[str, Callable[[GraphBuilder, SSAValue], SSAValue], str]] = [
    ("add-zero", lambda b, x: b.op("add", x, b.constant(np.float32(-0.0))), "graph.add"),
    ("add-zero", lambda b, x: b.op("add", b.constant(np.float32(-0.0)), x), "graph.add"),
    ("sub-zero", lambda b, x: b.op("sub", x, b.constant(np.float32(0.0))), "graph.sub"),
    ("mul-one", lambda b, x: b.op("mul", b.constant(np.ones(9, np.float32)), x), "graph.mul"),
    ("div-one", lambda b, x: b.op("div", x, b.constant(np.float32(1))), "graph.div"),
    ("pow-one", lambda b, x: b.op("pow", x, b.constant(np.int64(1))), "graph.pow"),
    ("neg-neg", lambda b, x: b.op("neg", b.op("neg", x)), "graph.neg"),
    ("add-self", lambda b, x: b.op("add", x, x), "graph.add"),
    ("mul-neg-one", lambda b, x: b.op("mul", x, b.constant(np.float32(-1))), "graph.mul"),
]


@pytest.mark.parametrize(("rule", "body", "gone"), EXACT_IDENTITIES)
def test_exact_identities(rule: str, body, gone: str):
    module = _unary_module(body)
    assert _simplify(module, rule)[f"rule.{rule}"] >= 1
    assert gone not in _ops(module)
    # bit-exact on signed zeros, infinities, NaN, subnormals
    _check_bitwise(_unary_module(body), f"algebraic-simplify{{only={rule}}}", {"x": SPECIALS})


NOT_EXACT: list[tuple[str, Callable[[GraphBuilder, SSAValue], SSAValue]]] = [
    ("add-pos-zero", lambda b, x: b.op("add", x, b.constant(np.float32(0.0)))),
    ("mul-zero", lambda b, x: b.op("mul", x, b.constant(np.float32(0.0)))),
    ("sub-self", lambda b, x: b.op("sub", x, x)),
    ("div-self", lambda b, x: b.op("div", x, x)),
    ("reciprocal-reciprocal", lambda b, x: b.op("reciprocal", b.op("reciprocal", x))),
]


@pytest.mark.parametrize(("rule", "body"), NOT_EXACT)
def test_fast_math_identities(rule: str, body):
    """Each fast-math rule fires only with fast-math, keeps ordinary inputs, and really
    changes some special input (which is why it is fast-math)."""
    module = _unary_module(body)
    assert _simplify(module, rule).get(f"rule.{rule}", 0) == 0  # needs fast-math
    assert _simplify(module, rule, fast=True, rtol=FAST_RTOL)[f"rule.{rule}"] == 1
    with pytest.raises(AssertionError):
        _check_bitwise(
            _unary_module(body), f"algebraic-simplify{{only={rule} fast-math=true}}",
            {"x": SPECIALS},
        )  # fmt: skip


def test_pow_two_and_reciprocal_mul():
    b = GraphBuilder()
    x, y = b.input("x", [4, 5]), b.input("y", [4, 5])
    sq = b.op("pow", x, b.constant(np.float32(2.0)))
    q = b.op("mul", b.op("reciprocal", x), y)
    module = b.build(sq, q)
    stats = _simplify(module, "pow-two,reciprocal-mul", fast=True, rtol=FAST_RTOL)
    assert stats["rule.pow-two"] == 1 and stats["rule.reciprocal-mul"] == 1
    ops = _ops(module)
    assert ops["graph.pow"] == 0 and ops["graph.reciprocal"] == 0 and ops["graph.div"] == 1


def test_identities_keep_broadcast_and_layout():
    """A neutral element that broadcasts x, or an x + 0.0 without fast-math, stays."""
    b = GraphBuilder()
    x = b.input("x", [3], origin_format="ND")
    y = b.op("mul", x, b.constant(np.ones([2, 3], np.float32)))
    z = b.op("add", x, b.constant(np.float32(0.0)))
    module = b.build(y, z)
    assert _simplify(module, "mul-one,add-zero,add-self") == {}
    assert _ops(module)["graph.mul"] == 1 and _ops(module)["graph.add"] == 1


def test_integer_identities():
    b = GraphBuilder()
    x = b.input("x", [5], dtype="int32")
    big = b.constant(np.array([2**31 - 1, -(2**31), 0, 7, -7], np.int32))
    y = b.op("add", b.op("mul", b.op("add", x, big), b.constant(np.int32(-1))), x)
    z = b.op("add", b.op("add", y, y), b.constant(np.int32(0)))
    module = b.build(z)
    stats = _simplify(module, "add-zero,add-self,mul-neg-one")
    assert stats["rule.add-zero"] == 1 and stats["rule.add-self"] == 1
    assert stats["rule.mul-neg-one"] == 1


# ---- activation_rules -------------------------------------------------------------------------

CLIP_X = np.concatenate(
    [SPECIALS, np.array([-3, -1, -0.5, 0.25, 0.5, 2, 5, 10, -1e30, 1e30], np.float32)]
)
BOUND_CHOICES = [None, -np.inf, -1.0, -0.0, 0.0, 0.5, 2.0, np.inf]


def _clip_or_relu(b: GraphBuilder, x: SSAValue, bounds: tuple[float | None, float | None] | None):
    if bounds is None:
        return b.op("relu", x)
    lo, hi = (None if v is None else b.constant(np.float32(v)) for v in bounds)
    return b.op("clip", x, lo, hi)


def test_clip_compositions_are_bit_exact():
    """Many clip/relu pairs over bounds with signed zeros and infinities: the merge rules
    fire where legal and never change a bit, on inputs at and between the bounds."""
    rng = np.random.default_rng(3)
    b = GraphBuilder()
    x = b.input("x", [CLIP_X.size])
    outputs = []
    for _ in range(120):
        pair = []
        for _side in range(2):
            if rng.random() < 0.2:
                pair.append(None)  # relu
            else:
                pair.append(tuple(BOUND_CHOICES[i] for i in rng.integers(0, 8, 2)))
        outputs.append(_clip_or_relu(b, _clip_or_relu(b, x, pair[0]), pair[1]))
    module = b.build(*outputs)
    rules = "relu-clip-merge,clip-clip,clip-redundant,idempotent-unary"
    with collecting_statistics() as collector:
        _check_bitwise(module, f"algebraic-simplify{{only={rules}}}", {"x": CLIP_X})
    stats = collector.as_dict()["algebraic-simplify"]
    assert stats["rule.clip-clip"] > 30 and stats["rule.relu-clip-merge"] > 10
    assert stats["rule.clip-redundant"] > 0


def test_relu6_chain_and_idempotent():
    module = _unary_module(
        lambda b, x: b.op(
            "relu",
            b.op(
                "clip",
                b.op("relu", b.op("relu", x)),
                b.constant(np.float32(0)),
                b.constant(np.float32(6)),
            ),
        ),  # fmt: skip
        shape=(4, 8),
    )
    stats = _simplify(module, "relu-clip-merge,clip-clip,idempotent-unary")
    assert stats["rule.idempotent-unary"] == 1 and stats["rule.relu-clip-merge"] == 2
    assert _ops(module)["graph.clip"] == 1 and _ops(module)["graph.relu"] == 0


@pytest.mark.parametrize("rule", ["relu-of-abs", "abs-of-neg"])
def test_abs_rules_bit_exact(rule: str):
    inner, outer = ("abs", "relu") if rule == "relu-of-abs" else ("neg", "abs")
    body = lambda b, x: b.op(outer, b.op(inner, x))  # noqa: E731
    module = _unary_module(body)
    assert _simplify(module, rule)[f"rule.{rule}"] == 1
    _check_bitwise(_unary_module(body), f"algebraic-simplify{{only={rule}}}", {"x": SPECIALS})


def test_argmax_neg_keeps_ties_and_nan():
    data = np.array(
        [[1.0, 3.0, 3.0, -0.0], [0.0, -0.0, -5.0, -5.0], [np.nan, 1.0, np.nan, 2.0]], np.float32
    )
    b = GraphBuilder()
    x = b.input("x", [3, 4])
    n = b.op("neg", x)
    outs = [
        b.op(kind, n, axis=axis, keepdims=keep, select_last_index=last)
        for kind in ("arg_max", "arg_min")
        for axis in (0, 1, -1)
        for keep in (0, 1)
        for last in (0, 1)
    ]
    module = b.build(*outs)
    with collecting_statistics() as collector:
        _check_bitwise(module, "algebraic-simplify{only=argmax-neg}", {"x": data})
    assert collector.as_dict()["algebraic-simplify"]["rule.argmax-neg"] == len(outs)
    assert _ops(module)["graph.neg"] == 0


def test_argmax_monotone_is_fast_math_only():
    """exp rounds 1e-10 and 2e-10 to the same 1.0: arg_max(exp(x)) picks index 0, arg_max(x)
    index 1 — why the rule needs fast-math."""
    body = lambda b, x: b.op("arg_max", b.op("exp", x), axis=0)  # noqa: E731
    module = _unary_module(body, shape=(2,))
    assert _simplify(module, "argmax-monotone") == {}
    assert _simplify(module, "argmax-monotone", fast=True)["rule.argmax-monotone"] == 1
    with pytest.raises(AssertionError):
        _check_bitwise(
            _unary_module(body, shape=(2,)), "algebraic-simplify{only=argmax-monotone fast-math=true}",
            {"x": np.array([1e-10, 2e-10], np.float32)},
        )  # fmt: skip


def test_log_softmax():
    module = _unary_module(lambda b, x: b.op("log", b.op("softmax", x, axis=1)), shape=(3, 7))
    stats = _simplify(module, "log-softmax", fast=True, rtol=FAST_RTOL)
    assert stats["rule.log-softmax"] == 1
    assert _ops(module)["graph.log_softmax"] == 1 and _ops(module)["graph.softmax"] == 0


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_clip_compose_exhaustive(dtype: str):
    """Every pair of bounds (absent, extremes, signed zeros, ordered and crossed ranges):
    one clip with the composed bounds equals the two reference clips bit for bit."""
    from itertools import product

    from tilegraph.dialects.graph.elementwise import ClipOp
    from tilegraph.passes.simplify.activation_rules import _compose, _mixed_zero_signs

    dt = np.dtype(dtype)
    if dt.kind == "f":
        xs, choices = np.tile(CLIP_X, 3), BOUND_CHOICES
    else:
        info = np.iinfo(dt)
        xs = np.array([info.min, info.min + 1, -3, -1, 0, 1, 2, 5, info.max], dt)
        choices = [None, info.min, -1, 0, 2, info.max]

    kernel = ClipOp.make(GraphBuilder().input("x", [1], dtype))  # its reference kernel

    def clip(x: np.ndarray, bounds) -> np.ndarray:
        lo, hi = (None if v is None else np.asarray(v, dt) for v in bounds)
        return kernel.reference(x, lo, hi)[0]

    checked = 0
    for l1, h1, l2, h2 in product(choices, repeat=4):
        inner = (None if l1 is None else dt.type(l1), None if h1 is None else dt.type(h1))
        outer = (None if l2 is None else dt.type(l2), None if h2 is None else dt.type(h2))
        if _mixed_zero_signs(dt, inner, outer):
            continue
        merged = _compose(dt, inner, outer)
        assert _same_bits(clip(xs, merged), clip(clip(xs, inner), outer)), (inner, outer)
        checked += 1
    assert checked > len(choices) ** 3


# ---- gemm_rules -------------------------------------------------------------------------------


@pytest.mark.parametrize("bias_shape", [[5], [1, 5], [3, 1], [3, 5], []])
@pytest.mark.parametrize("bias_first", [False, True])
def test_matmul_add_to_gemm(bias_shape: list[int], bias_first: bool):
    b = GraphBuilder()
    a, w = b.input("a", [3, 4]), b.constant(_rand(4, 5))
    bias = b.constant(_rand(*bias_shape))
    mm = b.op("matmul", a, w)
    module = b.build(b.op("add", *((bias, mm) if bias_first else (mm, bias))))
    assert _simplify(module, "matmul-add-to-gemm")["rule.matmul-add-to-gemm"] == 1
    assert _ops(module)["graph.gemm"] == 1 and _ops(module)["graph.matmul"] == 0


def test_matmul_add_not_for_float16():
    b = GraphBuilder()
    a, w = b.input("a", [3, 4], dtype="float16"), b.input("w", [4, 5], dtype="float16")
    module = b.build(b.op("add", b.op("matmul", a, w), b.constant(_rand(5).astype(np.float16))))
    assert _simplify(module, "matmul-add-to-gemm") == {}


@pytest.mark.parametrize("trans", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_transpose_into_gemm(trans: tuple[int, int]):
    b = GraphBuilder()
    a = b.input("a", [3, 4] if trans[0] else [4, 3])
    w = b.input("w", [4, 5] if trans[1] else [5, 4])
    y = b.op(
        "gemm", b.op("transpose", a), b.op("transpose", w, perm=[1, 0]), b.constant(_rand(5)),
        transA=trans[0], transB=trans[1], alpha=0.5, beta=2.0,
    )  # fmt: skip
    module = b.build(y)
    assert _simplify(module, "transpose-into-gemm")["rule.transpose-into-gemm"] == 1
    assert _ops(module)["graph.transpose"] == 0


@pytest.mark.parametrize(
    ("kind", "scale", "rule"),
    [
        ("mul", 0.25, "gemm-scalar-mul"),
        ("div", -2.0, "gemm-scalar-mul"),
        ("mul", 0.3, "gemm-scalar-mul-any"),
        ("div", 7.0, "gemm-scalar-mul-any"),
    ],
)
@pytest.mark.parametrize("with_c", [True, False])
def test_gemm_scalar(kind: str, scale: float, rule: str, with_c: bool):
    def build() -> ModuleOp:
        b = GraphBuilder()
        a = b.input("a", [3, 4])
        c = b.constant(_rand(3, 5)) if with_c else None
        g = b.op("gemm", a, b.constant(_rand(4, 5)), c, alpha=1.5, beta=0.75)
        return b.build(b.op(kind, g, b.constant(np.float32(scale))))

    fast = rule.endswith("-any")
    other = "gemm-scalar-mul" if fast else "gemm-scalar-mul-any"
    assert _simplify(build(), other, fast=True) == {}  # the two split by power of two
    module = build()
    stats = _simplify(module, rule, fast=fast, rtol=FAST_RTOL if fast else 1e-6)
    assert stats[f"rule.{rule}"] == 1
    assert _ops(module)[f"graph.{kind}"] == 0


def test_gemm_scalar_power_of_two_bit_exact():
    def build() -> ModuleOp:
        b = GraphBuilder()
        a = b.input("a", [6, 4])
        g = b.op("gemm", a, b.constant(_rand(4, 5)), b.constant(_rand(5)), beta=0.5)
        return b.build(b.op("mul", b.constant(np.float32(0.125)), g))

    module = build()
    inputs = {"a": _rand(6, 4) * np.float32(1e3)}
    _check_bitwise(module, "algebraic-simplify{only=gemm-scalar-mul}", inputs)
    assert _ops(module)["graph.mul"] == 0


# ---- canonical_rules --------------------------------------------------------------------------


def test_commutative_order_lets_cse_merge():
    b = GraphBuilder()
    x, y = b.input("x", [2, 3]), b.input("y", [2, 3])
    c = b.constant(_rand(2, 3))
    outs = [b.op("add", x, y), b.op("add", y, x), b.op("mul", c, x), b.op("mul", x, c)]
    outs += [b.op("max", b.op("neg", x), x, name="mx")]  # float max: kept as written
    module = b.build(*outs)
    with collecting_statistics() as collector:
        run_pipeline_checked(module, "algebraic-simplify{only=commutative-order},cse")
    assert collector.as_dict()["algebraic-simplify"]["rule.commutative-order"] == 2
    assert _ops(module)["graph.add"] == 1 and _ops(module)["graph.mul"] == 1
    # a second run finds everything in order: the rule cannot loop
    assert _simplify(module, "commutative-order") == {}


def test_commutative_order_integers():
    b = GraphBuilder()
    x, y = b.input("x", [4], dtype="int64"), b.input("y", [4], dtype="int64")
    module = b.build(b.op("max", y, x), b.op("min", y, x), b.op("sum", y, x, y))
    stats = _simplify(module, "commutative-order")
    assert stats["rule.commutative-order"] == 3


FAST_CASES: list[tuple[str, Callable[[GraphBuilder, SSAValue], SSAValue], str, int]] = [
    (
        "reassociate-constants",
        lambda b, x: b.op("mul", b.constant(_rand(4)), b.op("mul", x, b.constant(np.float32(3)))),
        "graph.mul",
        1,
    ),
    (
        "reassociate-constants",
        lambda b, x: b.op("add", b.op("add", b.constant(_rand(3, 1)), x), b.constant(_rand(4))),
        "graph.add",
        1,
    ),
    (
        "distribute-constant",
        lambda b, x: b.op("mul", b.op("add", x, b.constant(_rand(3, 1))), b.constant(_rand(4))),
        "graph.mul",
        1,
    ),
    (
        "factor-common-operand",
        lambda b, x: b.op("add", b.op("mul", x, b.constant(_rand(4))), b.op("mul", x, x)),
        "graph.mul",
        1,
    ),
]


@pytest.mark.parametrize(("rule", "body", "op_name", "count"), FAST_CASES)
def test_fast_math_canonical(rule: str, body, op_name: str, count: int):
    module = _unary_module(body, shape=(2, 3, 4))
    assert _simplify(module, rule) == {}  # fast-math only
    stats = _simplify(module, rule, fast=True, rtol=FAST_RTOL)
    assert stats[f"rule.{rule}"] == 1
    assert _ops(module)[op_name] == count


def test_broadcast_minimize_needs_small_operands():
    """(A + b) + C with C as big as A stays; (A * b) * c with b, c small groups b * c."""
    b = GraphBuilder()
    x = b.input("x", [2, 3, 4])
    y = b.op("add", b.op("add", x, b.input("s", [4])), b.input("big", [2, 3, 4]))
    z = b.op("mul", b.op("mul", x, b.input("p", [3, 1])), b.input("q", [1, 4]))
    module = b.build(y, z)
    stats = _simplify(module, "broadcast-minimize", fast=True, rtol=FAST_RTOL)
    assert stats["rule.broadcast-minimize"] == 1
    small = [
        op for op in module.walk() if op.name == "graph.mul" and op.operands[0].name_hint == "p"
    ]
    assert len(small) == 1


def test_fast_math_rules_together_terminate():
    """All rules of this family at once on a chain that several of them match: a fixpoint
    is reached and the outputs hold at the fast-math tolerance."""
    b = GraphBuilder()
    x, y = b.input("x", [2, 3, 4]), b.input("y", [2, 3, 4])
    c1, c2 = b.constant(_rand(4)), b.constant(_rand(3, 1))
    t = b.op("mul", b.op("add", b.op("add", c1, x), c2), c1)
    u = b.op("add", b.op("mul", y, t), b.op("mul", t, x))
    v = b.op("add", b.op("add", u, u), b.constant(np.float32(-0.0)))
    module = b.build(v, b.op("add", x, y), b.op("add", y, x))
    rules = (
        "commutative-order,reassociate-constants,distribute-constant,factor-common-operand,"
        "broadcast-minimize,add-self,add-zero,mul-one,mul-zero"
    )
    stats = _simplify(module, rules, fast=True, rtol=1e-3)
    assert sum(stats.values()) >= 4
