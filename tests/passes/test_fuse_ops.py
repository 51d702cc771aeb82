"""fuse-ops: legal groups only, same numbers, and the groups the issue asks for."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects import func

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.graph import FusedOp
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import light_model
from tilegraph.passes.analysis import compute_op_count, fusion_summary
from tilegraph.passes.context import make_context
from tilegraph.passes.fuse_materialize import kernel_name
from tilegraph.passes.fuse_ops import FuseOpsPass
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics


def _top_level(module) -> Counter[str]:
    (fn,) = [op for op in module.ops]
    return Counter(op.name for op in fn.body.blocks[0].ops)


def test_diamond_is_one_group_and_computes_the_same():
    b = GraphBuilder()
    x = b.input("x", [4, 8])
    a = b.op("exp", x)
    module = b.build(b.op("add", b.op("relu", a), b.op("tanh", a)))
    run_pipeline_checked(module, "fuse-ops")
    assert _top_level(module)["graph.fused"] == 1
    assert fusion_summary(module).fused_ops == 4


def test_shared_value_is_not_duplicated():
    b = GraphBuilder()
    x = b.input("x", [4, 8])
    a = b.op("exp", x)
    module = b.build(b.op("relu", a), b.op("tanh", a))
    run_pipeline_checked(module, "fuse-ops")
    # exp feeds two outputs: neither consumer's group takes it (each would recompute it);
    # the lone consumers then join its kernel as its two outputs, exp computed once
    (fused,) = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert sorted(op.name for op in fused.member_ops()) == ["graph.exp", "graph.relu", "graph.tanh"]
    assert len(fused.outputs) == 2


def test_groups_verify_and_keep_dataflow_order():
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    w = b.constant(np.ones([4, 4, 3, 3], np.float32), "NCHW")
    c = b.op("conv2d", x, w, pads=[1, 1, 1, 1])
    s = b.op("add", b.op("relu", c), x)
    module = b.build(b.op("sigmoid", s))
    run_pipeline_checked(module, "fuse-ops")
    (fused,) = [op for op in module.walk() if isinstance(op, FusedOp)]
    assert [op.name for op in fused.member_ops()] == [
        "graph.conv2d",
        "graph.relu",
        "graph.add",
        "graph.sigmoid",
    ]
    assert fused.kernel_name.data == "fused_conv2d_relu_add_sigmoid_0"


def test_kernel_names_collapse_repeats_and_stay_short():
    b = GraphBuilder()
    x = b.input("x", [2])
    ops = [b.op("relu", x)]
    module = b.build(ops[0])
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    members = [op for op in fn.body.blocks[0].ops][:1] * 3
    assert kernel_name(members, 7) == "fused_relu_7"


def test_options_are_checked():
    with pytest.raises(ValueError, match="unknown platform"):
        FuseOpsPass(platform="nope")
    with pytest.raises(ValueError, match="max-ops"):
        FuseOpsPass(max_ops=0)
    with pytest.raises(ValueError, match="coupled-attention must be one of ge, always"):
        FuseOpsPass(coupled_attention="bogus")


def test_max_ops_bounds_a_group():
    b = GraphBuilder()
    v = b.input("x", [8])
    for _ in range(10):
        v = b.op("relu", b.op("tanh", v))
    module = b.build(v)
    with collecting_statistics() as collector:
        run_pipeline_checked(module, "fuse-ops{max-ops=4}")
    assert collector.as_dict()["fuse-ops"]["largest-group"] == 4
    assert compute_op_count(module) == 5


def test_resnet50_every_conv_epilogue_is_in_its_group():
    """O2 on light ResNet-50: no BatchNorm, ReLU or residual Sum is left outside a conv's
    group; the residual add sits in the group of the conv that feeds it on the main path."""
    module = load_onnx(light_model("resnet50"))
    with collecting_statistics() as collector:
        run_pipeline("O2", make_context(), module)
    top = _top_level(module)
    for name in ("graph.batch_norm", "graph.relu", "graph.sum", "graph.add"):
        assert top[name] == 0, name
    groups = [op for op in module.walk() if isinstance(op, FusedOp)]
    with_conv = [g for g in groups if any(m.name == "graph.conv2d" for m in g.member_ops())]
    residual = [g for g in with_conv if any(m.name == "graph.sum" for m in g.member_ops())]
    assert len(residual) == 16  # one per bottleneck block
    assert all(sum(m.name == "graph.conv2d" for m in g.member_ops()) == 1 for g in with_conv)
    stats = collector.as_dict()["fuse-ops"]
    summary = fusion_summary(module)
    assert stats["groups"] == summary.groups
    assert stats["transdata-absorbed"] == summary.transdata_absorbed


def _groups(module) -> list[list[str]]:
    return [
        [m.name.removeprefix("graph.") for m in op.member_ops()]
        for op in module.walk()
        if isinstance(op, FusedOp)
    ]


def test_a_broadcast_operand_is_not_computed_in_the_kernel_that_stretches_it():
    # SE-ResNet's excitation: a 1 x 1 conv and a sigmoid on the pooled [1, 8, 1, 1] vector,
    # then a multiply with the whole [1, 8, 6, 6] feature map
    b = GraphBuilder()
    x = b.input("x", [1, 8, 6, 6], origin_format="NCHW")
    pooled = b.input("pooled", [1, 8, 1, 1], origin_format="NCHW")
    w = b.constant(np.ones([8, 8, 1, 1], np.float32), "NCHW")
    gate = b.op("sigmoid", b.op("conv2d", pooled, w))
    module = b.build(b.op("relu", b.op("mul", x, gate)))
    run_pipeline_checked(module, "fuse-ops")
    assert sorted(_groups(module)) == [["conv2d", "sigmoid"], ["mul", "relu"]]


def test_an_epilogue_takes_no_side_branch():
    # conv(x) + mul(y, y), then relu: the mul is a side branch of the conv's epilogue, so
    # the add and relu join one of the two (the same bytes saved either way), never both
    b = GraphBuilder()
    x = b.input("x", [1, 4, 6, 6], origin_format="NCHW")
    y = b.input("y", [1, 4, 6, 6], origin_format="NCHW")
    w = b.constant(np.ones([4, 4, 3, 3], np.float32), "NCHW")
    conv = b.op("conv2d", x, w, pads=[1, 1, 1, 1])
    side = b.op("mul", y, y)
    module = b.build(b.op("relu", b.op("add", conv, side)))
    run_pipeline_checked(module, "fuse-ops")
    (group,) = _groups(module)
    assert group in (["conv2d", "add", "relu"], ["mul", "add", "relu"])


def test_a_shape_query_keeps_no_conversion_out_of_the_conv_epilogue():
    """Paddle's exports take ``Shape`` of a conv result that also leaves in NCHW (here as
    the graph's output): the query reads no data, so the NC1HWC0 -> NCHW conversion joins
    the conv's kernel and the query reads the kernel's NCHW result (same origin dims)
    instead of keeping the conv's 5HD result in GM, with the same numbers. Before, the
    conversion ran as a kernel of its own."""
    b = GraphBuilder()
    x = b.input("x", [1, 16, 6, 6], origin_format="NCHW")
    w = b.constant(np.ones([16, 16, 1, 1], np.float32), "NCHW")
    c = b.op("conv2d", x, w)
    module = b.build(c, b.op("shape", c))
    run_pipeline_checked(module, "format{strategy=ge},fuse-ops")
    top = _top_level(module)
    assert top["layout.trans_data"] == 0 and top["graph.conv2d"] == 0, top
    (fn,) = list(module.ops)
    query = next(op for op in fn.walk() if op.name == "graph.shape")
    assert isinstance(query.operands[0].owner, FusedOp)


def test_a_scatter_nd_stays_out_of_its_producers_group():
    """The ScatterND strategy takes a lone scatter only (``tiling/scatter_nd.py``): its
    facts say OPAQUE, so no producer's group takes it (and the lowering never sends a
    refused group of it to the host). Speech2Text's shift of the decoder ids builds its
    index tuples with an unsqueeze / concat right before it."""
    b = GraphBuilder()
    x = b.input("x", [3, 9])
    rows = b.input("rows", [3, 1], "int64")
    tuples = b.op("concat", rows, rows, axis=-1)
    updates = b.op("exp", b.input("u", [3]))
    module = b.build(b.op("scatter_nd", b.op("relu", x), tuples, updates))
    run_pipeline_checked(module, "fuse-ops", inputs=_scatter_inputs())
    assert _top_level(module)["graph.scatter_nd"] == 1


def _scatter_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {
        "x": rng.standard_normal((3, 9)).astype(np.float32),
        "rows": np.array([[0], [1], [2]], np.int64),
        "u": rng.standard_normal(3).astype(np.float32),
    }
