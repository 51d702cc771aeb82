"""algebraic-simplify identity, cast, shape-movement and pad rules: each fires where its
legality conditions hold, leaves the op alone where they do not, and the reference
interpreter computes the same outputs afterwards (:func:`run_pipeline_checked`)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph.slicing import slice_bounds
from tilegraph.formats import DType
from tilegraph.passes.simplify.identity_rules import widens_exactly
from tilegraph.passes.simplify.pad_rules import compose_slices
from tilegraph.passes.statistics import collecting_statistics

RNG = np.random.default_rng(5)

ONNX_CODE = {"float32": 1, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "bool": 9}
ONNX_CODE |= {"float16": 10, "float64": 11, "uint8": 2, "uint16": 4, "uint32": 12}


def _rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _ops(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


def _i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _simplify(
    module: ModuleOp, rules: str, inputs: dict[str, np.ndarray] | None = None
) -> dict[str, float | int]:
    """Run ``algebraic-simplify{only=rules}`` (then ``dce``, so that op counts see only
    live ops) with the semantic check; the statistics of algebraic-simplify."""
    with collecting_statistics() as collector:
        run_pipeline_checked(module, f"algebraic-simplify{{only={rules}}},dce", inputs=inputs)
    return collector.as_dict().get("algebraic-simplify", {})


# ---- identity, dropout, casts -----------------------------------------------------------------


def test_identity_and_dropout():
    b = GraphBuilder()
    x = b.input("x", [1, 3, 4, 4], origin_format="NCHW")
    off = b.constant(np.array(False))
    y = b.op("identity", x)
    z = b.op("dropout", b.op("relu", y), b.constant(np.float32(0.3)), off)
    module = b.build(b.op("dropout", z))
    stats = _simplify(module, "identity,dropout-inference")
    assert stats == {"rule.identity": 1, "rule.dropout-inference": 2}
    assert _ops(module)["graph.identity"] == 0 and _ops(module)["graph.dropout"] == 0


def test_dropout_with_runtime_training_flag_stays():
    b = GraphBuilder()
    x = b.input("x", [3, 4])
    flag = b.input("flag", [], dtype="bool")
    module = b.build(b.op("dropout", x, None, flag))
    stats = _simplify(module, "dropout-inference", {"x": _rand(3, 4), "flag": np.array(False)})
    assert stats == {}
    assert _ops(module)["graph.dropout"] == 1


def test_cast_to_same_type():
    b = GraphBuilder()
    x = b.input("x", [2, 5], dtype="int32")
    module = b.build(b.op("cast", x, to=6))
    assert _simplify(module, "cast-to-same-type") == {"rule.cast-to-same-type": 1}
    assert _ops(module)["graph.cast"] == 0


@pytest.mark.parametrize(
    ("src", "mid", "dst", "fires"),
    [
        ("float16", "float32", "float64", True),
        ("float32", "float64", "float32", True),
        ("int8", "int32", "float32", True),
        ("uint8", "int16", "int64", True),
        ("int32", "float64", "int32", True),
        ("bool", "int8", "float32", True),
        ("float32", "float16", "float32", False),
        ("int32", "int8", "int32", False),
        ("float32", "int32", "float32", False),
        ("int32", "float32", "int32", False),
        ("int8", "uint8", "int32", False),
    ],
)
def test_cast_chain(src: str, mid: str, dst: str, fires: bool):
    b = GraphBuilder()
    x = b.input("x", [64], dtype=src)
    y = b.op("cast", b.op("cast", x, to=ONNX_CODE[mid]), to=ONNX_CODE[dst])
    module = b.build(y)
    # values that tell the narrowing chains apart: large, negative, fractional
    if src.startswith("float"):
        data = (RNG.standard_normal(64) * 3000).astype(src)
    elif src == "bool":
        data = RNG.integers(0, 2, 64).astype(bool)
    else:
        info = np.iinfo(src)
        data = RNG.integers(max(info.min, -100000), min(info.max, 100000), 64).astype(src)
    stats = _simplify(module, "cast-chain", {"x": data})
    assert stats.get("rule.cast-chain", 0) == int(fires)
    expected = 0 if fires and src == dst else 1 if fires else 2
    assert _ops(module)["graph.cast"] == expected


_EXACT = [DType(n) for n in ONNX_CODE]


@pytest.mark.parametrize(("src", "dst"), list(itertools.product(_EXACT, _EXACT)))
def test_widens_exactly_agrees_with_numpy(src: DType, dst: DType):
    """The widening table holds every extreme value of ``src`` through ``dst`` and back,
    and is never more generous than numpy's safe casting."""
    s, d = src.numpy, dst.numpy
    if s.kind == "b":
        extremes = np.array([False, True])
    elif s.kind == "f":
        info = np.finfo(s)
        extremes = np.array([info.max, info.min, info.tiny, info.smallest_subnormal, info.eps], s)
    else:
        iinfo = np.iinfo(s)
        extremes = np.array([iinfo.min, iinfo.max, iinfo.max - 1, 0], s)
    if widens_exactly(src, dst):
        with np.errstate(all="ignore"):
            back = extremes.astype(d).astype(s)
        np.testing.assert_array_equal(back, extremes)
        assert np.can_cast(s, d, "safe")
    else:
        assert src != dst


