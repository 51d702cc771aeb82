"""The ``optimal`` storage-format strategy: hand-checked optima, brute force, light models."""

from __future__ import annotations

import itertools
import random
import time
from types import SimpleNamespace

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block, Region, SSAValue

from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.graph.elementwise import ReluOp, SigmoidOp
from tilegraph.dialects.graph.nn import Conv2dOp, LrnOp
from tilegraph.dialects.graph.pooling import MaxPoolOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.passes.layout_plan import LayoutPlanner
from tilegraph.passes.storage import ge, naive, optimal
from tilegraph.passes.storage.problem import SelectionProblem

NCHW = Format.NCHW


def nchw(*shape: int) -> TensorType:
    return TensorType(list(shape), f32, NCHW)


class _Builder:
    """A function under construction: NCHW activations, NCHW-labelled constants."""

    def __init__(self, *arg_types: TensorType):
        self.block = Block(arg_types=list(arg_types))
        self.ops = []

    @property
    def args(self):
        return self.block.args

    def add(self, op):
        self.ops.append(op)
        return op.results[0]

    def const(self, t: TensorType) -> SSAValue:
        shape = [d for d in t.origin_shape if isinstance(d, int)]
        return self.add(ConstantOp(np.full(shape, 0.5, np.float32), t))

    def conv(self, x: SSAValue, cout: int, bias: bool = True) -> SSAValue:
        t = x.type
        assert isinstance(t, TensorType)
        cin = t.origin_shape[1]
        assert isinstance(cin, int)
        w = self.const(nchw(cout, cin, 3, 3))
        b = self.const(TensorType([cout], f32, NCHW)) if bias else None
        return self.add(Conv2dOp.make(x, w, b, pads=[1, 1, 1, 1]))

    def function(self, *outputs: SSAValue) -> func.FuncOp:
        self.block.add_ops([*self.ops, func.ReturnOp(*outputs)])
        fn = func.FuncOp(
            "f", ([a.type for a in self.args], [o.type for o in outputs]), Region(self.block)
        )
        ModuleOp([fn]).verify()
        return fn


def problem_of(fn: func.FuncOp) -> SelectionProblem:
    return SelectionProblem(fn, LayoutPlanner())


def brute_force(problem: SelectionProblem, pin_heavy: bool = True) -> int:
    """The minimum of ``problem.cost`` over every plan the strategy may choose."""
    options = [optimal.allowed_choices(problem, op, pin_heavy) for op in problem.ops]
    best = None
    for combo in itertools.product(*options):
        cost = problem.cost(dict(zip(problem.ops, combo, strict=True))).activation_bytes
        best = cost if best is None else min(best, cost)
    assert best is not None
    return best


def plan_count(problem: SelectionProblem, pin_heavy: bool = True) -> int:
    n = 1
    for op in problem.ops:
        n *= len(optimal.allowed_choices(problem, op, pin_heavy))
    return n


def check(result: optimal.OptimalResult, problem: SelectionProblem) -> None:
    assert result.status == optimal.OPTIMAL
    assert result.certificate_ok, (result.cost, result.bound)
    assert result.cost == problem.cost(result.plan).activation_bytes
    assert set(result.plan) == set(problem.ops)
    for op, choice in result.plan.items():
        assert choice in problem.choices[op]


# ---- hand-made cases ----------------------------------------------------------------------
def test_seed_conv_relu_conv_relu():
    """The seed example: the optimum is one conversion at the input and one at the output;
    [1,16,8,8] f32 is 4096 bytes as NCHW and as NC1HWC0 [1,1,8,8,16]: 2 * (4096 + 4096)."""
    b = _Builder(nchw(1, 16, 8, 8))
    r1 = b.add(ReluOp.make(b.conv(b.args[0], 16)))
    r2 = b.add(ReluOp.make(b.conv(r1, 16, bias=False)))
    problem = problem_of(b.function(r2))
    result = optimal.solve(problem)
    check(result, problem)
    assert result.cost == 2 * (4096 + 4096)
    assert result.bound == pytest.approx(16384)
    assert problem.cost(result.plan).activation_count == 2
    assert problem.cost(naive.solve(problem)).activation_bytes == 4 * 8192


