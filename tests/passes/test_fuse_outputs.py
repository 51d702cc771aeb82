"""fuse-ops' groups of several outputs (:mod:`tilegraph.passes.fuse_outputs`): an LSTM
cell's elementwise tail is one kernel writing each output, on the tiles as on the
reference; a value read by an op between the groups that leads back into them, or
broadcast, keeps them apart; a reader between them that does not (Mamba-2's
``x·dt[..., None]``) moves after the kernel writing ``dt`` and ``dt·A``."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

import tilegraph
from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_matches,
    assert_no_nan,
    run_levels,
)
from tests.passes.semantics import run_pipeline_checked, seeded_inputs
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph import FusedOp
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference

B, H = 4, 40


def _cell(between: str = "", mask_shape: tuple[int, int] = (B, 1)) -> ModuleOp:
    """A masked LSTM cell's tail on gates ``i, f, g, o`` and state ``c``, mask ``m``:
    ``c' = σ(f)·c + σ(i)·tanh(g)``, ``h = σ(o)·tanh(c')``, outputs ``m·h`` and
    ``m·c' + (1 - m)·c``. ``between``: ``"softmax"`` adds ``softmax(c')`` into ``h``
    (an op outside the groups reading ``c'`` before ``h``'s root)."""
    b = GraphBuilder()
    i, f, g, o, c = (b.input(n, [B, H]) for n in "ifgoc")
    m = b.input("m", list(mask_shape))
    c_new = b.op(
        "add", b.op("mul", b.op("sigmoid", f), c), b.op("mul", b.op("sigmoid", i), b.op("tanh", g))
    )
    h = b.op("mul", b.op("sigmoid", o), b.op("tanh", c_new))
    if between == "softmax":
        h = b.op("add", h, b.op("softmax", c_new))
    keep = b.op("sub", b.constant(np.ones([1], np.float32)), m)
    c_out = b.op("add", b.op("mul", m, c_new), b.op("mul", keep, c))
    return b.build(b.op("mul", m, h), c_out)


def _fused(module: ModuleOp) -> list[FusedOp]:
    return [op for op in module.walk() if isinstance(op, FusedOp)]


def _merged(module: ModuleOp) -> int:
    with collecting_statistics() as stats:
        run_pipeline_checked(module, "fuse-ops{platform=ascend910b}")
    found = stats.for_pass("fuse-ops")
    return int(found["output-groups-merged"]) if "output-groups-merged" in found else 0


def test_cell_is_one_group_of_two_outputs():
    module = _cell()
    assert _merged(module) >= 1
    groups = [g for g in _fused(module) if len(g.outputs) > 1]
    (cell,) = groups
    assert len(cell.outputs) == 2  # m·h and the masked c; c' stays inside
    names = {op.name for op in cell.member_ops()}
    assert {"graph.tanh", "graph.sigmoid", "graph.add"} <= names


def test_cell_runs_on_tiles_as_one_vector_kernel():
    module = _cell()
    feed = seeded_inputs(module, 1)
    want = run_reference(module, feed)
    compiled = tilegraph.compile(module, platform="ascend910b")
    got = compiled(**feed)
    assert compiled.host_ops == []
    writers = [k for k in compiled.kernels if {"graph.tanh", "graph.sigmoid"} <= set(k.ops)]
    assert len(writers) == 1 and writers[0].unit == "vector"
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_an_op_between_keeps_the_groups_apart():
    module = _cell(between="softmax")
    _merged(module)
    (softmax,) = [op for op in module.walk() if op.name == "graph.softmax"]
    writer = softmax.operands[0].owner  # the kernel that writes c'
    (reader,) = [use.operation for use in softmax.results[0].uses]  # the one adding it to h
    assert isinstance(writer, FusedOp) and isinstance(reader, FusedOp)
    assert writer is not reader  # one kernel could not both write c' and read softmax(c')
    feed = seeded_inputs(module, 2)
    want = run_reference(module, feed)
    got = tilegraph.compile(module, platform="ascend910b")(**feed)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _dt(g: Graph, shape: tuple[int, int, int], width: int) -> list[SSAValue]:
    """Mamba-2's dt: ``dt = clip(softplus(raw + b))`` read first by ``x·dt[..., None]`` (a
    broadcast: its own kernel) and then by ``dt·A`` (a lone multiply)."""
    raw, bias, a = g.input(shape), g.input(shape[-1:]), g.input(shape[-1:])
    x = g.input([*shape, width])
    lo, hi = g.const([], low=-0.5), g.const([], low=1.0)
    dt = g.op("clip", g.op("softplus", g.op("add", raw, bias)), lo, hi)
    dx = g.op("mul", x, g.op("unsqueeze", dt, g.ints([-1])))
    return [dx, g.op("mul", dt, a)]


def _boxes(g: Graph, shape: tuple[int, int, int]) -> list[SSAValue]:
    """YOLOv8's dist2bbox: corners ``anchor ∓ distance``, each read by the centre and the
    size (four lone ops when grown from single roots)."""
    anchor, lt, rb = (g.input(shape) for _ in range(3))
    x1y1, x2y2 = g.op("sub", anchor, lt), g.op("add", anchor, rb)
    centre = g.op("div", g.op("add", x1y1, x2y2), g.const([1], low=2.0))
    return [centre, g.op("sub", x2y2, x1y1)]


def test_a_lone_reader_after_a_broadcasting_one_joins_as_an_output():
    g = Graph()
    module = g.b.build(*_dt(g, (3, 11, 8), 4))
    with collecting_statistics() as stats:
        run_pipeline_checked(module, "fuse-ops{platform=ascend910b}")
    found = stats.for_pass("fuse-ops")
    assert found["output-groups-merged"] == 1 and found["output-readers-moved"] >= 1
    (two,) = [f for f in _fused(module) if len(f.outputs) == 2]
    assert {"graph.softplus", "graph.clip", "graph.mul"} <= {m.name for m in two.member_ops()}
    (dx,) = [f for f in _fused(module) if "graph.unsqueeze" in {m.name for m in f.member_ops()}]
    assert dx.operands[0] is two.outputs[0]  # reads dt from the two-output kernel


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_dt_kernel_writes_both_on_every_level(platform: str):
    """One vector kernel computes dt and writes it and dt·A, over row tiles shared among
    the cores (37 rows: a ragged last tile); NaN in the padding lanes; both executors
    against the graph level. (On the ``test`` preset's 8 KiB UB the two outputs' buffers
    do not fit beside the chain's: the groups stay apart there.)"""
    g = Graph()
    module = g.b.build(*_dt(g, (3, 37, 24), 8))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    writers = [k for k in levels.tiled_kernels if "graph.softplus" in k.ops]
    assert len(writers) == 1 and writers[0].unit == VECTOR
    assert "graph.mul" in writers[0].ops
    assert len(levels.tiled_kernels) == 2
    assert_no_nan(levels)
    assert_matches(levels)
    assert levels.splits(), "the kernel should run several row tiles"


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
def test_box_decode_is_one_kernel_on_every_level(platform: str):
    """The four lone ops of the box decode are one vector kernel writing the centre and the
    size, over tiles shared among the cores (rows of 333: ragged), as on the graph level
    with NaN in the padding lanes, both executors."""
    g = Graph()
    module = g.b.build(*_boxes(g, (2, 4, 333)))
    levels = run_levels(module, g.arrays, platform, pad_value=NAN)
    assert [k.unit for k in levels.tiled_kernels] == [VECTOR]
    assert_no_nan(levels)
    assert_matches(levels)
    assert levels.splits(), "the kernel should run several tiles"