# ---- data-movement ops that move nothing ------------------------------------------------------


def test_noop_data_movement():
    b = GraphBuilder()
    x = b.input("x", [3, 1, 4])
    y = b.op(
        "slice", x, b.constant(_i64(0, -9)), b.constant(_i64(2**62, 9)), b.constant(_i64(0, 2))
    )
    y = b.op("tile", b.op("relu", y), b.constant(_i64(1, 1, 1)))
    y = b.op("expand", b.op("relu", y), b.constant(_i64(1, 4)))
    y = b.op("split", b.op("relu", y), axis=1, num_outputs=1)
    y = b.op("concat", b.op("relu", y), axis=0)
    z = b.op("flatten", b.op("reshape", y, b.constant(_i64(3, 4))), axis=1)
    pad = b.op("pad", b.op("relu", z), b.constant(_i64(0, 0, 0, 0)), mode="edge")
    module = b.build(pad)
    rules = "noop-slice,noop-tile,noop-expand,noop-split,noop-concat,noop-flatten,noop-pad"
    stats = _simplify(module, rules)
    assert stats == {f"rule.{r}": 1 for r in rules.split(",")}
    ops = _ops(module)
    assert ops["graph.relu"] == 5 and ops["graph.reshape"] == 1
    assert {n for n in ops if n.startswith("graph.")} == {
        "graph.relu",
        "graph.reshape",
        "graph.constant",
    }


@pytest.mark.parametrize(
    ("starts", "ends", "steps", "whole"),
    [
        ((0,), (5,), (1,), True),
        ((-5,), (2**31 - 1,), (1,), True),
        ((-100,), (100,), (1,), True),
        ((1,), (5,), (1,), False),
        ((0,), (4,), (1,), False),
        ((0,), (5,), (2,), False),
        ((-1,), (-100,), (-1,), False),
    ],
)
def test_noop_slice(starts: tuple[int], ends: tuple[int], steps: tuple[int], whole: bool):
    b = GraphBuilder()
    x = b.input("x", [5, 3])
    module = b.build(
        b.op(
            "slice",
            x,
            b.constant(_i64(*starts)),
            b.constant(_i64(*ends)),
            None,
            b.constant(_i64(*steps)),
        )
    )
    stats = _simplify(module, "noop-slice")
    assert stats.get("rule.noop-slice", 0) == int(whole)


# ---- transposes -------------------------------------------------------------------------------

_PERMS3 = list(itertools.permutations(range(3)))


@pytest.mark.parametrize("p1", _PERMS3)
@pytest.mark.parametrize("p2", _PERMS3)
def test_transpose_compose(p1: tuple[int, ...], p2: tuple[int, ...]):
    b = GraphBuilder()
    x = b.input("x", [2, 3, 4])
    module = b.build(b.op("transpose", b.op("transpose", x, perm=p1), perm=p2))
    stats = _simplify(module, "transpose-compose,transpose-identity")
    assert sum(stats.values()) >= 1
    composed = [p1[i] for i in p2]
    assert _ops(module)["graph.transpose"] == (0 if composed == [0, 1, 2] else 1)


