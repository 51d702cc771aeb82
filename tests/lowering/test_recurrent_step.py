"""What one time step of a recurrent kernel does (:mod:`.tiling.recurrent`): the IR holds
one step however long the sequence, the recurrent weights are read from GM once, each step
reads ``x_t`` and ``h_{t-1}`` from GM once (every gate shares them in L0A), the bias rows
stay in UB, and on a decoupled preset a step's gate hand-overs alternate the workspace
slots. Built on the ``test`` preset (decoupled: mix kernels) and 910B."""

from __future__ import annotations

from typing import Any

import pytest
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr

from tests.lowering.test_recurrent_kernels import recurrent
from tests.lowering.test_tile_differential import Graph, make_context, run_pipeline
from tilegraph.dialects.tile import CopyOp, Nd2NzOp, SyncBlockWaitOp
from tilegraph.lowering.analysis.kernel_attrs import mix_part
from tilegraph.lowering.analysis.sync_check import trace_kernel
from tilegraph.lowering.conversion.tiling.mix import FREE_FLAG


def _tiled(kind: str, hidden: int, seq: int, platform: str = "test", **attrs: Any) -> ModuleOp:
    g = Graph()
    module = g.b.build(*recurrent(kind, hidden, seq=seq, **attrs)(g))
    run_pipeline(
        f"set-target{{platform={platform}}},O2,lower-graph-to-kernels,"
        f"tile-kernels{{platform={platform}}}",
        make_context(),
        module,
    )
    return module


def _part(module: ModuleOp, part: str) -> func.FuncOp:
    (fn,) = [f for f in module.ops if isinstance(f, func.FuncOp) and mix_part(f) == part]
    return fn


def _time_loop(fn: func.FuncOp) -> scf.ForOp:
    """The time loop over steps 1 ..: the largest loop of the kernel's body (the others
    are step 0's gate nests)."""
    loops = [op for op in fn.body.block.ops if isinstance(op, scf.ForOp)]
    return max(loops, key=lambda loop: sum(1 for _ in loop.walk()))


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_the_ir_does_not_grow_with_the_sequence(kind: str):
    """The steps after the first are one scf.for: 3 steps or 30, the same ops in the
    recurrent kernel's functions (the hoisted input projection's matmul, a kernel of its
    own, tiles ``T·B`` rows, whose blocks do depend on the sequence)."""
    sizes = []
    for seq in (3, 30):
        module = _tiled(kind, 20, seq)
        recurrent_parts = [
            f
            for f in module.ops
            if isinstance(f, func.FuncOp)
            and f.attributes.get("tile.ops") == StringAttr(f"graph.{kind}")
        ]
        assert recurrent_parts
        sizes.append(sum(1 for f in recurrent_parts for _ in f.walk()))
    assert sizes[0] == sizes[1]


@pytest.mark.parametrize("kind", ["rnn", "gru", "lstm"])
def test_a_step_reads_its_rows_and_weights_once(kind: str):
    """In the time loop the cube reads ``x_t`` from GM once and ``h_{t-1}`` (``Y[t-1]``)
    once — not once per gate — and neither weight (resident in L1: each gate's block read
    once, before step 0); the vector side reads no bias row in the loop (held in UB)."""
    attrs: dict[str, int] = {"linear_before_reset": 1} if kind == "gru" else {}
    module = _tiled(kind, 16, 5, "test", **attrs)
    aic, aiv = _part(module, "aic"), _part(module, "aiv")
    x, w, r, bias = aic.args[:4]
    loads = [op.operands[0] for op in _time_loop(aic).walk() if isinstance(op, Nd2NzOp)]
    assert loads.count(x) == 1
    assert w not in loads and r not in loads
    assert len(loads) == 2  # x_t and Y[t - 1]
    gates = {"rnn": 1, "gru": 3, "lstm": 4}[kind]
    every = [op.operands[0] for op in aic.walk() if isinstance(op, Nd2NzOp)]
    assert every.count(r) == every.count(w) == gates
    rows = [op for op in _time_loop(aiv).walk() if isinstance(op, CopyOp)]
    assert not [op for op in rows if op.operands[0] is aiv.args[3]]
    assert bias.name_hint == aiv.args[3].name_hint


@pytest.mark.parametrize("platform", ["test", "ascend910b"])
def test_a_steps_gates_alternate_the_workspace_slots(platform: str):
    """The AIC waits for the slot it writes to be free: consecutive gates of a step take
    the other slot (the cube fills one while the AIV drains the other), so the waits'
    flags alternate between "free 0" and "free 1" across the whole walk."""
    module = _tiled("lstm", 16, 4, platform)
    aic = _part(module, "aic")
    waits = [
        i.event
        for i in trace_kernel(aic)
        if isinstance(i.op, SyncBlockWaitOp) and i.op.flag_id == FREE_FLAG and i.op.slot
    ]
    assert len(waits) >= 8
    assert all(a != b for a, b in zip(waits, waits[1:], strict=False)), waits