def test_padding_counts_in_the_bytes():
    """C=20 pads to C1*C0 = 32: NCHW 20*64*4 = 5120 bytes, NC1HWC0 [1,2,8,8,16] 8192 bytes."""
    b = _Builder(nchw(1, 20, 8, 8))
    r = b.add(ReluOp.make(b.conv(b.args[0], 20)))
    problem = problem_of(b.function(r))
    result = optimal.solve(problem)
    check(result, problem)
    assert result.cost == 2 * (5120 + 8192)


def test_convert_after_the_pool_not_before():
    """conv -> relu -> lrn (NCHW only) -> 2x2/2 pool -> conv, [1,16,8,8]: the optimum converts
    the pooled [1,16,4,4] (1024 bytes each way) rather than the lrn output, which is what GE's
    backward spreading from the second conv does (pool in 5HD).
    Optimum: input 8192 + conv->lrn 8192 + pooled 2048 + output 2048 = 20480."""
    b = _Builder(nchw(1, 16, 8, 8))
    r = b.add(ReluOp.make(b.conv(b.args[0], 16)))
    n = b.add(LrnOp.make(r, size=3))
    p = b.add(MaxPoolOp.make(n, kernel_shape=[2, 2], strides=[2, 2]))
    out = b.conv(p, 16)
    problem = problem_of(b.function(out))
    result = optimal.solve(problem)
    check(result, problem)
    assert result.cost == 20480 == brute_force(problem)
    assert result.cost <= problem.cost(ge.solve(problem)).activation_bytes
    assert result.cost <= problem.cost(naive.solve(problem)).activation_bytes


def test_value_returned_and_consumed():
    """A value both returned (origin view) and fed to a conv: one conversion serves the conv,
    the return reads the origin view; conversions of one value to one type are shared."""
    b = _Builder(nchw(1, 16, 8, 8))
    r = b.add(ReluOp.make(b.args[0]))
    c1 = b.conv(r, 16)
    c2 = b.conv(r, 16)
    s = b.add(AddOp.make(c1, c2))
    problem = problem_of(b.function(r, s))
    result = optimal.solve(problem)
    check(result, problem)
    # r (or x) converted once for both convs, s converted back once: 2 * 8192
    assert result.cost == 16384 == brute_force(problem)


def test_no_choices_is_trivially_optimal():
    b = _Builder(nchw(1, 16, 8, 8))
    r = b.add(LrnOp.make(b.args[0], size=3))
    problem = problem_of(b.function(r))
    result = optimal.solve(problem)
    check(result, problem)
    assert result.cost == 0 and result.variables == 0


def test_unpinned_heavy_ops_reach_zero():
    """Without pinning, every plain kernel moves nothing: the optimum is 0 bytes."""
    b = _Builder(nchw(1, 16, 8, 8))
    r = b.add(ReluOp.make(b.conv(b.args[0], 16)))
    problem = problem_of(b.function(r))
    result = optimal.solve(problem, pin_heavy=False)
    check(result, problem)
    assert result.cost == 0 == brute_force(problem, pin_heavy=False)


