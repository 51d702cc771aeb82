"""Opsets newer than 21: the reviewed version steps of ``tilegraph.frontend.onnx_versions``.

Models are built with ``onnx.helper`` at opset 22 and newer and compared with onnxruntime
(or numpy / ml_dtypes where onnxruntime has no kernel); the refusals name node, op and the
attribute or input.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.ir import Block

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.nn import ConvOp
from tilegraph.dialects.layout import TensorType
from tilegraph.frontend import OnnxImportError, load_onnx
from tilegraph.frontend import onnx_versions as versions
from tilegraph.frontend.onnx_opsets import MAX_OPSET
from tilegraph.frontend.onnx_versions import NodeForm, UnmappedVersion, VersionStep, map_node
from tilegraph.runtime import run_reference

NEWEST = onnx.defs.onnx_opset_version()
rng = np.random.default_rng(7)


def make_model(nodes, inputs, outputs, initializers=(), opset=NEWEST):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_both(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(tilegraph's reference outputs, onnxruntime's outputs)."""
    ours = run_reference(load_onnx(model), feeds)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return ours, [np.asarray(v) for v in session.run(None, feeds)]


def tensor(name: str, dtype: int, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name: str, array: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(array, name)


# ---- the table --------------------------------------------------------------------------


def test_every_op_version_of_the_installed_onnx_is_reviewed():
    """A new onnx release fails here until each of its new op versions has a step."""
    assert versions.unreviewed_versions() == []


def test_max_opset_follows_the_installed_onnx():
    assert MAX_OPSET == NEWEST
    model = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [tensor("x", TensorProto.FLOAT, [2])],
        [tensor("y", TensorProto.FLOAT, [2])],
        opset=NEWEST + 1,
    )
    with pytest.raises(
        OnnxImportError, match=rf"opset {NEWEST + 1} is not supported \(supported: 1-{NEWEST}\)"
    ):
        load_onnx(model)


def test_steps_cover_each_version_newer_than_the_native_one():
    steps = versions.steps_for("Cast", NEWEST)
    assert [s.version for s in steps if isinstance(s, VersionStep)] == [28, 25, 24, 23, 19]
    assert versions.steps_for("Relu", NEWEST) == []  # Relu-14 is current
    assert versions.steps_for("Conv", 21) == []
    assert [s.version for s in versions.steps_for("Conv", 22) if isinstance(s, VersionStep)] == [22]


# ---- models at the newer opsets against onnxruntime ----------------------------------------