@pytest.mark.parametrize("perm", list(itertools.permutations(range(4))))
def test_transpose_to_reshape(perm: tuple[int, ...]):
    shape = [1, 5, 1, 6]
    b = GraphBuilder()
    x = b.input("x", shape)
    module = b.build(b.op("transpose", x, perm=perm))
    stats = _simplify(module, "transpose-to-reshape")
    big = [p for p in perm if shape[p] != 1]
    fires = big == sorted(big) and list(perm) != sorted(perm)
    assert stats.get("rule.transpose-to-reshape", 0) == int(fires)
    assert _ops(module)["graph.reshape"] == int(fires)


# ---- reshape chains ---------------------------------------------------------------------------


@pytest.mark.parametrize("inner", ["reshape", "flatten", "squeeze", "unsqueeze", "reshape0"])
@pytest.mark.parametrize("outer", [(-1,), (4, -1), (2, 6, 1, 2), (24, 1)])
def test_reshape_chain(inner: str, outer: tuple[int, ...]):
    b = GraphBuilder()
    x = b.input("x", [2, 3, 1, 4])
    if inner == "reshape":
        mid = b.op("reshape", x, b.constant(_i64(6, 4)))
    elif inner == "reshape0":  # allowzero keeps a 0-free shape; a 0 copies in the outer
        mid = b.op("reshape", x, b.constant(_i64(0, -1)))
    elif inner == "flatten":
        mid = b.op("flatten", x, axis=2)
    elif inner == "squeeze":
        mid = b.op("squeeze", x, b.constant(_i64(2)))
    else:
        mid = b.op("unsqueeze", x, b.constant(_i64(0)))
    module = b.build(b.op("reshape", mid, b.constant(np.array(outer, np.int64))))
    stats = _simplify(module, "reshape-chain,reshape-to-same-shape")
    assert stats.get("rule.reshape-chain", 0) == 1
    assert _ops(module)["graph.reshape"] == 1
    assert sum(1 for n in _ops(module) if n in ("graph.flatten", "graph.squeeze")) == 0


@pytest.mark.parametrize("allowzero", [0, 1])
def test_reshape_chain_zero_copy(allowzero: int):
    """A 0 in the outer shape copies a dim of the middle tensor: resolved to the static
    final shape (allowzero = 0); with allowzero = 1 it is a 0-size dim (here: an empty
    input), kept as written."""
    b = GraphBuilder()
    x = b.input("x", [2, 12] if not allowzero else [0, 5])
    mid = b.op(
        "reshape", x, b.constant(_i64(6, 4) if not allowzero else _i64(5, 0)), allowzero=allowzero
    )
    outer = _i64(0, 2, 2) if not allowzero else _i64(0, 7)
    module = b.build(b.op("reshape", mid, b.constant(outer), allowzero=allowzero))
    assert _simplify(module, "reshape-chain") == {"rule.reshape-chain": 1}
    (reshape,) = [op for op in module.walk() if op.name == "graph.reshape"]
    assert reshape.operands[0] is module.body.block.first_op.body.block.args[0]  # type: ignore[attr-defined]


@pytest.mark.parametrize("outer", ["flatten", "squeeze", "unsqueeze"])
@pytest.mark.parametrize("inner", ["reshape", "flatten"])
def test_reshape_like_chain(inner: str, outer: str):
    b = GraphBuilder()
    x = b.input("x", [2, 3, 1, 4])
    if inner == "reshape":
        mid = b.op("reshape", x, b.constant(_i64(6, 1, 4)))
    else:
        mid = b.op("flatten", x, axis=3)  # [6, 4]
    if outer == "squeeze":
        y = (
            b.op("squeeze", mid, None)
            if inner == "reshape"
            else b.op("unsqueeze", mid, b.constant(_i64(0)))
        )
    elif outer == "unsqueeze":
        y = b.op("unsqueeze", mid, b.constant(_i64(-1)))
    else:
        y = b.op("flatten", mid, axis=0)
    module = b.build(y)
    assert _simplify(module, "reshape-like-chain") == {"rule.reshape-like-chain": 1}
    assert {n for n in _ops(module) if n.startswith("graph.")} == {
        "graph.reshape",
        "graph.constant",
    }


