"""apply-precision: ATC's precision modes and keep-dtype lists on the graph; per-op rounding."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

import tilegraph
from tilegraph.dialects.entry import entry_function
from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.elementwise import CastOp
from tilegraph.dialects.graph.provenance import onnx_nodes
from tilegraph.dialects.layout_type import TensorType
from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime.compiled import CompileError
from tilegraph.target import PRECISIONS

DATA = Path(__file__).parent.parent / "data" / "precision"
MODEL = DATA / "layernorm_overflow.onnx"


def _small() -> onnx.ModelProto:
    """x -> MatMul -> Exp -> ReduceSum -> Relu -> Reshape: white, black, black, white, gray."""
    w = numpy_helper.from_array(np.full((8, 8), 0.1, np.float32), "w")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    shape = numpy_helper.from_array(np.array([4], np.int64), "shape")
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w"], ["m"], name="mm"),
        n("Exp", ["m"], ["e"], name="exp"),
        n("ReduceSum", ["e", "axes"], ["s"], name="sum", keepdims=0),
        n("Relu", ["s"], ["r"], name="relu"),
        n("Reshape", ["r", "shape"], ["y"], name="reshape"),
    ]
    graph = helper.make_graph(
        nodes,
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [w, axes, shape],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


def _applied(model: onnx.ModelProto | Path, spec: str) -> ModuleOp:
    module = load_onnx(model)
    run_pipeline(spec, make_context(), module)
    module.verify()
    return module


def _types_by_node(module: ModuleOp) -> dict[str, str]:
    """Node name -> element type of its op's first result (casts left out)."""
    out: dict[str, str] = {}
    for op in entry_function(module).body.block.ops:
        if isinstance(op, GraphOp) and not isinstance(op, CastOp) and op.results:
            t = op.results[0].type
            for node in onnx_nodes(op.location):
                if isinstance(t, TensorType):
                    out.setdefault(node, str(t.element_type))
    return out


def test_the_modes_are_precisions() -> None:
    for mode in (
        "must_keep_origin_dtype",
        "allow_fp32_to_fp16",
        "allow_fp32_to_bf16",
        "force_fp16",
        "allow_mix_precision",
        "allow_mix_precision_fp16",
        "allow_mix_precision_bf16",
    ):
        assert mode in PRECISIONS
    assert {"origin", "fp16", "bf16", "int8"} <= set(PRECISIONS)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("origin", dict(mm="f32", exp="f32", sum="f32", relu="f32", reshape="f32")),
        ("must_keep_origin_dtype", dict(mm="f32", exp="f32", sum="f32", relu="f32")),
        ("allow_fp32_to_fp16", dict(mm="f32", exp="f32", sum="f32", relu="f32")),
        ("force_fp16", dict(mm="f16", exp="f16", sum="f16", relu="f16", reshape="f16")),
        ("allow_mix_precision", dict(mm="f16", exp="f32", sum="f32", relu="f16", reshape="f16")),
        ("allow_mix_precision_bf16", dict(mm="bf16", exp="f32", sum="f32", relu="bf16")),
    ],
)
def test_each_mode_on_a_small_model(mode: str, expected: dict[str, str]) -> None:
    module = _applied(_small(), f"apply-precision{{mode={mode}}}")
    types = _types_by_node(module)
    assert {k: types[k] for k in expected} == expected
    fn = entry_function(module)
    assert [str(t) for t in fn.function_type.outputs.data] == ["!layout.tensor<4xf32>"]


def test_gray_follows_its_inputs() -> None:
    """Reshape after a black op stays float32 under mixed precision."""
    model = _small()
    del model.graph.node[3]  # no relu: the reshape reads the (black) ReduceSum
    model.graph.node[3].input[0] = "s"
    types = _types_by_node(_applied(model, "apply-precision{mode=allow_mix_precision}"))
    assert types["sum"] == "f32" and types["reshape"] == "f32"


def test_casts_at_the_boundaries_only() -> None:
    module = _applied(_small(), "apply-precision{mode=force_fp16},O1")
    casts = [op for op in module.walk() if isinstance(op, CastOp)]
    # x in, y out; the weight's cast folded into a float16 constant
    assert len(casts) == 2