# ---- brute force on random graphs ---------------------------------------------------------
def random_function(seed: int, size: int) -> func.FuncOp:
    """A random DAG over [1, C, H, W] activations: convs, relu/sigmoid, adds (also x + x),
    pools (5HD or plain), LRN (plain only), channel concats, several returned values."""
    rng = random.Random(seed)
    b = _Builder(nchw(1, rng.choice([16, 20]), 8, 8))
    values: list[SSAValue] = [b.args[0]]
    for _ in range(size):
        x = rng.choice(values[-3:])
        t = x.type
        assert isinstance(t, TensorType)
        _, c, h, _w = t.origin_shape
        kind = rng.choice(["conv", "conv", "relu", "sigmoid", "add", "pool", "lrn", "concat"])
        if kind == "conv":
            v = b.conv(x, rng.choice([16, 20, 32]), bias=rng.random() < 0.5)
        elif kind in ("relu", "sigmoid"):
            v = b.add((ReluOp if kind == "relu" else SigmoidOp).make(x))
        elif kind == "add":
            y = rng.choice([u for u in values if u.type == t])
            v = b.add(AddOp.make(x, y))
        elif kind == "pool" and isinstance(h, int) and h >= 4:
            v = b.add(MaxPoolOp.make(x, kernel_shape=[2, 2], strides=[2, 2]))
        elif kind == "lrn":
            v = b.add(LrnOp.make(x, size=3))
        elif kind == "concat":
            same_hw = [
                u
                for u in values
                if isinstance(u.type, TensorType) and u.type.origin_shape[2:] == t.origin_shape[2:]
            ]
            v = b.add(ConcatOp.make(x, rng.choice(same_hw), axis=1))
        else:
            v = b.add(ReluOp.make(x))
        values.append(v)
    outputs = [values[-1]]
    if rng.random() < 0.5 and len(values) > 2:
        outputs.append(rng.choice(values[1:-1]))
    return b.function(*outputs)


@pytest.mark.parametrize("seed", range(24))
def test_brute_force(seed: int):
    rng = random.Random(1000 + seed)
    for size in (rng.randint(5, 12), 8, 6, 4):
        problem = problem_of(random_function(seed, size))
        if plan_count(problem) <= 800:
            break
    else:
        pytest.skip("no small enough graph for this seed")
    result = optimal.solve(problem)
    check(result, problem)
    assert result.cost == brute_force(problem)
    assert result.cost <= problem.cost(ge.solve(problem)).activation_bytes
    assert result.cost <= problem.cost(naive.solve(problem)).activation_bytes


@pytest.mark.parametrize("seed", range(6))
def test_brute_force_unpinned(seed: int):
    for size in (6, 4, 3):
        problem = problem_of(random_function(seed, size))
        if plan_count(problem, pin_heavy=False) <= 800:
            break
    result = optimal.solve(problem, pin_heavy=False)
    check(result, problem)
    assert result.cost == brute_force(problem, pin_heavy=False)


# ---- time limit ---------------------------------------------------------------------------
def _fake_milp(status: int, with_x: bool):
    real = optimal.milp

    def fake(c, **kwargs):
        res = real(c, **kwargs)
        return SimpleNamespace(
            status=status,
            message="Time limit reached.",
            x=res.x if with_x else None,
            fun=res.fun if with_x else None,
            get={"mip_dual_bound": 0.0, "mip_node_count": 7}.get,
        )

    return fake


def test_time_limit_keeps_best_found(monkeypatch):
    problem = problem_of(random_function(3, 8))
    monkeypatch.setattr(optimal, "milp", _fake_milp(1, with_x=True))
    result = optimal.solve(problem, time_limit=0.5)
    assert result.status == optimal.TIME_LIMIT
    assert "not proven" in result.message
    assert result.cost == problem.cost(result.plan).activation_bytes
    assert result.cost <= problem.cost(ge.solve(problem)).activation_bytes
    assert result.bound == 0.0


def test_time_limit_without_solution_falls_back(monkeypatch):
    problem = problem_of(random_function(3, 8))
    monkeypatch.setattr(optimal, "milp", _fake_milp(1, with_x=False))
    result = optimal.solve(problem, time_limit=0.5)
    assert result.status == optimal.TIME_LIMIT_FALLBACK
    assert "no solution found" in result.message
    heuristic = min(
        problem.cost(ge.solve(problem)).activation_bytes,
        problem.cost(naive.solve(problem)).activation_bytes,
    )
    assert result.cost == heuristic
    assert not result.certificate_ok or result.cost == 0


def test_real_time_limit_option():
    problem = problem_of(random_function(5, 10))
    result = optimal.solve(problem, time_limit=30.0)
    check(result, problem)