def test_reshape_to_same_shape():
    b = GraphBuilder()
    x = b.input("x", ["N", 6])
    same = b.op("reshape", x, b.constant(_i64(0, 6)))
    unknown = b.input("u", [2, 3])
    shape = b.input("s", [2], dtype="int64")
    other = b.op("reshape", b.op("reshape", unknown, shape), shape)  # ?x? to ?x?: kept
    module = b.build(same, other)
    inputs = {"x": _rand(3, 6), "u": _rand(2, 3), "s": _i64(3, 2)}
    stats = _simplify(module, "reshape-to-same-shape", inputs)
    assert stats == {"rule.reshape-to-same-shape": 1}
    assert _ops(module)["graph.reshape"] == 2


# ---- squeeze / unsqueeze ----------------------------------------------------------------------


@pytest.mark.parametrize("axes", [(0,), (2,), (-2,), (0, 2), (2, -4)])
def test_squeeze_unsqueeze_inverse(axes: tuple[int, ...]):
    b = GraphBuilder()
    x = b.input("x", [1, 3, 1, 4])
    y = b.input("y", [3, 4])
    sq = b.op("unsqueeze", b.op("squeeze", x, b.constant(_i64(*axes))), b.constant(_i64(*axes)))
    un = b.op("squeeze", b.op("unsqueeze", y, b.constant(_i64(*axes))), b.constant(_i64(*axes)))
    module = b.build(sq, un)
    assert _simplify(module, "squeeze-unsqueeze-inverse") == {"rule.squeeze-unsqueeze-inverse": 2}
    assert _ops(module)["graph.squeeze"] == 0 and _ops(module)["graph.unsqueeze"] == 0


_UNSQUEEZE_AXES = [(0,), (1,), (-1,), (0, 2), (1, -1)]


@pytest.mark.parametrize("a1", _UNSQUEEZE_AXES)
@pytest.mark.parametrize("a2", _UNSQUEEZE_AXES)
def test_merge_unsqueezes_and_squeezes(a1: tuple[int, ...], a2: tuple[int, ...]):
    b = GraphBuilder()
    x = b.input("x", [3, 4])
    up = b.op("unsqueeze", b.op("unsqueeze", x, b.constant(_i64(*a1))), b.constant(_i64(*a2)))
    # squeeze the result back in two steps, with the same axis lists
    down = b.op(
        "squeeze", b.op("squeeze", b.op("relu", up), b.constant(_i64(*a2))), b.constant(_i64(*a1))
    )
    module = b.build(up, down)
    stats = _simplify(module, "merge-unsqueezes,merge-squeezes")
    assert stats == {"rule.merge-unsqueezes": 1, "rule.merge-squeezes": 1}
    assert _ops(module)["graph.unsqueeze"] == 1 and _ops(module)["graph.squeeze"] == 1


def test_merge_squeezes_without_axes():
    b = GraphBuilder()
    x = b.input("x", [1, 3, 1, 4, 1])
    module = b.build(b.op("squeeze", b.op("squeeze", x, b.constant(_i64(-1))), None))
    assert _simplify(module, "merge-squeezes") == {"rule.merge-squeezes": 1}
    assert _ops(module)["graph.squeeze"] == 1


# ---- slices and concats -----------------------------------------------------------------------


