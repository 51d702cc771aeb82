"""Strategy ``optimal``: the plan with the fewest bytes moved by TransData, proven by a bound.

The objective is exactly :meth:`SelectionProblem.cost` ``.activation_bytes``: for every
non-constant value, each distinct storage type its consumers need that differs from the type it
is produced in costs one TransData of ``conversion_bytes(produced, needed)`` bytes (constants
are free: ``fold-trans-data`` stores them pre-converted; function arguments are produced in
their own type; ``func.return`` needs the origin view).

Feasible plans: every op takes one of its :meth:`LayoutPlanner.choices`, except that heavy
ops (conv, matmul, gemm) stay on the kernel variant ``naive`` and ``ge`` give them (the Cube
kernel; only its ANY-slot format is free). The plain kernels move no data, so without this the
optimum is always "everything in its origin view" at 0 bytes; ``pin_heavy=False`` lifts it.
The three strategies thus run the same heavy kernels and differ only in layout.

Formulation (a 0-1 ILP solved by HiGHS through :func:`scipy.optimize.milp`):

* **Choice classes.** Choices of an op that imply the same storage types for every operand
  and result are interchangeable for the cost; they are merged into one class (the first
  choice in :meth:`LayoutPlanner.choices` order represents it). An op with a single class is
  fixed and gets no variable.
* ``x[o, k]`` binary for each op ``o`` with two or more classes ``k``;
  ``sum_k x[o, k] = 1``.
* For a value ``v`` let ``P_s`` be the indicator "v is produced in storage type s" (a sum of
  ``x`` of the producer's classes producing ``s``, or the constant 1 for a fixed producer)
  and, for a consumer ``c`` and a needed type ``t``, ``C_{c,t}`` the indicator "c's class
  needs v as t" (over all operand slots of ``c`` that read ``v``; a constant for fixed
  consumers, ``func.return`` and other non-graph users). The TransData ``s -> t`` (``t != s``)
  exists iff ``P_s`` and some ``C_{c,t}`` hold, so a continuous ``y[v, s, t] in [0, 1]`` with
  ``y >= P_s + C_{c,t} - 1`` for every such consumer, minimised with weight
  ``conversion_bytes(s, t)``, equals that AND at every integral ``x``. When ``c`` is the
  producer itself the row is ``y >= sum(x over classes producing s and needing t)``.
* Simplifications: rows with a constant 0 side vanish; a constant 1 AND is a fixed cost; a
  ``y`` with a single row ``y >= sum(x)`` is folded into the objective of those ``x``;
  duplicate rows are dropped.

The solver works on the objective divided by the gcd of the weights, so the scaled objective
is integral. The reported ``cost`` is recomputed by :meth:`SelectionProblem.cost` on the
decoded plan and checked against the model (a mismatch is a bug and raises). ``bound`` is the
solver's dual bound (a lower bound on every plan's cost), in bytes.

**Certificate.** Costs are whole bytes, so ``cost - bound < 1`` proves that no plan is
cheaper. :attr:`OptimalResult.certificate_ok` is ``cost <= bound + certificate_tolerance(cost)``
with a tolerance of ``max(0.5 byte, 1e-9 * cost)``: half a byte (below the one-byte
granularity, so an accepted gap is a proof) unless the cost is so large (> 500 MB) that a
double's rounding of HiGHS's floating-point bound is comparable; then 1e-9 relative. With
``mip_rel_gap = 0`` the light models close with a gap of exactly 0.

With ``time_limit`` the solver may stop early: the result is the best plan among the
solver's incumbent and the ``ge`` and ``naive`` plans (``status = "time_limit"``, the bound
still valid), or the best heuristic plan when the solver found none
(``status = "time_limit_fallback"``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import csr_array
from xdsl.ir import SSAValue

from tilegraph import progress
from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.layout_plan import KernelChoice
from tilegraph.passes.storage import ge, naive
from tilegraph.passes.storage.problem import SelectionProblem, conversion_bytes

OPTIMAL = "optimal"
TIME_LIMIT = "time_limit"
TIME_LIMIT_FALLBACK = "time_limit_fallback"


def certificate_tolerance(cost: int) -> float:
    """Slack allowed between cost and bound: half a byte (costs are integral) or 1e-9
    relative for large costs (floating-point rounding of the solver's bound)."""
    return max(0.5, 1e-9 * abs(cost))


@dataclass
class OptimalResult:
    """The chosen plan, what it costs, and the solver's proof."""

    plan: dict[GraphOp, KernelChoice]
    cost: int
    """Bytes moved by run-time TransData (``problem.cost(plan).activation_bytes``)."""
    bound: float
    """The solver's dual bound in bytes: no plan costs less."""
    status: str
    """``optimal``, ``time_limit`` (best found, not proven) or ``time_limit_fallback``."""
    solve_seconds: float
    """Wall time of the whole strategy (building the model included)."""
    variables: int
    constraints: int
    message: str = ""
    nodes: int | None = None
    details: dict[str, float] = field(default_factory=dict)
    """Timings: ``build_seconds`` (model) and ``milp_seconds`` (HiGHS)."""

    @property
    def gap(self) -> float:
        """``cost - bound`` in bytes."""
        return self.cost - self.bound

    @property
    def certificate_ok(self) -> bool:
        """Whether the bound proves the plan optimal (see :func:`certificate_tolerance`)."""
        return self.cost <= self.bound + certificate_tolerance(self.cost)


def allowed_choices(
    problem: SelectionProblem, op: GraphOp, pin_heavy: bool = True
) -> list[KernelChoice]:
    """The choices the strategy may pick for ``op``.

    With ``pin_heavy`` a heavy op keeps the kernel variant ``naive`` and ``ge`` give it (its
    first declared variant that applies: the Cube kernel) and only its ANY-slot format is
    free: the plain kernels move no data, so without this the optimum would be "every op in
    its origin view" at zero bytes, a plan that never uses the Cube unit.
    """
    choices = problem.choices[op]
    if not (pin_heavy and op.FACTS.heavy):
        return choices
    variant = naive.heavy_choice(problem, op).variant
    return [c for c in choices if c.variant == variant]


# ---- the model ------------------------------------------------------------------------
Indicator = tuple[int, ...] | bool
"""A 0/1 quantity of the model: the sum of some ``x`` (a tuple of their indices, never empty)
or a constant (``True``/``False``)."""


@dataclass
class _OpVars:
    choices: list[KernelChoice]
    """One representative choice per class."""
    results: list[tuple[TensorType, ...]]
    """Per class: produced type of each result."""
    operands: list[tuple[TensorType | None, ...]]
    """Per class: needed type of each operand slot."""
    first_var: int = -1
    """Index of x[o, 0]; -1 when the op is fixed (a single class)."""

    def indicator(self, classes: Sequence[int]) -> Indicator:
        """ "The op's class is in ``classes``"."""
        if not classes:
            return False
        if self.first_var < 0 or len(classes) == len(self.choices):
            return True
        return tuple(self.first_var + k for k in sorted(classes))


class _Model:
    def __init__(
        self,
        problem: SelectionProblem,
        pin_heavy: bool,
        advance: Callable[[], None] = lambda: None,
    ):
        self.problem = problem
        self.ops: dict[GraphOp, _OpVars] = {}
        self.nvars = 0
        for op in problem.ops:
            self.ops[op] = self._classes(op, allowed_choices(problem, op, pin_heavy))
        self.nx = self.nvars
        self.weights: list[int] = [0] * self.nx
        """Objective (bytes) of every variable."""
        self.rows: list[tuple[int, tuple[int, ...], int]] = []
        """(y, xs, minus): the row ``y >= sum(x[xs]) - minus``."""
        self.fixed_cost = 0
        self.terms: list[tuple[int, list[tuple[tuple[int, ...], int]]]] = []
        """Every variable cost term as (weight, [(xs, minus)]): ``weight`` is paid when some
        ``sum(x[xs]) - minus >= 1``; for the exact re-evaluation of a plan."""
        for value in problem.values:
            self._value(value)
            advance()

    def _classes(self, op: GraphOp, choices: list[KernelChoice]) -> _OpVars:
        planner = self.problem.planner
        seen: set[tuple] = set()
        vars_ = _OpVars([], [], [])
        for choice in choices:
            results = tuple(planner.result_type(op, choice, j) for j in range(len(op.results)))
            operands = tuple(planner.operand_types(op, choice))
            if (results, operands) in seen:
                continue
            seen.add((results, operands))
            vars_.choices.append(choice)
            vars_.results.append(results)
            vars_.operands.append(operands)
        if len(vars_.choices) > 1:
            vars_.first_var = self.nvars
            self.nvars += len(vars_.choices)
        return vars_

    def _value(self, value: SSAValue) -> None:
        problem = self.problem
        if not isinstance(value.type, TensorType) or problem.is_constant(value):
            return
        producer = problem.producer(value)
        # produced type -> classes of the producer producing it (dicts keep a stable order)
        produced: dict[TensorType, list[int]] = {}
        if producer is None:
            produced[problem.produced_type(value, {})] = []
        else:
            index = next(j for j, r in enumerate(producer.results) if r is value)
            for k, results in enumerate(self.ops[producer].results):
                produced.setdefault(results[index], []).append(k)
        # needed type -> {selectable consumer: its classes needing it}; fixed needs (func.return,
        # other ops) as the consumer None
        needs: dict[TensorType, dict[GraphOp | None, set[int]]] = {}
        for use in problem.uses[value]:
            consumer = use.consumer
            if isinstance(consumer, GraphOp) and consumer in self.ops:
                for k, operands in enumerate(self.ops[consumer].operands):
                    t = operands[use.index]
                    if t is not None:
                        needs.setdefault(t, {}).setdefault(consumer, set()).add(k)
            else:
                t = problem.required_type(use, {})
                if t is not None:
                    needs.setdefault(t, {})[None] = set()
        for source, pclasses in produced.items():
            for target, consumers in needs.items():
                if target != source:
                    self._conversion(
                        conversion_bytes(source, target), producer, pclasses, consumers
                    )

    def _conversion(
        self,
        weight: int,
        producer: GraphOp | None,
        pclasses: list[int],
        consumers: dict[GraphOp | None, set[int]],
    ) -> None:
        """Add the cost term "produced by ``pclasses`` and needed by some consumer"."""
        p_ind: Indicator = True if producer is None else self.ops[producer].indicator(pclasses)
        if p_ind is False:
            return
        rows: set[tuple[tuple[int, ...], int]] = set()  # y >= sum(x[xs]) - minus
        for consumer, classes in consumers.items():
            if consumer is None:  # a fixed need
                c_ind: Indicator = True
            elif consumer is producer:  # the op reads its own result: one choice decides
                c_ind = self.ops[consumer].indicator(sorted(classes & set(pclasses)))
                if c_ind is False:
                    continue
                if c_ind is True:
                    self.fixed_cost += weight
                    return
                rows.add((c_ind, 0))
                continue
            else:
                c_ind = self.ops[consumer].indicator(sorted(classes))
            if c_ind is False:
                continue
            if c_ind is True and p_ind is True:
                self.fixed_cost += weight
                return
            if c_ind is True:
                assert isinstance(p_ind, tuple)
                rows.add((p_ind, 0))
            elif p_ind is True:
                rows.add((c_ind, 0))
            else:
                rows.add((tuple(sorted(p_ind + c_ind)), 1))
        if not rows:
            return
        # a row whose variables are a subset of another's (same minus) is implied by it
        kept: list[tuple[tuple[int, ...], int]] = []
        for xs, minus in sorted(rows, key=lambda r: (-len(r[0]), r)):
            if not any(m == minus and set(xs) <= set(kxs) for kxs, m in kept):
                kept.append((xs, minus))
        self.terms.append((weight, kept))
        if len(kept) == 1 and kept[0][1] == 0:
            # y >= sum(x[xs]) alone: y equals that sum (at most 1), so charge the x directly
            for v in kept[0][0]:
                self.weights[v] += weight
            return
        y = self.nvars
        self.nvars += 1
        self.weights.append(weight)
        for xs, minus in kept:
            self.rows.append((y, xs, minus))

    def chosen(self, x: np.ndarray) -> dict[GraphOp, int]:
        """The class of every op in a solution ``x``."""
        found: dict[GraphOp, int] = {}
        for op, vars_ in self.ops.items():
            if vars_.first_var < 0:
                found[op] = 0
            else:
                values = x[vars_.first_var : vars_.first_var + len(vars_.choices)]
                found[op] = int(np.argmax(values))
        return found

    def plan(self, chosen: dict[GraphOp, int]) -> dict[GraphOp, KernelChoice]:
        return {op: self.ops[op].choices[k] for op, k in chosen.items()}

    def evaluate(self, chosen: dict[GraphOp, int]) -> int:
        """The model's objective for the classes ``chosen`` (exact integer arithmetic)."""
        xi = [0] * self.nx
        for op, k in chosen.items():
            if self.ops[op].first_var >= 0:
                xi[self.ops[op].first_var + k] = 1
        total = self.fixed_cost
        for weight, rows in self.terms:
            if any(sum(xi[v] for v in xs) - minus >= 1 for xs, minus in rows):
                total += weight
        return total


# ---- the strategy ---------------------------------------------------------------------
def solve(
    problem: SelectionProblem, *, time_limit: float | None = None, pin_heavy: bool = True
) -> OptimalResult:
    """The minimum-cost plan of ``problem`` and the solver's bound on it.

    ``time_limit`` (seconds) bounds the solver; ``pin_heavy`` keeps heavy ops on their
    preferred kernel (see :func:`allowed_choices`).
    """
    start = time.perf_counter()
    with progress.task("optimal storage: ILP model", total=len(problem.values)) as task:
        model = _Model(problem, pin_heavy, task.advance)
    built = time.perf_counter()
    n = model.nvars
    constraints = len(model.rows) + sum(1 for v in model.ops.values() if v.first_var >= 0)

    def result(plan, cost, bound, status, message="", nodes=None, milp_seconds=0.0):
        return OptimalResult(
            plan=plan,
            cost=cost,
            bound=bound,
            status=status,
            solve_seconds=time.perf_counter() - start,
            variables=n,
            constraints=constraints,
            message=message,
            nodes=nodes,
            details={"build_seconds": built - start, "milp_seconds": milp_seconds},
        )

    if n == 0:
        plan, cost = _checked_plan(problem, model, np.zeros(0))
        return result(plan, cost, float(cost), OPTIMAL, "no choice to make")

    weights = np.array(model.weights, dtype=np.float64)
    unit = math.gcd(*(w for w in model.weights if w)) or 1
    c = weights / unit
    one_choice = [
        (None, tuple(v.first_var + k for k in range(len(v.choices))))
        for v in model.ops.values()
        if v.first_var >= 0
    ]
    linear = [
        # sum_k x[o, k] = 1
        _constraint(n, one_choice, 1.0, 1.0),
        # y >= sum(x)  <=>  y - sum(x) >= 0
        _constraint(n, [(y, vs) for y, vs, minus in model.rows if minus == 0], 0.0, np.inf),
        # y >= sum(x) - 1  <=>  y - sum(x) >= -1
        _constraint(n, [(y, vs) for y, vs, minus in model.rows if minus == 1], -1.0, np.inf),
    ]
    integrality = np.zeros(n)
    integrality[: model.nx] = 1
    options: dict[str, float | bool] = {"mip_rel_gap": 0.0}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    t0 = time.perf_counter()
    with progress.task(f"optimal storage: HiGHS, {n} variables, {constraints} rows"):
        res = milp(
            c,
            integrality=integrality,
            bounds=Bounds(0, 1),
            constraints=[lc for lc in linear if lc.A.shape[0]],
            options=options,
        )
    milp_seconds = time.perf_counter() - t0
    nodes = res.get("mip_node_count")
    if res.status not in (0, 1):
        raise RuntimeError(f"optimal storage selection: solver failed: {res.message}")
    dual = res.get("mip_dual_bound")
    if dual is None or not math.isfinite(dual):
        dual = res.fun if res.status == 0 and res.fun is not None else 0.0
    bound = float(dual) * unit + model.fixed_cost
    if res.x is not None:
        plan, cost = _checked_plan(problem, model, res.x)
        if res.status == 0:
            status, message = OPTIMAL, str(res.message)
        else:
            status, message = TIME_LIMIT, f"{res.message}: best found, not proven"
            plan, cost, message = _best_of(problem, plan, cost, message)
        return result(plan, cost, bound, status, message, nodes, milp_seconds)
    plan, cost, message = _best_of(problem, None, None, f"{res.message}: no solution found")
    return result(plan, cost, bound, TIME_LIMIT_FALLBACK, message, nodes, milp_seconds)


def _constraint(
    n: int, rows: Sequence[tuple[int | None, tuple[int, ...]]], lo: float, hi: float
) -> LinearConstraint:
    """The rows ``lo <= y - sum(x[xs]) <= hi`` for ``(y, xs)`` in ``rows`` (no ``y``:
    ``lo <= sum(x[xs]) <= hi``)."""
    a_rows: list[int] = []
    a_cols: list[int] = []
    a_data: list[float] = []
    for r, (y, vs) in enumerate(rows):
        if y is not None:
            a_rows.append(r)
            a_cols.append(y)
            a_data.append(1.0)
        a_rows.extend([r] * len(vs))
        a_cols.extend(vs)
        a_data.extend([1.0 if y is None else -1.0] * len(vs))
    a = csr_array((a_data, (a_rows, a_cols)), shape=(len(rows), n))
    return LinearConstraint(a, lo, hi)


def _checked_plan(
    problem: SelectionProblem, model: _Model, x: np.ndarray
) -> tuple[dict[GraphOp, KernelChoice], int]:
    """The plan of solution ``x`` and its cost, checked against the model's objective."""
    chosen = model.chosen(x)
    plan = model.plan(chosen)
    cost = problem.cost(plan).activation_bytes
    expected = model.evaluate(chosen)
    if cost != expected:
        raise AssertionError(
            f"optimal storage selection: model objective {expected} != plan cost {cost}"
        )
    return plan, cost


def _best_of(problem: SelectionProblem, plan, cost, message: str):
    """The cheapest of ``plan`` and the heuristic plans (``ge``, ``naive``)."""
    best = (plan, cost, message)
    for name, strategy in (("ge", ge.solve), ("naive", naive.solve)):
        candidate = strategy(problem)
        c = problem.cost(candidate).activation_bytes
        if best[1] is None or c < best[1]:
            best = (candidate, c, f"{message}; using the {name} plan")
    return best
