"""Small-channel (C04) convolution on the tiled path, as ATC's ``--enable_small_channel=1``.

With ``O2{small-channel=true}`` a convolution of at most 4 input channels takes its data as
NC1HWC0_C04 and its weight as FRACTAL_Z_C04; its kernel's ``tile.load3d`` runs in ``c04``
mode and its K loop covers ceil(4·kh·kw, C0) fractals. Each case runs every level
(:func:`tests.lowering.test_tile_differential.run_levels`: graph, macro kernels, both
executors of the tiled kernels) and checks the C04 path against the graph, and against
the regular (C0-padded) cube path of the same model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import ModuleOp

import tilegraph
from tests.lowering.test_tile_differential import (
    CONV,
    NAN,
    Graph,
    Levels,
    assert_matches,
    assert_units,
    run_levels,
)
from tests.tools.test_run_estimate import _save as save_model
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.graph.nn import Conv2dOp
from tilegraph.dialects.tile import Load3dOp
from tilegraph.dialects.tile.base import buffer_bytes, memref_shape
from tilegraph.hardware import hardware_preset
from tilegraph.passes.pipelines import with_small_channel
from tilegraph.runtime.compiled import CompileError
from tilegraph.tools.run.cli import run

FP16_TOLERANCE = (1e-2, 2e-2)
"""rtol / atol at precision fp16: up to 196 products rounded to fp16 each, outputs up to
~15 (the regular cube path differs from the macro level by as much)."""

# name: (input shape, weight shape, conv attributes)
CASES: dict[str, tuple[list[int], list[int], dict]] = {
    "stem_7x7_s2": ([2, 3, 17, 15], [20, 3, 7, 7], {"strides": [2, 2], "pads": [3, 3, 3, 3]}),
    "3x3_c1": ([2, 1, 9, 11], [20, 1, 3, 3], {"pads": [1, 1, 1, 1]}),
    "3x3_c3": ([1, 3, 9, 11], [20, 3, 3, 3], {"pads": [1, 1, 1, 1]}),
    "3x3_c4": ([3, 4, 9, 11], [36, 4, 3, 3], {"pads": [1, 1, 1, 1]}),
    "5x5_dilated": (
        [1, 3, 13, 12],
        [20, 3, 5, 5],
        {"strides": [2, 1], "dilations": [2, 2], "pads": [4, 2, 1, 3]},
    ),
}


def _conv_module(name: str, padded: bool = False) -> tuple[ModuleOp, list[np.ndarray]]:
    x_shape, w_shape, attrs = CASES[name]
    g = Graph(padded)
    x = g.input(x_shape, "NCHW")
    bias = g.const([w_shape[0]])
    y = g.op("relu", g.op("conv2d", x, g.const(w_shape, "NCHW"), bias, **attrs))
    return g.b.build(y), g.arrays


def _load3ds(levels: Levels) -> list[Load3dOp]:
    return [op for op in levels.module.walk() if isinstance(op, Load3dOp)]


def _run(name: str, platform: str, precision: str, small_channel: bool) -> Levels:
    module, inputs = _conv_module(name)
    return run_levels(module, inputs, platform, precision, small_channel=small_channel)


def _k_fractals(w_shape: Sequence[int], c0: int = 16) -> int:
    return -(-4 * w_shape[2] * w_shape[3] // c0)


@pytest.mark.parametrize("platform", ["test", "ascend310p", "ascend910b"])
@pytest.mark.parametrize("precision", ["origin", "fp16"])
@pytest.mark.parametrize("name", list(CASES))
def test_c04_conv_every_level_agrees(name: str, precision: str, platform: str) -> None:
    c04 = _run(name, platform, precision, small_channel=True)
    tolerance = FP16_TOLERANCE if precision == "fp16" else (1e-4, 1e-5)
    assert_matches(c04, *tolerance)
    assert_units(c04.tiled_kernels, CONV, "tile-kernels")
    loads = _load3ds(c04)
    assert loads and all(op.c04 is not None for op in loads)
    # a K step holds at most the ceil(4·kh·kw, C0) fractals of the whole C04 K
    assert all(memref_shape(op.dst)[1] <= _k_fractals(CASES[name][1]) for op in loads)
    # the same numbers as the regular cube path (fp32 accumulation in another K order)
    regular = _run(name, platform, precision, small_channel=False)
    assert not any(op.c04 is not None for op in _load3ds(regular))
    for executor in ("interpret", "fast"):
        for a, b in zip(c04.outputs[executor], regular.outputs[executor], strict=True):
            scale = float(np.abs(b).max()) or 1.0
            np.testing.assert_allclose(
                a, b, rtol=0, atol=(1e-3 if precision == "fp16" else 1e-5) * scale
            )


def test_c04_padding_lanes_are_never_read() -> None:
    """NCHW inputs held as NC1HWC0 with NaN padding: the C04 conversion and the C04
    img2col must not let a NaN into the sums (the conversion runs on the host here)."""
    module, inputs = _conv_module("3x3_c3", padded=True)
    levels = run_levels(module, inputs, "test", pad_value=NAN, small_channel=True)
    assert_matches(levels)
    assert all(op.c04 is not None for op in _load3ds(levels))


def test_small_channel_leaves_wide_and_grouped_convs_alone() -> None:
    """C = 5, and a grouped conv of 2 channels per group: the regular cube path."""
    g = Graph()
    x = g.input([1, 5, 9, 9], "NCHW")
    y = g.op("conv2d", x, g.const([16, 5, 3, 3], "NCHW"), pads=[1, 1, 1, 1])
    z = g.op("conv2d", g.input([1, 4, 9, 9], "NCHW"), g.const([4, 2, 3, 3], "NCHW"), group=2)
    levels = run_levels(g.b.build(y, z), g.arrays, "test", small_channel=True)
    assert_matches(levels)
    assert not any(op.c04 is not None for op in _load3ds(levels))


# ---- the entry points and the cost --------------------------------------------------------


def _stem_onnx(path: Path) -> str:
    """Conv 3 -> 16 channels, 7x7, stride 2, pad 3, then Relu, on a 32x32 image."""
    w = numpy_helper.from_array(np.full((16, 3, 7, 7), 0.01, np.float32), "w")
    conv = helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[3, 3, 3, 3])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])
    nodes = [conv, helper.make_node("Relu", ["c"], ["y"])]
    return save_model(helper.make_graph(nodes, "stem", [x], [y], [w]), path)


def _conv_kernels(module: ModuleOp) -> list[str]:
    return [str(op.attributes["layout.kernel"]) for op in module.walk() if isinstance(op, Conv2dOp)]


def test_compile_small_channel_option(tmp_path: Path) -> None:
    model = _stem_onnx(tmp_path / "stem.onnx")
    on = tilegraph.compile(model, target="reference", small_channel=True)
    off = tilegraph.compile(model, target="reference")
    assert _conv_kernels(on.module) == ['"cube_c04"']
    assert _conv_kernels(off.module) == ['"cube"']
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    tiled = tilegraph.compile(model, platform="ascend310p", small_channel=True)
    np.testing.assert_allclose(tiled.run([x])[0], off.run([x])[0], rtol=1e-4, atol=1e-5)
    with pytest.raises(CompileError, match="small-channel mode needs a pipeline"):
        tilegraph.compile(model, pipeline="O1", small_channel=True)


def test_with_small_channel_sets_the_option_where_formats_are_selected() -> None:
    assert with_small_channel("set-target{platform=test},O2") == (
        'set-target{platform="test"},O2{small-channel=true}'
    )
    assert 'select-storage-format{strategy="naive" small-channel=true}' in with_small_channel(
        "infer-origin-format,select-storage-format{strategy=naive},insert-trans-data"
    )


def test_run_small_channel_estimate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``tilegraph-run --small-channel --estimate``: the stem's img2col moves ~4x fewer bytes."""
    model = _stem_onnx(tmp_path / "stem.onnx")
    args = [model, "--estimate", "--no-format-report", "--platform", "ascend310p"]
    l0a = {}
    for flag in ((), ("--small-channel",)):
        report = tmp_path / "r.json"
        assert run([*args, *flag, "--json", str(report)]) == 0
        l0a[flag] = json.loads(report.read_text())["cycles"]["bytes_per_path"]["L1->L0A"]
    capsys.readouterr()
    # K: ceil(4·49, 16) = 13 fractals instead of 49 (each rounded up to whole K steps)
    assert l0a[("--small-channel",)] * 3 < l0a[()]


def test_c04_load3d_costs_its_fractals() -> None:
    """The cost model charges load3d for the bytes it writes: the C04 fractals."""
    levels = _run("stem_7x7_s2", "ascend310p", "fp16", small_channel=True)
    regular = _run("stem_7x7_s2", "ascend310p", "fp16", small_channel=False)
    hw = hardware_preset("ascend310p")
    c04_load, regular_load = _load3ds(levels)[0], _load3ds(regular)[0]
    assert c04_load.moved_bytes() == buffer_bytes(c04_load.dst)
    # per K fractal, the same img2col rate: the cost follows the fractals written
    c04_k1, regular_k1 = memref_shape(c04_load.dst)[1], memref_shape(regular_load.dst)[1]
    per_fractal = cost_of(c04_load, hw) / c04_k1
    assert per_fractal == pytest.approx(cost_of(regular_load, hw) / regular_k1, rel=0.2)