def _random_slice(rng: np.random.Generator, dims: list[int]) -> tuple[np.ndarray, ...]:
    """Constant slice parameters on a random subset of axes, mostly non-empty, with
    negative indices, clamped ends ("to the end" sentinels) and steps of either sign."""
    rank = len(dims)
    axes = rng.choice(rank, size=rng.integers(1, rank + 1), replace=False)
    starts, ends, steps = [], [], []
    for a in axes:
        d = int(dims[a])
        step = int(rng.choice([1, 1, 2, 2, 3, -1, -2]))
        start = int(rng.integers(-d, d))
        if step > 0:
            end = int(rng.choice([2**62, start + int(rng.integers(1, d + 2)) * step]))
        else:
            end = int(rng.choice([-(2**62), start - int(rng.integers(1, d + 2))]))
        starts.append(start)
        ends.append(end)
        steps.append(step)
    return tuple(np.asarray(v, np.int64) for v in (starts, ends, axes, steps))


@pytest.mark.parametrize("seed", range(60))
def test_merge_slices_random(seed: int):
    """Random slice pairs: the merge fires when legal and always computes the same."""
    rng = np.random.default_rng(seed)
    b = GraphBuilder()
    x = b.input("x", [7, 9, 5])
    first = _random_slice(rng, [7, 9, 5])
    inner = b.op("slice", x, *(b.constant(a) for a in first))
    middle = inner.type.origin_shape  # type: ignore[attr-defined]
    second = _random_slice(rng, [max(int(d), 1) for d in middle])
    module = b.build(b.op("slice", inner, *(b.constant(a) for a in second)))
    shared = set(first[2].tolist()) & set(second[2].tolist())
    steps = dict(zip(first[2].tolist(), first[3].tolist(), strict=True))
    outer_steps = dict(zip(second[2].tolist(), second[3].tolist(), strict=True))
    legal = all(steps[a] > 0 and outer_steps[a] > 0 for a in shared)
    stats = _simplify(module, "merge-slices", {"x": _rand(7, 9, 5)})
    assert stats.get("rule.merge-slices", 0) == int(legal)
    assert _ops(module)["graph.slice"] == (1 if legal else 2)


@pytest.mark.parametrize(
    ("inner", "outer"),
    [((1, 9, 2), (1, -1, 1)), ((2, 100, 1), (1, 5, 2)), ((0, 7, 3), (-2, 2**62, 1))],
)
def test_compose_slices(inner: tuple[int, int, int], outer: tuple[int, int, int]):
    """The composed slice of an axis takes what the two slices take, in order."""
    data = np.arange(7)
    s1, e1, st1 = inner
    b0, b1, _ = slice_bounds(7, s1, e1, st1)
    mid = data[b0:b1:st1]
    c0, c1, _ = slice_bounds(len(mid), *outer)
    expected = mid[c0 : c1 : outer[2]]
    composed = compose_slices(7, inner, outer)
    assert composed is not None
    start, end, step = composed
    np.testing.assert_array_equal(data[start:end:step], expected)
    assert len(expected) > 0


def test_merge_concats():
    b = GraphBuilder()
    x = b.input("x", [2, 3])
    inner = b.op("concat", x, b.op("relu", x), axis=-1)
    deeper = b.op("concat", inner, x, axis=1)
    shared = b.op("concat", x, x, axis=1)  # used twice: stays
    module = b.build(b.op("concat", x, deeper, shared, axis=1), shared)
    stats = _simplify(module, "merge-concats")
    assert stats == {"rule.merge-concats": 2}
    assert _ops(module)["graph.concat"] == 2


# ---- reduce + unsqueeze -----------------------------------------------------------------------


_REDUCE_CASES = [
    *itertools.product(["reduce_sum", "reduce_max", "reduce_mean"], [(1,), (0, 2), (-1,)]),
    ("arg_max", (1,)),
    ("arg_min", (-1,)),
]


@pytest.mark.parametrize(("kind", "axes"), _REDUCE_CASES)
def test_reduce_keepdims(kind: str, axes: tuple[int, ...]):
    b = GraphBuilder()
    x = b.input("x", [2, 3, 4])
    if kind.startswith("arg_"):
        r = b.op(kind, x, axis=axes[0], keepdims=0)
    else:
        r = b.op(kind, x, b.constant(_i64(*axes)), keepdims=0)
    unsq = [a % 3 for a in axes]
    module = b.build(b.op("unsqueeze", r, b.constant(_i64(*unsq))))
    assert _simplify(module, "reduce-keepdims") == {"rule.reduce-keepdims": 1}
    assert _ops(module)["graph.unsqueeze"] == 0