def conv_block_model(opset: int) -> onnx.ModelProto:
    """Ops whose newest version is past opset 21: Conv, InstanceNormalization, Elu, Selu,
    HardSigmoid, Softplus, MaxPool and AveragePool (ceil_mode, a last window that starts in
    the end padding), GlobalAveragePool, Dropout, Transpose, Flatten, Shape, Reshape, Pad,
    Squeeze/Unsqueeze, Cast, Identity, ConstantOfShape, Constant."""
    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("InstanceNormalization", ["c", "scale", "bias"], ["n"]),
        helper.make_node("Elu", ["n"], ["e"], alpha=0.5),
        helper.make_node("Selu", ["e"], ["s"]),
        helper.make_node("HardSigmoid", ["s"], ["h"]),
        helper.make_node("Softplus", ["h"], ["sp"]),
        helper.make_node("MaxPool", ["sp"], ["m"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        helper.make_node(
            "AveragePool", ["m"], ["a"], kernel_shape=[2, 2], strides=[2, 2],
            pads=[1, 1, 1, 1], ceil_mode=1,
        ),
        helper.make_node("GlobalAveragePool", ["a"], ["g"]),
        helper.make_node("Dropout", ["a", "ratio"], ["d"]),
        helper.make_node("Transpose", ["d"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("Flatten", ["t"], ["fl"], axis=1),
        helper.make_node("Shape", ["t"], ["shape"], start=1),
        helper.make_node("Constant", [], ["two_rows"], value=const("v", np.array([2, -1], np.int64))),
        helper.make_node("Reshape", ["fl", "two_rows"], ["r"]),
        helper.make_node("Pad", ["t", "pads"], ["p"], mode="reflect"),
        helper.make_node("Unsqueeze", ["g", "axis0"], ["u"]),
        helper.make_node("Squeeze", ["u", "axis0"], ["q"]),
        helper.make_node("Cast", ["r"], ["half"], to=TensorProto.FLOAT16),
        helper.make_node("Identity", ["half"], ["out_half"]),
        helper.make_node(
            "ConstantOfShape", ["shape"], ["filled"],
            value=const("fill", np.array([1.5], np.float32)),
        ),
    ]  # fmt: skip
    inits = [
        const("w", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
        const("b", rng.standard_normal(4).astype(np.float32)),
        const("scale", rng.uniform(0.5, 1.5, 4).astype(np.float32)),
        const("bias", rng.standard_normal(4).astype(np.float32)),
        const("ratio", np.array(0.25, np.float32)),
        const("pads", np.array([0, 1, 1, 0, 0, 1, 1, 0], np.int64)),
        const("axis0", np.array([0], np.int64)),
    ]
    outputs = [
        tensor("q", f, None),
        tensor("p", f, None),
        tensor("out_half", TensorProto.FLOAT16, None),
        tensor("filled", f, None),
        tensor("shape", TensorProto.INT64, None),
    ]
    return make_model(nodes, [tensor("x", f, [1, 3, 9, 9])], outputs, inits, opset=opset)


@pytest.mark.parametrize("opset", [22, 23, 24, 25, NEWEST])
def test_conv_block_at_newer_opsets_matches_onnxruntime(opset: int):
    x = rng.standard_normal((1, 3, 9, 9)).astype(np.float32)
    ours, theirs = run_both(conv_block_model(opset), {"x": x})
    assert ours[1].shape == (1, 5, 5, 4)  # 9 -> MaxPool(ceil) 5 -> AveragePool 3, padded
    for got, want in zip(ours, theirs, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-5)


def test_pool_window_starting_in_the_end_padding_is_dropped():
    """MaxPool-22/AveragePool-22 state it: 5 + pads 1+1, kernel 2, stride 2, ceil -> 3."""
    model = make_model(
        [
            helper.make_node(
                "AveragePool",
                ["x"],
                ["y"],
                kernel_shape=[2],
                strides=[2],
                pads=[1, 1],
                ceil_mode=1,
            )
        ],
        [tensor("x", TensorProto.FLOAT, [1, 1, 5])],
        [tensor("y", TensorProto.FLOAT, None)],
        opset=22,
    )
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    (ours,), (theirs,) = run_both(model, {"x": x})
    np.testing.assert_allclose(ours, [[[0.0, 1.5, 3.5]]])
    np.testing.assert_allclose(ours, theirs)


# ---- Cast: saturate (19) and round_mode (24) act on float8 targets only -------------------


def cast_model(to: int, opset: int, **attrs) -> onnx.ModelProto:
    return make_model(
        [helper.make_node("Cast", ["x"], ["y"], name="cast1", to=to, **attrs)],
        [tensor("x", TensorProto.FLOAT, [4])],
        [tensor("y", to, None)],
        opset=opset,
    )


@pytest.mark.parametrize(
    ("opset", "attrs"),
    [(21, {"saturate": 0}), (24, {"round_mode": "down"}), (NEWEST, {"saturate": 1, "round_mode": "nearest"})],
)  # fmt: skip
def test_float8_only_cast_attributes_are_dropped_for_other_targets(opset: int, attrs):
    x = np.array([1.0, -2.5, 60000.0, 0.1], np.float32)
    (y,) = run_reference(load_onnx(cast_model(TensorProto.FLOAT16, opset, **attrs)), {"x": x})
    np.testing.assert_array_equal(y, x.astype(np.float16))


def test_cast_to_float8_e8m0_follows_round_mode():
    """Cast-24's round_mode acts on float8e8m0 targets: 3.0 lies between 2 and 4."""
    x = np.array([3.0, 0.75, 5.0, 1.0], np.float32)
    expected = {
        "up": [4.0, 1.0, 8.0, 1.0],
        "down": [2.0, 0.5, 4.0, 1.0],
        "nearest": [4.0, 1.0, 4.0, 1.0],
    }
    for mode, values in expected.items():
        (y,) = run_reference(
            load_onnx(cast_model(TensorProto.FLOAT8E8M0, 24, round_mode=mode)), {"x": x}
        )
        np.testing.assert_array_equal(y.astype(np.float32), values, err_msg=mode)


def test_cast_to_int4_wraps_like_ml_dtypes():
    """Cast-21+ to int4: out-of-range values wrap as ml_dtypes does (the node suite's
    oracle; ONNX leaves float OOR undefined, wraps fixed point); the result is int4."""
    x = np.arange(-9, 16, dtype=np.float32)
    model = cast_model(TensorProto.INT4, NEWEST)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = x.size
    (y,) = run_reference(load_onnx(model), {"x": x})
    assert y.dtype == ml_dtypes.int4
    np.testing.assert_array_equal(y.view(np.uint8), x.astype(ml_dtypes.int4).view(np.uint8))


# ---- the generic rules, through the importer ------------------------------------------------


def conv_model(opset: int, **attrs) -> onnx.ModelProto:
    return make_model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", **attrs)],
        [tensor("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [tensor("y", TensorProto.FLOAT, None)],
        [const("w", np.ones((3, 2, 1, 1), np.float32))],
        opset=opset,
    )


def test_a_version_without_a_reviewed_step_is_refused(monkeypatch):
    monkeypatch.delitem(versions.VERSION_STEPS, ("Conv", 22))
    with pytest.raises(
        OnnxImportError,
        match=r"node 'conv1' \(Conv\): Conv-22 \(opset 22\) has no reviewed mapping onto the graph form of Conv-11",
    ):
        load_onnx(conv_model(22))
    load_onnx(conv_model(21))  # the native form is untouched


def test_a_new_attribute_keeps_only_its_neutral_value(monkeypatch):
    step = VersionStep("Conv", 22, "adds 'window' (-1: none)", neutral_attributes={"window": -1})
    monkeypatch.setitem(versions.VERSION_STEPS, ("Conv", 22), step)
    x = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    (y,) = run_reference(load_onnx(conv_model(22, window=-1)), {"x": x})
    np.testing.assert_allclose(y, np.repeat(x.sum(axis=1, keepdims=True), 3, axis=1), rtol=1e-6)
    with pytest.raises(
        OnnxImportError, match=r"node 'conv1' \(Conv\): attribute 'window' = 3 \(new in Conv-22"
    ):
        load_onnx(conv_model(22, window=3))


def test_a_new_input_is_refused_when_given(monkeypatch):
    step = VersionStep("Conv", 22, "adds 'offsets'", new_inputs={3: "offsets"})
    monkeypatch.setitem(versions.VERSION_STEPS, ("Conv", 22), step)
    model = conv_model(22)
    model.graph.node[0].input.extend(["", "x"])  # bias absent, offsets given
    with pytest.raises(
        OnnxImportError,
        match=r"node 'conv1' \(Conv\): input 'offsets' \(new in Conv-22\) is not supported",
    ):
        load_onnx(model)
    assert len(ConvOp.get_irdl_definition().operands) == 3


# ---- per-op rules of ops the graph dialect does not have yet ---------------------------------


def typed(*dtypes: str):
    block = Block(arg_types=[TensorType([2], element_type_of(d)) for d in dtypes])
    return list(block.args)


def test_range_27_stash_type_only_matters_for_half_types():
    form = NodeForm("Range", {"stash_type": 1}, typed("float32", "float32", "float32"), None)
    map_node(form, 27)
    assert form.attrs == {}
    with pytest.raises(UnmappedVersion, match="Range-27 on float16 accumulates in 'stash_type'"):
        map_node(NodeForm("Range", {}, typed("float16", "float16", "float16"), None), 27)


def _consts(*arrays: np.ndarray) -> list:
    """Block arguments typed like ``arrays`` (to build an op around them)."""
    from xdsl.ir import Block

    from tilegraph.dialects.element_types import element_type_of
    from tilegraph.dialects.layout import TensorType

    types = [TensorType(a.shape, element_type_of(a.dtype)) for a in arrays]
    return list(Block(arg_types=types).args)


def test_mod_28_floor_modulo_of_floats_is_implemented():
    """Mod-28 defines fmod=0 on floats (floor modulo); graph.mod computes it."""
    from tilegraph.dialects.graph.logical import ModOp

    for attrs in ({}, {"fmod": 1}):
        map_node(NodeForm("Mod", dict(attrs), typed("float32", "float32"), ModOp), 28)
    a = np.array([5.5, -5.5, 5.5, -5.5], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0], np.float32)
    floor = ModOp.make(*_consts(a, b)).reference(a, b)[0]
    np.testing.assert_array_equal(floor, np.array([1.5, 0.5, -0.5, -1.5], np.float32))


def test_bitshift_28_signed_inputs_shift_arithmetically():
    """BitShift-28 adds signed types; graph.bit_shift implements them (the node suite's
    cases check the values against onnx's expected outputs)."""
    from tilegraph.dialects.graph.logical import BitShiftOp

    form = NodeForm("BitShift", {"direction": "RIGHT"}, typed("int8", "int8"), BitShiftOp)
    map_node(form, 28)
    x = np.array([-128, -7, 7, 64], np.int8)
    op = BitShiftOp.make(*_consts(x, x), direction="RIGHT")
    right = op.reference(x, np.array([1, 1, 1, 9], np.int8))[0]
    assert right.tolist() == [-64, -4, 3, 0]


def test_attention_25_windows_and_24_input():
    form = NodeForm(
        "Attention", {"left_window_size": -1, "right_window_size": -1}, typed("float32"), None
    )
    map_node(form, 25)
    assert form.attrs == {}
    with pytest.raises(UnmappedVersion, match="attribute 'left_window_size' = 4"):
        map_node(NodeForm("Attention", {"left_window_size": 4}, typed("float32"), None), 25)
    operands = typed(*["float32"] * 7)
    with pytest.raises(UnmappedVersion, match="input 'nonpad_kv_seqlen'"):
        map_node(NodeForm("Attention", {}, operands, None), 24)


# ---- Dropout: training_mode must be known at import -------------------------------------


def test_dropout_with_a_run_time_training_mode_is_refused():
    model = make_model(
        [helper.make_node("Dropout", ["x", "", "t"], ["y"], name="drop")],
        [tensor("x", TensorProto.FLOAT, [3]), tensor("t", TensorProto.BOOL, [])],
        [tensor("y", TensorProto.FLOAT, [3])],
        opset=22,
    )
    with pytest.raises(
        OnnxImportError,
        match=r"node 'drop' \(Dropout\): input 'training_mode' is computed at run time",
    ):
        load_onnx(model)


# ---- Resize-10 is Upsample-9 under a new name --------------------------------------------


def resize_10_model(mode: str, scales: list[float]) -> onnx.ModelProto:
    return make_model(
        [helper.make_node("Resize", ["x", "s"], ["y"], name="resize", mode=mode)],
        [tensor("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [tensor("y", TensorProto.FLOAT, None)],
        opset=10,
        initializers=[numpy_helper.from_array(np.array(scales, np.float32), "s")],
    )


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 2, 3], [1, 1, 1.5, 2.5]])
def test_resize_10_keeps_upsample_coordinates_like_onnxruntime(mode: str, scales):
    """onnx's version converter turns Resize-10 into a half_pixel Resize-11; onnxruntime runs
    it as Upsample-9 does (asymmetric), and so does tilegraph."""
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    (got,), (want,) = run_both(resize_10_model(mode, scales), {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_resize_10_downscaling_is_refused_clearly():
    with pytest.raises(OnnxImportError, match=r"node 'resize' \(Upsample\): Upsample scales"):
        load_onnx(resize_10_model("linear", [1, 1, 0.5, 0.5]))
