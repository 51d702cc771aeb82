"""``apply-tuning{db=FILE}``: the tuning database's best points on a module's macro kernels.

Runs after ``lower-graph-to-kernels`` and before ``tile-kernels``
(:func:`tilegraph.passes.pipelines.lowering_pipeline` inserts it when given a database).
For every macro kernel (``tile.kernel`` cube or vector, not tiled yet) whose
:func:`~tilegraph.lowering.tuning_db.kernel_key` on the module's target has a best point in
the database, that point is written as the kernel's ``tile.params``; a kernel the database
does not know keeps its parameters (the heuristic's). A database file that does not exist
is an error (:class:`~tilegraph.lowering.tuning_db.TuningDatabaseError`), not an empty
database.

Statistics: ``tuned`` (kernels given a point), ``not-found`` (kernels the database does
not know).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR, kernel_unit
from tilegraph.lowering.analysis.tuning_params import set_kernel_params
from tilegraph.lowering.tuning_db import TuningDatabase, kernel_key
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass
from tilegraph.target import pin_target


@register_pass
@dataclass(frozen=True)
class ApplyTuningPass(ModulePass):
    """Write the tuning database's best ``tile.params`` on every macro kernel it knows."""

    name = "apply-tuning"

    db: str = ""
    """The database file (it must exist)."""

    def __post_init__(self) -> None:
        if not self.db:
            raise ValueError("apply-tuning: db=FILE is required")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        target = pin_target(op, f"pass '{self.name}'")
        hw = target.hw
        with TuningDatabase(self.db, create=False) as db:
            for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
                if kernel_unit(fn) not in ("cube", "vector") or TILES_ATTR in fn.attributes:
                    continue
                found = db.best(kernel_key(fn, hw, target.precision))
                if found is None:
                    stats.add("not-found")
                    continue
                set_kernel_params(fn, found[0])
                stats.add("tuned")