def test_reduce_keepdims_other_axes_stay():
    b = GraphBuilder()
    x = b.input("x", [2, 3, 4])
    r = b.op("reduce_sum", x, b.constant(_i64(1)), keepdims=0)
    module = b.build(b.op("unsqueeze", r, b.constant(_i64(2))))
    assert _simplify(module, "reduce-keepdims") == {}


# ---- pads into convs and pools ----------------------------------------------------------------


@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("strides", [1, 2])
def test_pad_into_conv(rank: int, strides: int):
    spatial = rank - 2
    b = GraphBuilder()
    fmt = {4: "NCHW", 5: "NCDHW"}.get(rank, "ND")
    x = b.input("x", [1, 3, *[6] * spatial], origin_format=fmt)
    w = b.constant(_rand(4, 3, *[3] * spatial), fmt)
    pads = [0, 0, *range(1, spatial + 1), 0, 0, *[2] * spatial]
    padded = b.op("pad", x, b.constant(_i64(*pads)))
    kind = "conv2d" if rank == 4 else "conv"
    y = b.op(
        kind, padded, w, b.constant(_rand(4)), strides=[strides] * spatial, pads=[1] * 2 * spatial
    )
    module = b.build(y)
    assert _simplify(module, "pad-into-conv") == {"rule.pad-into-conv": 1}
    assert _ops(module)["graph.pad"] == 0


@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize("own_pads", [0, 1])
def test_pad_into_max_pool(ceil_mode: int, own_pads: int):
    b = GraphBuilder()
    x = b.input("x", [1, 2, 7, 6], origin_format="NCHW")
    ninf = b.constant(np.float32(-np.inf))
    padded = b.op("pad", x, b.constant(_i64(0, 0, 1, 0, 0, 0, 1, 1)), ninf)
    y = b.op(
        "max_pool",
        padded,
        kernel_shape=[3, 3],
        strides=[2, 2],
        ceil_mode=ceil_mode,
        pads=[own_pads] * 4,
    )
    module = b.build(y)
    assert _simplify(module, "pad-into-pool") == {"rule.pad-into-pool": 1}
    assert _ops(module)["graph.pad"] == 0


@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize(
    ("include", "own_pads", "fires"), [(1, 1, True), (0, 0, True), (0, 1, False)]
)
def test_pad_into_avg_pool(ceil_mode: int, include: int, own_pads: int, fires: bool):
    b = GraphBuilder()
    x = b.input("x", [1, 2, 7, 6], origin_format="NCHW")
    padded = b.op("pad", x, b.constant(_i64(0, 0, 1, 0, 0, 0, 0, 1)))
    y = b.op(
        "avg_pool",
        padded,
        kernel_shape=[3, 3],
        strides=[2, 2],
        ceil_mode=ceil_mode,
        count_include_pad=include,
        pads=[own_pads] * 4,
    )
    module = b.build(y)
    assert _simplify(module, "pad-into-pool").get("rule.pad-into-pool", 0) == int(fires)
    assert _ops(module)["graph.pad"] == int(not fires)


def test_pad_into_pool_wrong_fill_stays():
    b = GraphBuilder()
    x = b.input("x", [1, 2, 6, 6], origin_format="NCHW")
    p = b.constant(_i64(0, 0, 1, 1, 0, 0, 1, 1))
    zero_max = b.op("max_pool", b.op("pad", x, p), kernel_shape=[3, 3])
    ninf = b.constant(np.float32(-np.inf))
    inf_avg = b.op("avg_pool", b.op("pad", x, p, ninf), kernel_shape=[3, 3], count_include_pad=1)
    module = b.build(zero_max, inf_avg)
    assert _simplify(module, "pad-into-pool") == {}
    assert _ops(module)["graph.pad"] == 2