def test_keep_dtype_by_type_and_by_node_name(tmp_path: Path) -> None:
    keep = tmp_path / "keep.cfg"
    keep.write_text("# ATC's format\nOpType::ReduceSum\n\nexp\n")
    types = _types_by_node(
        _applied(_small(), f'apply-precision{{mode=force_fp16 keep-dtype="{keep}"}}')
    )
    assert types["sum"] == "f32" and types["exp"] == "f32" and types["mm"] == "f16"
    bare = _types_by_node(_applied(_small(), 'apply-precision{mode=force_fp16 keep="MatMul"}'))
    assert bare["mm"] == "f32" and bare["exp"] == "f16"
    graph_name = _types_by_node(
        _applied(_small(), 'apply-precision{mode=force_fp16 keep="OpType::graph.relu"}')
    )
    assert graph_name["relu"] == "f32"


def test_keep_dtype_errors(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no node or op type of the model is named 'nope'"):
        _applied(_small(), 'apply-precision{mode=force_fp16 keep="nope"}')
    with pytest.raises(Exception, match="cannot read keep-dtype file"):
        _applied(_small(), f'apply-precision{{mode=force_fp16 keep-dtype="{tmp_path / "no.cfg"}"}}')
    with pytest.raises(Exception, match="needs force_fp16 or an allow_mix_precision mode"):
        _applied(_small(), 'apply-precision{mode=allow_fp32_to_fp16 keep="exp"}')
    # no effect under must_keep_origin_dtype, as in ATC
    types = _types_by_node(
        _applied(_small(), 'apply-precision{mode=must_keep_origin_dtype keep="exp"}')
    )
    assert {types[n] for n in ("mm", "exp", "sum", "relu", "reshape")} == {"f32"}


def test_bad_mode_errors() -> None:
    with pytest.raises(CompileError, match="unknown precision 'force_fp8'"):
        tilegraph.compile(_small(), precision="force_fp8")
    with pytest.raises(Exception, match="precision must be one of .*, got .force_fp8."):
        _applied(_small(), "apply-precision{mode=force_fp8}")


def test_compile_and_session_take_keep_dtype() -> None:
    x = np.random.default_rng(0).standard_normal((16, 64)).astype(np.float32)
    ref = tilegraph.compile(MODEL, target="reference")(x)[0]
    broken = tilegraph.compile(MODEL, target="reference", precision="force_fp16")(x)[0]
    assert np.abs(broken - ref).max() > 0.5 * np.abs(ref).max()
    keep = ["ln/ReduceSum", "ln/Variance"]
    fixed = tilegraph.compile(MODEL, target="reference", precision="force_fp16", keep_dtype=keep)
    assert np.abs(fixed(x)[0] - ref).max() < 1e-2 * np.abs(ref).max()
    session = tilegraph.Session(str(MODEL), precision="force_fp16", keep_dtype=keep)
    assert np.abs(session(x=x)[0] - ref).max() < 1e-2 * np.abs(ref).max()


def _add_chain(n: int, dtype: int) -> onnx.ModelProto:
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    c = numpy_helper.from_array(np.array(1e-3, np_type), "c")
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Add", [prev, "c"], [f"t{i}"], name=f"add{i}"))
        prev = f"t{i}"
    graph = helper.make_graph(
        nodes,
        "chain",
        [helper.make_tensor_value_info("x", dtype, [4, 256])],
        [helper.make_tensor_value_info(prev, dtype, [4, 256])],
        [c],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(
    ("dtype", "precision", "low"),
    [
        (TensorProto.FLOAT16, "", np.float16),
        (TensorProto.FLOAT, "force_fp16", np.float16),
        (TensorProto.FLOAT, "allow_mix_precision_bf16", ml_dtypes.bfloat16),
    ],
)
def test_vector_ops_round_after_every_op(dtype: int, precision: str, low: type) -> None:
    """x + 1e-3 twenty times in a fused vector chain equals numpy's step-by-step rounding
    bit for bit, on the reference interpreter and both tile executors."""
    model = _add_chain(20, dtype)
    np_type = helper.tensor_dtype_to_np_dtype(dtype)
    x = np.random.default_rng(0).uniform(0, 2, (4, 256)).astype(np_type)
    want = x.astype(low)
    for _ in range(20):
        want = (want + low(1e-3)).astype(low)
    for target, executor in (("reference", "fast"), ("tiles", "fast"), ("tiles", "interpret")):
        compiled = tilegraph.compile(model, target=target, executor=executor, precision=precision)
        (got,) = compiled(x)
        if target == "tiles":
            assert len(compiled.kernels) == 1  # one fused vector kernel
        np.testing.assert_array_equal(got, want.astype(np_type), err_msg=f"{target} {executor}")
