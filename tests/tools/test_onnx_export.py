"""ONNX export (``tilegraph-opt --emit-onnx``, :mod:`tilegraph.frontend.onnx_export`).

The oracles are independent of the exporter: ``onnx.checker`` (``full_check``: schemas and
shape inference) for validity, and onnxruntime for meaning — the exported model must compute
what onnxruntime computes on the original light model, or what tilegraph's reference
interpreter computes on the module before it was optimised.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from xdsl.dialects import func
from xdsl.ir import Block, Region, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, result_def

from tilegraph.dialects.graph import ConstantOp, GraphOp
from tilegraph.dialects.graph.base import float_attr
from tilegraph.dialects.graph.facts import ND_OPAQUE
from tilegraph.dialects.layout import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.frontend.onnx_export import DOMAIN, OnnxExportError, export_onnx
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import NamedPipeline, O2Pipeline, run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.tools.opt.cli import run

_SLOW = ("vgg19", "zfnet512", "bvlc_alexnet")  # 10-40 s each (weights), as in conformance
assert issubclass(O2Pipeline, NamedPipeline)
AFTER_O1 = O2Pipeline.SPEC.removeprefix("O1,")
"""What O2 runs after O1: the light-model test reaches O2 from its O1 module."""


def ort_run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> list[Any]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return list(session.run(None, dict(feeds)))


def assert_outputs_match(got: Sequence[np.ndarray], want: Sequence[np.ndarray], rtol=1e-4):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        # the light models end in a softmax (outputs ~1e-3): a tiny absolute floor only
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)


def domains(model: onnx.ModelProto) -> set[str]:
    nodes = [*model.graph.node, *(n for f in model.functions for n in f.node)]
    return {n.domain for n in nodes}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW else n for n in LIGHT_MODELS]
)
def test_light_model_exports_pass_the_checker_and_run_in_onnxruntime(name):
    """O0, O1 and O2 exports pass ``check_model(full_check=True)``; O0/O1 exports hold
    standard ops only and O2 ones TransData / fused groups; the O1 and O2 exports compute
    what onnxruntime computes on the original model (O2 through its local functions)."""
    model = light_model(name, seed=0)
    original = onnxruntime_session(model)
    rng = np.random.default_rng(1)
    feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32) for i in original.get_inputs()}
    want = original.run(None, feeds)
    module = load_onnx(model)
    for label, pipeline in (("O0", "O0"), ("O1", "O1"), ("O2", AFTER_O1)):
        run_pipeline(pipeline, make_context(), module)
        exported = export_onnx(module)
        onnx.checker.check_model(exported, full_check=True)
        assert [o.name for o in exported.graph.output] == [o.name for o in model.graph.output]
        if label == "O2":
            assert DOMAIN in domains(exported) and exported.functions
        else:
            assert domains(exported) == {""} and not exported.functions
        if label != "O0":  # O0 is the import: its run adds nothing the O1 one does not
            assert_outputs_match(ort_run(exported, feeds), want)


CONV_BLOCK = """
func.func @main(%x: !layout.tensor<[N, 3, 4, 4], f32, NCHW>) -> !layout.tensor<[N, 4, 4, 4], f32, NCHW> {
  %w = graph.constant dense<[[[[0.5]], [[-1.0]], [[0.25]]], [[[1.5]], [[0.75]], [[-0.5]]], [[[2.0]], [[0.125]], [[-2.0]]], [[[1.0]], [[1.0]], [[1.0]]]]> : !layout.tensor<4x3x1x1xf32, NCHW>
  %b = graph.constant dense<[0.1, -0.2, 0.3, -0.4]> : !layout.tensor<4xf32>
  %c = graph.conv2d %x, %w, %b : (!layout.tensor<[N, 3, 4, 4], f32, NCHW>, !layout.tensor<4x3x1x1xf32, NCHW>, !layout.tensor<4xf32>) -> !layout.tensor<[N, 4, 4, 4], f32, NCHW>
  %r = graph.relu %c : !layout.tensor<[N, 4, 4, 4], f32, NCHW>
  func.return %r : !layout.tensor<[N, 4, 4, 4], f32, NCHW>
}
"""


def test_trans_data_and_fused_groups_are_tilegraph_functions():
    module = parse_mlir(CONV_BLOCK)
    weights = [op.constant_array() for op in module.walk() if isinstance(op, ConstantOp)]
    oracle = parse_mlir(CONV_BLOCK)
    run_pipeline(AFTER_O1, make_context(), module)
    model = export_onnx(module)
    onnx.checker.check_model(model, full_check=True)
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 21), (DOMAIN, 1)}

    (call,) = model.graph.node  # the whole block is one fused group
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in call.attribute}
    assert call.domain == DOMAIN and call.op_type == attrs["kernel_name"].decode()
    assert attrs["kind"] == b"out_elemwise_fusable"
    functions = {f.name: f for f in model.functions}
    body = functions[call.op_type]
    assert [n.op_type for n in body.node] == ["TransData", "Conv", "Relu", "TransData"]
    convert = {a.name: onnx.helper.get_attribute_value(a) for a in body.node[0].attribute}
    assert (convert["src_format"], convert["dst_format"]) == (b"NCHW", b"NC1HWC0")
    assert convert["dst_storage_shape"] == [b"N", b"1", b"4", b"4", b"16"]
    assert [n.op_type for n in functions["TransData"].node] == ["Identity"]

    # symbolic batch as dim_param; pre-converted weights exported in origin layout
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "N"
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    np.testing.assert_array_equal(inits["w"], weights[0])
    np.testing.assert_array_equal(inits["b"], weights[1])
    formats = {
        vi.name: dict((p.key, p.value) for p in vi.metadata_props) for vi in model.graph.value_info
    }
    assert "FRACTAL_Z" in formats["w"]["tilegraph.type"]

    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal([batch, 3, 4, 4]).astype(np.float32)
        assert_outputs_match(ort_run(model, {"x": x}), run_reference(oracle, {"x": x}))


def test_newer_ops_raise_the_opset_and_legacy_forms_are_mapped():
    """RMSNormalization exists from opset 23; Cast's round_mode (opset 24) at its default is
    dropped; DFT-17's axis attribute becomes DFT-20's axis input; a returned input, constant
    and duplicate get Identity nodes under the output names."""
    text = """
    func.func @main(%x: !layout.tensor<2x3x4xf32>, %s: !layout.tensor<4xf32>) -> (!layout.tensor<2x3x4xf32>, !layout.tensor<2x3x4xf16>, !layout.tensor<2x3x4x2xf32>, !layout.tensor<2x3x4xf32>, !layout.tensor<1xi64>, !layout.tensor<2x3x4xf16>) {
      %y = graph.rms_norm %x, %s {axis = -1, epsilon = 0.001} : (!layout.tensor<2x3x4xf32>, !layout.tensor<4xf32>) -> !layout.tensor<2x3x4xf32>
      %h = graph.cast %x {to = 10, round_mode = "up"} : (!layout.tensor<2x3x4xf32>) -> !layout.tensor<2x3x4xf16>
      %a = graph.constant dense<[3]> : !layout.tensor<1xi64>
      %u = graph.unsqueeze %x, %a : (!layout.tensor<2x3x4xf32>, !layout.tensor<1xi64>) -> !layout.tensor<2x3x4x1xf32>
      %d = graph.dft %u {axis = 1} : (!layout.tensor<2x3x4x1xf32>) -> !layout.tensor<2x3x4x2xf32>
      func.return %y, %h, %d, %x, %a, %h : !layout.tensor<2x3x4xf32>, !layout.tensor<2x3x4xf16>, !layout.tensor<2x3x4x2xf32>, !layout.tensor<2x3x4xf32>, !layout.tensor<1xi64>, !layout.tensor<2x3x4xf16>
    }
    """
    module = parse_mlir(textwrap.dedent(text))
    model = export_onnx(module)
    onnx.checker.check_model(model, full_check=True)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 23)]
    nodes = {n.op_type: n for n in model.graph.node}
    assert [a.name for a in nodes["Cast"].attribute] == ["to"]
    assert not nodes["DFT"].attribute and len(nodes["DFT"].input) == 3
    assert [o.name for o in model.graph.output] == [f"output{i}" for i in range(6)]
    rng = np.random.default_rng(0)
    feeds = {
        "x": rng.standard_normal([2, 3, 4]).astype(np.float32),
        "s": rng.uniform(0.5, 1.5, [4]).astype(np.float32),
    }
    assert_outputs_match(ort_run(model, feeds), run_reference(module, feeds), rtol=1e-5)


@irdl_op_definition
class FrobnicateOp(GraphOp):
    """A graph op with no ONNX counterpart (test only): ``x * alpha``."""

    name = "graph.test_frobnicate"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    alpha = float_attr()
    FACTS: ClassVar = ND_OPAQUE

    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Any]
    ) -> list[TensorType]:
        t = operands[0].type if operands[0] is not None else None
        assert isinstance(t, TensorType)
        return [t]


def one_op_module(build) -> Any:
    from xdsl.dialects.builtin import ModuleOp, f32

    t = TensorType([2, 3], f32)
    block = Block(arg_types=[t])
    block.args[0].name_hint = "x"
    op = build(block.args[0])
    block.add_ops([op, func.ReturnOp(op.results[0])])
    return ModuleOp([func.FuncOp("main", ([t], [t]), Region(block))])


def test_graph_op_without_onnx_op_is_a_tilegraph_node():
    module = one_op_module(lambda x: FrobnicateOp.make(x, alpha=0.5))
    model = export_onnx(module)
    onnx.checker.check_model(model, full_check=True)
    (node,) = model.graph.node
    assert (node.domain, node.op_type) == (DOMAIN, "TestFrobnicate")
    assert [(a.name, a.type, a.f) for a in node.attribute] == [
        ("alpha", onnx.AttributeProto.FLOAT, 0.5)
    ]
    assert not model.functions  # no body to give it: it passes the checker, it cannot run


def test_ops_that_have_no_onnx_form_are_refused():
    module = one_op_module(lambda x: func.CallOp("helper", [x], [x.type]))
    with pytest.raises(OnnxExportError, match=r"'func.call' cannot be exported"):
        export_onnx(module)
    elided = parse_mlir(
        "func.func @main() -> !layout.tensor<32xf32> {\n"
        "  %c = graph.constant dense<__elided__> : !layout.tensor<32xf32>\n"
        "  func.return %c : !layout.tensor<32xf32>\n}\n"
    )
    with pytest.raises(OnnxExportError, match=r"elided.*--print-constants"):
        export_onnx(elided)


def test_cli_writes_a_checked_model(tmp_path, capsys):
    source = tmp_path / "block.mlir"
    source.write_text(CONV_BLOCK)
    out = tmp_path / "block.onnx"
    assert run([str(source), "-p", "O2", "--emit-onnx", str(out), "-o", os.devnull]) == 0
    assert f"wrote {out}" in capsys.readouterr().err
    model = onnx.load(str(out))
    onnx.checker.check_model(model, full_check=True)
    assert DOMAIN in domains(model)


def test_cli_refuses_in_one_line_without_traceback(tmp_path, capsys):
    source = tmp_path / "elided.mlir"
    source.write_text(CONV_BLOCK)
    lowered = tmp_path / "lowered.mlir"
    assert run([str(source), "-p", "O2", "-o", str(lowered)]) == 0  # constants elided
    out = tmp_path / "out.onnx"
    assert run([str(lowered), "--emit-onnx", str(out), "-o", os.devnull]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "--print-constants" in err and len(err.splitlines()) == 1
    assert "Traceback" not in err and not out.exists()
    missing_dir = tmp_path / "no" / "such" / "dir.onnx"
    assert run([str(source), "--emit-onnx", str(missing_dir), "-o", os.devnull]) == 1
    assert "error: cannot write" in capsys.readouterr().err


@pytest.mark.parametrize("make", ["if_conv_model", "loop_model", "scan_model", "sequence_model"])
@pytest.mark.parametrize("pipeline", ["O0", "O2{disable=if-as-where}"])
def test_control_flow_and_sequences_export_with_subgraphs(make, pipeline):
    """Bodies become subgraphs that read the captures by their outer names; the export runs
    in onnxruntime with the original model's outputs (O2 keeping the If: if-as-where would
    select between its branches instead)."""
    from tests.dialects import control_flow_models

    model, feeds = getattr(control_flow_models, make)()
    module = load_onnx(model)
    if pipeline != "O0":
        run_pipeline(pipeline, make_context(), module)
    exported = export_onnx(module)
    onnx.checker.check_model(exported, full_check=True)
    graphs = [a.g for n in exported.graph.node for a in n.attribute if a.g.node]
    assert bool(graphs) == (make != "sequence_model")
    got, want = ort_run(exported, feeds), ort_run(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-6)