# ---- light models -------------------------------------------------------------------------
def _has_infer_origin_format() -> bool:
    from tilegraph.passes.registry import tilegraph_passes

    return "infer-origin-format" in tilegraph_passes()


needs_origin = pytest.mark.skipif(
    not _has_infer_origin_format(),
    reason="infer-origin-format is not registered yet: without origin formats nothing "
    "can take NC1HWC0 and the comparison is meaningless",
)

_PROBLEMS: dict[str, list[SelectionProblem]] = {}


def light_problems(name: str) -> list[SelectionProblem]:
    if name not in _PROBLEMS:
        import tilegraph
        from tilegraph.frontend.light_models import light_model
        from tilegraph.passes.context import make_context
        from tilegraph.passes.pipelines import run_pipeline

        module = tilegraph.load_onnx(light_model(name))
        run_pipeline("infer-origin-format", make_context(), module)
        fns = [op for op in module.walk() if isinstance(op, func.FuncOp)]
        _PROBLEMS[name] = [problem_of(fn) for fn in fns]
    return _PROBLEMS[name]


_FAST = ["squeezenet", "inception_v1", "shufflenet", "resnet50", "inception_v2", "densenet121"]
_SLOW = ["vgg19", "bvlc_alexnet", "zfnet512"]
LIGHT = [*_FAST, *(pytest.param(n, marks=pytest.mark.slow) for n in _SLOW)]


@needs_origin
@pytest.mark.parametrize("name", LIGHT)
def test_light_model_optimal_beats_heuristics(name: str):
    for problem in light_problems(name):
        result = optimal.solve(problem, time_limit=60.0)
        check(result, problem)
        ge_cost = problem.cost(ge.solve(problem)).activation_bytes
        naive_cost = problem.cost(naive.solve(problem)).activation_bytes
        assert result.cost <= ge_cost
        assert result.cost <= naive_cost
        print(
            f"{name}: optimal {result.cost} (bound {result.bound:.0f}) ge {ge_cost} "
            f"naive {naive_cost}; {result.variables} vars, {result.constraints} rows, "
            f"{result.solve_seconds:.2f} s"
        )


@needs_origin
@pytest.mark.parametrize(
    "name",
    [
        *_FAST[:-1],
        # DenseNet is cached by the other tests; its ge/naive order is checked here too
        _FAST[-1],
        pytest.param("vgg19", marks=pytest.mark.slow),
        pytest.param("bvlc_alexnet", marks=pytest.mark.slow),
        # ZFNet-512 once caught ge pulling max-pools into 5HD backward, which moved the
        # conversion onto the larger un-pooled LRN output; ge now declines such moves
        pytest.param("zfnet512", marks=pytest.mark.slow),
    ],
)
def test_light_model_ge_not_worse_than_naive(name: str):
    for problem in light_problems(name):
        ge_cost = problem.cost(ge.solve(problem)).activation_bytes
        naive_cost = problem.cost(naive.solve(problem)).activation_bytes
        assert ge_cost <= naive_cost


@needs_origin
def test_densenet_solves_in_seconds():
    (problem,) = light_problems("densenet121")
    start = time.perf_counter()
    result = optimal.solve(problem)
    elapsed = time.perf_counter() - start
    check(result, problem)
    print(
        f"densenet121: {len(problem.ops)} ops, {result.variables} vars, "
        f"{result.constraints} rows, solved in {elapsed:.2f} s"
    )
    assert elapsed < 10.0


def test_certificate_tolerance():
    def result(cost: int, bound: float) -> optimal.OptimalResult:
        return optimal.OptimalResult({}, cost, bound, optimal.OPTIMAL, 0.0, 0, 0)

    assert result(16384, 16384.0).certificate_ok
    assert result(16384, 16383.6).certificate_ok  # under one byte: proves optimality
    assert not result(16384, 16383.0).certificate_ok  # a 16383-byte plan may exist
    assert result(10**10, 10**10 - 5.0).certificate_ok  # 1e-9 relative at 10 GB
    assert optimal.certificate_tolerance(0) == 0.5
