"""``select-storage-format{strategy=naive|ge|optimal platform=... time-limit=60
small-channel=false}``.

Chooses a kernel variant for every graph op, and with it the storage format of every value,
using one of three strategies (:mod:`tilegraph.passes.storage`):

* ``naive`` — every heavy op converts its own inputs and outputs;
* ``ge`` — GE's heavy-format propagation from the heavy ops;
* ``optimal`` — minimum total bytes moved by TransData, solved exactly (ILP); the function gets
  ``layout.optimal_cost``, ``layout.optimal_bound`` and ``layout.optimal_status`` attributes
  so the optimality certificate can be checked.

Each op gets ``layout.kernel`` (and ``layout.shared`` for the storage of elementwise slots).
Types do not change and nothing is converted yet: ``insert-trans-data`` retypes results and
materialises the conversions. Function arguments and results keep their
origin view. Run ``infer-origin-format`` first: storage formats need origin formats (an ND
tensor cannot go to NC1HWC0).

``small-channel=true`` is ATC's ``--enable_small_channel=1`` (off by default, as in ATC): an
ungrouped 2-D convolution with at most 4 input channels (an image stem) takes its data as
NC1HWC0_C04 and its weight as FRACTAL_Z_C04 (kernel variant ``cube_c04``), so its img2col
reduces over 4·kh·kw instead of C0·kh·kw (docs/tile-level.md, "Small-channel convolution").
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tilegraph.formats import PLATFORMS
from tilegraph.hardware import base_platform, hardware_preset
from tilegraph.passes.layout_plan import LayoutPlanner, commit_choice
from tilegraph.passes.registry import register_pass
from tilegraph.passes.storage import ge, naive
from tilegraph.passes.storage.problem import SelectionProblem
from tilegraph.target import pin_target

STRATEGIES = ("naive", "ge", "optimal")


@register_pass
@dataclass(frozen=True)
class SelectStorageFormatPass(ModulePass):
    """Choose kernel variants and storage formats (strategy naive, ge or optimal).

    Control-flow bodies (``graph.if`` / ``loop`` / ``scan`` / ``sequence_map``) are skipped:
    they run as host code, unoptimised; ops with sequence or optional values stay ND.
    """

    name = "select-storage-format"

    strategy: str = "ge"
    platform: str = ""
    """Preset name; empty: the module's target (:mod:`tilegraph.target`)."""
    time_limit: float = 60.0
    """Seconds the optimal strategy may take before it keeps the best plan found."""
    small_channel: bool = False
    """ATC's small-channel mode: C04 storage for convolutions of <= 4 input channels."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.strategy not in STRATEGIES:
            raise PassFailedException(
                f"select-storage-format: unknown strategy '{self.strategy}' "
                f"(choose from {', '.join(STRATEGIES)})"
            )
        if self.platform and base_platform(self.platform) not in PLATFORMS:
            raise PassFailedException(
                f"select-storage-format: unknown platform '{self.platform}' "
                f"(choose from {', '.join(PLATFORMS)})"
            )
        if self.platform:  # a bad what-if override (the base preset is known)
            try:
                hardware_preset(self.platform)
            except ValueError as e:
                raise PassFailedException(f"select-storage-format: {e}") from None
        platform = pin_target(op, f"pass '{self.name}'", self.platform).platform
        planner = LayoutPlanner(platform, small_channel=self.small_channel)
        for fn in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            self._select(fn, planner)

    def _select(self, fn: func.FuncOp, planner: LayoutPlanner) -> None:
        problem = SelectionProblem(fn, planner)
        if self.strategy == "naive":
            plan = naive.solve(problem)
        elif self.strategy == "ge":
            plan = ge.solve(problem)
        else:
            from tilegraph.passes.storage import optimal

            result = optimal.solve(problem, time_limit=self.time_limit)
            plan = result.plan
            fn.attributes["layout.optimal_cost"] = IntegerAttr(int(result.cost), i64)
            fn.attributes["layout.optimal_bound"] = IntegerAttr(int(result.bound), i64)
            fn.attributes["layout.optimal_status"] = StringAttr(result.status)
        for graph_op in problem.ops:
            commit_choice(graph_op, plan[graph_op])
        fn.attributes["layout.strategy"] = StringAttr(self.strategy)
        fn.attributes["layout.platform"] = StringAttr(planner.platform)
