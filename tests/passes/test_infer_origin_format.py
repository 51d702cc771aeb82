"""``infer-origin-format``: the pure inference on hand-written IR, the pass on real models.

Expected formats are written from the rules in the pass's docstring, not from its output.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.facts import FormatRole, OpFacts
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.infer_origin_format import InferOriginFormatPass, infer_origin_formats
from tilegraph.runtime import run_reference

_SLOW = {"vgg19", "bvlc_alexnet", "zfnet512"}


def _function(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def _infer(text: str) -> dict[str, str]:
    """name hint -> origin format after inference, for every named tensor value."""
    result = infer_origin_formats(_function(parse_mlir(text)))
    return {v.name_hint: f.value for v, f in result.formats.items() if v.name_hint}


def _run_pass(module: ModuleOp) -> ModuleOp:
    InferOriginFormatPass().apply(make_context(), module)
    module.verify()
    return module


T4 = "!layout.tensor<1x2x4x4xf32>"
W = "!layout.tensor<2x2x1x1xf32>"


def test_conv_chain_and_backward():
    got = _infer(f"""
    func.func @f(%x: {T4}, %y: {T4}, %w: {W}, %b: !layout.tensor<2xf32>) -> {T4} {{
      %s = graph.sigmoid %x : {T4}
      %a = graph.add %s, %y : {T4}
      %c = graph.conv2d %a, %w, %b : ({T4}, {W}, !layout.tensor<2xf32>) -> {T4}
      %r = graph.relu %c : {T4}
      func.return %r : {T4}
    }}""")
    assert got == dict.fromkeys("xyswbacr", "NCHW")


def test_pure_function_does_not_mutate_and_explains():
    module = parse_mlir(f"""
    func.func @f(%x: {T4}, %w: {W}) -> {T4} {{
      %r = graph.relu %x : {T4}
      %c = graph.conv2d %r, %w : ({T4}, {W}) -> {T4}
      func.return %c : {T4}
    }}""")
    before = str(module)
    fn = _function(module)
    result = infer_origin_formats(fn)
    assert str(module) == before
    why = {v.name_hint: reason for v, reason in result.why.items()}
    assert set(why) == {"x", "w", "r", "c"}
    assert why["r"].startswith("anchor: graph.conv2d")
    assert why["w"].startswith("anchor: graph.conv2d")
    assert why["x"] == "through graph.relu"
    assert [v.name_hint for v in result.changed()][0] == "r"  # anchors first


def test_anchors_win_then_bfs_order():
    """%v is one step from the NHWC label and two from the NCHW one: BFS gives it NHWC
    although the NCHW label comes first in program order (a depth-first walk would not)."""
    got = _infer(f"""
    func.func @f(%z: {T4}) -> (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NHWC>) {{
      %v = graph.relu %z : {T4}
      %q = graph.neg %v : {T4}
      %r = graph.abs %q : ({T4}) -> !layout.tensor<1x2x4x4xf32, NCHW>
      %p = graph.exp %v : ({T4}) -> !layout.tensor<1x2x4x4xf32, NHWC>
      func.return %r, %p : !layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<1x2x4x4xf32, NHWC>
    }}""")
    assert got == {"z": "NHWC", "v": "NHWC", "q": "NCHW", "r": "NCHW", "p": "NHWC"}


def test_anchor_beats_propagation_from_an_existing_label():
    """The conv anchors %r2 before propagation starts; the NHWC argument reaches %r1 only."""
    got = _infer(f"""
    func.func @f(%x: !layout.tensor<1x2x4x4xf32, NHWC>, %w: {W}) -> {T4} {{
      %r1 = graph.relu %x : (!layout.tensor<1x2x4x4xf32, NHWC>) -> {T4}
      %r2 = graph.relu %r1 : {T4}
      %c = graph.conv2d %r2, %w : ({T4}, {W}) -> {T4}
      func.return %c : {T4}
    }}""")
    assert got == {"x": "NHWC", "r1": "NHWC", "r2": "NCHW", "w": "NCHW", "c": "NCHW"}


def test_rank_rules_of_sensitive_ops():
    """5-D conv anchors NCDHW; 1-D conv (rank 3) and BatchNorm on [N, C] anchor nothing."""
    t5, w5 = "!layout.tensor<1x2x3x3x3xf32>", "!layout.tensor<2x2x1x1x1xf32>"
    t3, w3 = "!layout.tensor<1x2x5xf32>", "!layout.tensor<2x2x1xf32>"
    t2, p = "!layout.tensor<3x2xf32>", "!layout.tensor<2xf32>"
    got = _infer(f"""
    func.func @f(%x: {t5}, %w: {w5}, %y: {t3}, %v: {w3}, %z: {t2}, %p: {p}) -> ({t5}, {t3}, {t2}) {{
      %a = graph.conv %x, %w : ({t5}, {w5}) -> {t5}
      %r = graph.relu %a : {t5}
      %b = graph.conv %y, %v : ({t3}, {w3}) -> {t3}
      %n = graph.batch_norm %z, %p, %p, %p, %p : ({t2}, {p}, {p}, {p}, {p}) -> {t2}
      func.return %r, %b, %n : {t5}, {t3}, {t2}
    }}""")
    assert got == {
        **dict.fromkeys("xwar", "NCDHW"),
        **dict.fromkeys("yvbznp", "ND"),
    }


def test_gather_and_reshape_rules():
    """Gather with 1-D indices keeps the rank: the format passes; a scalar index drops a dim:
    ND. An identity reshape passes the format backward too; a rank-4 reshape that moves dims
    does not."""
    i1, i0 = "!layout.tensor<1xi64>", "!layout.tensor<i64>"
    got = _infer(f"""
    func.func @f(%x: !layout.tensor<1x2x4x4xf32, NCHW>, %y: {T4}) -> (!layout.tensor<1x1x4x4xf32>, !layout.tensor<1x4x4xf32>, {T4}) {{
      %i = graph.constant dense<[1]> : {i1}
      %j = graph.constant dense<0> : {i0}
      %g = graph.gather %x, %i {{axis = 1}} : (!layout.tensor<1x2x4x4xf32, NCHW>, {i1}) -> !layout.tensor<1x1x4x4xf32>
      %h = graph.gather %x, %j {{axis = 1}} : (!layout.tensor<1x2x4x4xf32, NCHW>, {i0}) -> !layout.tensor<1x4x4xf32>
      %s = graph.constant dense<[1, 2, 4, 4]> : !layout.tensor<4xi64>
      %r = graph.reshape %y, %s : ({T4}, !layout.tensor<4xi64>) -> {T4}
      %s2 = graph.constant dense<[1, 2, 16, 1]> : !layout.tensor<4xi64>
      %q = graph.reshape %x, %s2 : (!layout.tensor<1x2x4x4xf32, NCHW>, !layout.tensor<4xi64>) -> !layout.tensor<1x2x16x1xf32>
      %w = graph.constant dense<__elided__> : {W}
      %c = graph.conv2d %r, %w : ({T4}, {W}) -> {T4}
      func.return %g, %h, %c : !layout.tensor<1x1x4x4xf32>, !layout.tensor<1x4x4xf32>, {T4}
    }}""")
    assert got == {
        "x": "NCHW",
        "i": "ND",
        "j": "ND",
        "g": "NCHW",
        "h": "ND",
        "s": "ND",
        "s2": "ND",
        "q": "ND",
        "y": "NCHW",
        "r": "NCHW",
        "w": "NCHW",
        "c": "NCHW",
    }


def test_transpose_5d_and_below_rank_4():
    t5 = "!layout.tensor<1x2x3x4x5xf32, NCDHW>"
    got = _infer(f"""
    func.func @f(%x: {t5}, %y: !layout.tensor<2x3x4xf32, NCHW>) -> (!layout.tensor<1x3x4x5x2xf32>, !layout.tensor<4x3x2xf32>) {{
      %t = graph.transpose %x {{perm = [0, 2, 3, 4, 1]}} : ({t5}) -> !layout.tensor<1x3x4x5x2xf32>
      %u = graph.transpose %y : (!layout.tensor<2x3x4xf32, NCHW>) -> !layout.tensor<4x3x2xf32>
      func.return %t, %u : !layout.tensor<1x3x4x5x2xf32>, !layout.tensor<4x3x2xf32>
    }}""")
    assert got == {"x": "NCDHW", "t": "NDHWC", "y": "NCHW", "u": "ND"}


def test_locked_values_are_not_relabelled():
    """Operands of layout.trans_data and values whose storage differs from their origin keep
    their format; the module still verifies (trans_data needs equal origin formats)."""
    t = "!layout.tensor<1x2x16x16xf16>"
    nz = "!layout.tensor<1x2x16x16xf16, ND -> FRACTAL_NZ>"
    w = "!layout.tensor<2x2x1x1xf16>"
    module = parse_mlir(f"""
    func.func @f(%x: {t}, %y: {nz}, %w: {w}) -> ({nz}, {t}, {nz}) {{
      %n = layout.trans_data %x : {t} -> {nz}
      %c = graph.conv2d %x, %w : ({t}, {w}) -> {t}
      %a = graph.add %c, %y : ({t}, {nz}) -> {t}
      func.return %n, %a, %y : {nz}, {t}, {nz}
    }}""")
    got = {v.name_hint: f.value for v, f in infer_origin_formats(_function(module)).formats.items()}
    assert got == {"x": "ND", "y": "ND", "w": "NCHW", "n": "ND", "c": "NCHW", "a": "NCHW"}
    _run_pass(module)


def test_paired_role(monkeypatch):
    """PAIRED (no op declares it yet): operand i <-> result i only."""
    monkeypatch.setattr(AddOp, "FACTS", OpFacts(FormatRole.PAIRED, AddOp.FACTS.fusion))
    got = _infer(f"""
    func.func @f(%x: !layout.tensor<1x2x4x4xf32, NHWC>, %y: {T4}) -> {T4} {{
      %a = graph.add %x, %y : (!layout.tensor<1x2x4x4xf32, NHWC>, {T4}) -> {T4}
      func.return %a : {T4}
    }}""")
    assert got == {"x": "NHWC", "y": "ND", "a": "NHWC"}


def test_pass_updates_signature_and_is_idempotent():
    module = parse_mlir(f"""
    func.func @f(%x: {T4}, %w: {W}) -> {T4} {{
      %c = graph.conv2d %x, %w : ({T4}, {W}) -> {T4}
      func.return %c : {T4}
    }}""")
    fn = _function(_run_pass(module))
    nchw = TensorType([1, 2, 4, 4], fn.function_type.inputs.data[0].element_type, "NCHW")
    assert list(fn.function_type.inputs.data)[0] == nchw
    assert list(fn.function_type.outputs.data) == [nchw]
    once = str(module)
    assert str(_run_pass(module)) == once


# ---- the light models ---------------------------------------------------------------------

_MODELS = [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW else n for n in LIGHT_MODELS]


def _format_counts(fn: func.FuncOp) -> Counter[str]:
    values = [*fn.args, *(r for op in fn.walk() for r in op.results)]
    return Counter(v.type.origin_format.value for v in values if isinstance(v.type, TensorType))


@pytest.mark.parametrize("name", _MODELS)
def test_light_model(name):
    module = load_onnx(light_model(name))
    before = _format_counts(_function(module))
    fn = _function(_run_pass(module))
    after = _format_counts(fn)
    assert after["NCHW"] > before["NCHW"]  # at least the conv weights are new
    assert sum(after.values()) == sum(before.values())
    convs = [op for op in fn.walk() if isinstance(op, Conv2dOp)]
    assert convs
    for conv in convs:
        for v in (conv.operands[0], conv.operands[1], conv.results[0]):
            assert isinstance(v.type, TensorType) and v.type.origin_format == Format.NCHW
    # a fixpoint: no agnostic op is left with a full-rank ND tensor next to a formatted one
    for op in fn.walk():
        if isinstance(op, GraphOp) and op.FACTS.role is FormatRole.AGNOSTIC:
            slots = op.operand_slots()
            types = [
                v.type
                for i, v in enumerate(slots)
                if v is not None and op.FACTS.takes_part_in_format(i)
            ] + [r.type for r in op.results]
            full = {t.origin_format for t in types if isinstance(t, TensorType) and t.rank == 4}
            assert len(full) <= 1, f"{op.name}: {full}"
    assert fn.function_type.inputs.data == tuple(a.type for a in fn.args)


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_model_semantics_preserved(name):
    module = load_onnx(light_model(name))
    fn = entry_function(module)
    rng = np.random.default_rng(3)
    inputs = {
        n: rng.standard_normal(t.origin_shape).astype(np.float32)
        for n, t in zip(input_names(fn), fn.function_type.inputs.data, strict=True)
    }
    before = run_reference(module, inputs)
    _run_pass(module)
    after = run_reference(module, inputs)
    assert len(before) == len(after)
    for x, y in zip(before, after, strict=True):
        np.testing.assert_array_equal(x, y)


def test_symbolic_identity_reshape_keeps_the_format():
    """[s0, 2, 4, 4] -> [s0, 2, 4, 4] (0 copies the dim) is an identity: the conv's NCHW
    reaches the argument; [?, 2, 4, 4] is not known to be one."""
    ts, tu = "!layout.tensor<[s0, 2, 4, 4], f32>", "!layout.tensor<?x2x4x4xf32>"
    got = _infer(f"""
    func.func @f(%x: {ts}, %y: {tu}, %w: {W}) -> ({ts}, {tu}) {{
      %s = graph.constant dense<[0, 2, 4, 4]> : !layout.tensor<4xi64>
      %r = graph.reshape %x, %s : ({ts}, !layout.tensor<4xi64>) -> {ts}
      %c = graph.conv2d %r, %w : ({ts}, {W}) -> {ts}
      %q = graph.reshape %y, %s : ({tu}, !layout.tensor<4xi64>) -> {tu}
      %d = graph.conv2d %q, %w : ({tu}, {W}) -> {tu}
      func.return %c, %d : {ts}, {tu}
    }}""")
    assert got == {
        "x": "NCHW",
        "s": "ND",
        "r": "NCHW",
        "w": "NCHW",
        "c": "NCHW",
        "y": "ND",
        "q": "NCHW",
        "d": "NCHW",
    }
