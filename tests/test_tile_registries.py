"""Tile ops are IR and facts; their semantics and costs are registered by their users.

* No ``tile`` op class in :mod:`tilegraph.dialects` defines ``kernel``, ``batched_kernel``,
  ``nest_kernel`` or ``cost`` (they belong to the interpreter, the fast executor and the
  cost model), and the fast executor's scratch pool is not in the dialects.
* Every concrete op of ``TILE_OPS`` has a registered interpreter kernel, except
  ``tile.launch``, ``tile.loop_launches`` and the block queries, which the executors
  implement themselves.
* Every concrete op of ``TILE_OPS`` has a registered cost; the one-cycle default of
  ``TileOp`` is allowed only for the bookkeeping ops listed in :data:`ONE_CYCLE` (an op
  that moves or computes data and forgot its cost fails here), and every op listed does
  use it (the list stays honest).
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tilegraph.dialects
from tilegraph.cost_model.tile_costs import cost_function, one_cycle
from tilegraph.dialects.tile import (
    TILE_OPS,
    AllocOp,
    BlockIdxOp,
    BlockNumOp,
    ConstantOp,
    LaunchOp,
    LoopLaunchesOp,
    PipeBarrierOp,
    ReadOp,
    ReshapeViewOp,
    SetFlagOp,
    SliceViewOp,
    StridedViewOp,
    SubBlockIdxOp,
    TileOp,
    ViewOp,
    WaitFlagOp,
    WriteOp,
)
from tilegraph.runtime.tile_interpreter.kernels import NoKernelError, kernel_factory, kernel_of

EXECUTOR_CODE = ("kernel", "batched_kernel", "nest_kernel", "cost")
RUN_BY_THE_EXECUTORS = {LaunchOp, LoopLaunchesOp, BlockIdxOp, BlockNumOp, SubBlockIdxOp}
ONE_CYCLE = {
    AllocOp,
    ConstantOp,
    LaunchOp,
    LoopLaunchesOp,  # its launches and iterations are the cycle model's (cycles/loops.py)
    ReadOp,
    WriteOp,
    SetFlagOp,
    WaitFlagOp,
    PipeBarrierOp,
    BlockIdxOp,
    BlockNumOp,
    SubBlockIdxOp,
    ViewOp,
    StridedViewOp,
    ReshapeViewOp,
    SliceViewOp,  # a host-level alias of a GM run (place-concat): no task
}
"""Bookkeeping on the scalar unit or the host: one cycle, the default."""


def _dialect_tile_classes() -> list[type[TileOp]]:
    for info in pkgutil.walk_packages(tilegraph.dialects.__path__, "tilegraph.dialects."):
        importlib.import_module(info.name)
    found: list[type[TileOp]] = []
    pending = [TileOp]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return [c for c in found if c.__module__.startswith("tilegraph.dialects.")]


def test_no_tile_op_class_in_the_dialects_carries_executor_code():
    offenders = [
        f"{cls.__module__}.{cls.__qualname__}.{name}"
        for cls in _dialect_tile_classes()
        for name in EXECUTOR_CODE
        if name in vars(cls)
    ]
    assert not offenders, "executor code back on tile op classes:\n" + "\n".join(offenders)


def test_the_scratch_pool_is_the_fast_executors():
    import tilegraph.dialects.tile.base as base

    assert not hasattr(base, "scratch")


@pytest.mark.parametrize("op_class", TILE_OPS, ids=lambda c: c.name)
def test_every_tile_op_has_an_interpreter_kernel(op_class):
    factory = kernel_factory(op_class)
    if op_class in RUN_BY_THE_EXECUTORS:
        return
    assert factory is not None, f"'{op_class.name}' has no kernel (@tile_kernel)"


def test_a_missing_kernel_names_the_op():
    class Unregistered(TileOp):
        name = "tile.unregistered"

    op = Unregistered.__new__(Unregistered)
    with pytest.raises(NoKernelError, match="'tile.unregistered'"):
        kernel_of(op)


@pytest.mark.parametrize("op_class", TILE_OPS, ids=lambda c: c.name)
def test_every_tile_op_has_a_cost_or_is_deliberately_one_cycle(op_class):
    default = cost_function(op_class) is one_cycle
    if op_class in ONE_CYCLE:
        assert default, f"'{op_class.name}' is listed as one cycle but registers a cost"
    else:
        assert not default, f"'{op_class.name}' has no cost (@tile_cost) nor is it in ONE_CYCLE"
