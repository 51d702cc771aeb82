"""Strategy ``naive``: every heavy op converts its own inputs and outputs.

Heavy ops (``FACTS.heavy``: conv, matmul, gemm) take their first offered kernel variant
(:meth:`~tilegraph.passes.layout_plan.LayoutPlanner.variants`: declared order, small-channel
ones first in small-channel mode) that applies (the cube kernel: NC1HWC0/FRACTAL_Z,
FRACTAL_NZ); every other op stays in its origin view. The result is the per-op picture of
the seed document: a TransData pair around every Conv2D.
"""

from __future__ import annotations

from tilegraph.dialects.graph import GraphOp
from tilegraph.passes.layout_plan import KernelChoice
from tilegraph.passes.storage.problem import SelectionProblem


def heavy_choice(problem: SelectionProblem, op: GraphOp) -> KernelChoice:
    """The preferred (first offered, applicable) kernel of a heavy op."""
    declared = [v.name for v in problem.planner.variants(op)]
    for name in declared:
        for choice in problem.choices[op]:
            if choice.variant == name:
                return choice
    return problem.origin_choice(op)


def solve(problem: SelectionProblem) -> dict[GraphOp, KernelChoice]:
    return {
        op: heavy_choice(problem, op) if op.FACTS.heavy else problem.origin_choice(op)
        for op in problem.ops
    }
