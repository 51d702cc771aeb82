"""An int8 convolution whose padding holds a zero point known only at run time
(``graph.quant_conv2d``'s ``pad_zero`` operand, what ``fold-integer-ops`` makes of a padded
ConvInteger behind DynamicQuantizeLinear): the kernel reads it on the scalar unit and the
loads that pad (the copy or load_5hd into L1, load3d) take it as an operand.

The zero point is a graph input here, so one compiled model runs with -128, 0 and 127 (the
int8 range's ends and the symmetric case). The scale is 1.0, so the result is the int32
sum itself; the test computes that sum in int64 from the padded data (``np.pad`` with the
zero point) and every level (graph, macro kernels, both executors of the tiled kernels)
must give it exactly, border pixels included.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i8, i64
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from tests.lowering.test_tile_differential import CUBE, Graph, assert_units, run_levels
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import CopyOp, GetValueOp, Load3dOp, Load5hdOp
from tilegraph.dialects.tile.base import scoped_memref
from tilegraph.hardware import hardware_preset
from tilegraph.runtime.tiles import run_tiles

ZERO_POINTS = (-128, 0, 127)

# name: (input shape, weight shape, strides, pads)
CONVS: dict[str, tuple[list[int], list[int], int, int]] = {
    "3x3_s1": ([1, 20, 9, 9], [24, 20, 3, 3], 1, 1),
    "3x3_s2": ([1, 40, 11, 11], [36, 40, 3, 3], 2, 1),
    "7x7_s2": ([1, 3, 17, 11], [18, 3, 7, 7], 2, 3),
    "7x7_s1": ([1, 20, 12, 12], [16, 20, 7, 7], 1, 3),
    "wide_rows": ([1, 20, 5, 70], [24, 20, 3, 3], 1, 1),
}


def _input(g: Graph, shape: Sequence[int], storage: str | None, data: np.ndarray) -> SSAValue:
    """An int8 graph input holding ``data`` (the test's own, not the builder's floats)."""
    fmt = "NCHW" if len(shape) == 4 else "ND"
    t = TensorType(list(shape), element_type_of(np.dtype(np.int8)), fmt, storage)
    arg = g.b.block.insert_arg(t, len(g.b.block.args))
    arg.name_hint = f"in{len(g.arrays)}"
    g.arrays.append(data)
    return arg


def _model(name: str, blocked: bool):
    """``quant_conv2d(x, w, bias, 1.0, zero point)`` with int8 ``x`` and the zero point as
    inputs (``x`` held as NC1HWC0 when ``blocked``: the copy into L1 pads, else as NCHW:
    load_5hd or a TransData first), and the int8 weights and int32 bias it used."""
    x_shape, w_shape, stride, pad = CONVS[name]
    g = Graph()
    rng = np.random.default_rng(7)
    x_data = rng.integers(-128, 128, x_shape).astype(np.int8)
    x = _input(g, x_shape, "NC1HWC0" if blocked else None, x_data)
    zero = _input(g, [], None, np.array(0, np.int8))
    w_data = rng.integers(-128, 128, w_shape).astype(np.int8)
    bias_data = rng.integers(-5000, 5000, w_shape[0]).astype(np.int32)
    w = g.b.constant(w_data, "NCHW")
    bias = g.b.constant(bias_data)
    scale = g.b.constant(np.ones(w_shape[0], np.float32))
    attrs = {"strides": [stride] * 2, "pads": [pad] * 4}
    y = g.op("quant_conv2d", x, w, bias, scale, zero, **attrs)
    return g.b.build(y), g.arrays, (w_data, bias_data, stride, pad)


def _int64_conv(x: np.ndarray, zero: int, w: np.ndarray, bias: np.ndarray, stride, pad):
    """The convolution of ``x`` padded with ``zero``, in int64: the expected sum."""
    padded = np.pad(x.astype(np.int64), [(0, 0), (0, 0), (pad, pad), (pad, pad)], "constant",
                    constant_values=zero)  # fmt: skip
    n, _, h, width = padded.shape
    m, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (width - kw) // stride + 1
    out = np.zeros((n, m, oh, ow), np.int64)
    w64 = w.astype(np.int64)
    for i in range(kh):
        for j in range(kw):
            taps = padded[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("mc,nchw->nmhw", w64[:, :, i, j], taps)
    return out + bias.astype(np.int64).reshape(1, -1, 1, 1)


def _check(name: str, platform: str, blocked: bool) -> ModuleOp:
    module, inputs, (w, bias, stride, pad) = _model(name, blocked)
    levels = run_levels(module, inputs, platform)
    assert_units(levels.tiled_kernels, {"graph.quant_conv2d": CUBE}, f"tile-kernels ({platform})")
    reads = [op for op in levels.module.walk() if isinstance(op, GetValueOp)]
    assert len(reads) == 1, "the zero point is read once per kernel"
    pads = [
        op
        for op in levels.module.walk()
        if isinstance(op, Load3dOp | CopyOp | Load5hdOp) and op.pad_scalar is not None
    ]
    assert any(isinstance(op, Load3dOp) for op in pads)
    assert all(op.pad_scalar is reads[0].result for op in pads)
    assert any(isinstance(op, CopyOp | Load5hdOp) for op in pads), "no load fills the rows"
    x = inputs[0]
    for zero in ZERO_POINTS:
        run = [x, np.array(zero, np.int8)]
        want = _int64_conv(x, zero, w, bias, stride, pad).astype(np.float32)
        for executor in ("fast", "interpret"):
            (got,) = run_tiles(levels.module, run, executor=executor)
            np.testing.assert_array_equal(got, want, err_msg=f"{executor}, zero point {zero}")
        if zero:  # the data reach the border pixels: the zero point changes them
            unpadded = _int64_conv(x, 0, w, bias, stride, pad).astype(np.float32)
            assert np.any(want[..., 0, :] != unpadded[..., 0, :])
    return levels.module


@pytest.mark.parametrize("blocked", [True, False], ids=["nc1hwc0", "nchw"])
@pytest.mark.parametrize("name", list(CONVS))
def test_runtime_pad_on_the_test_preset(name: str, blocked: bool):
    """Several tiles, K steps, ragged channel tails (20, 40, 3 channels of C0 = 32) and, for
    ``wide_rows``, width-tiled windows whose padding columns the load fills."""
    module = _check(name, "test", blocked)
    if name == "wide_rows":  # width tiles: the window holds the padding columns
        loads = [op for op in module.walk() if isinstance(op, Load3dOp)]
        assert loads and all(op.pad_left.value.data == 0 for op in loads)


@pytest.mark.parametrize("platform", ["ascend910b", "ascend310p"])
@pytest.mark.parametrize("name", ["3x3_s2", "7x7_s2", "7x7_s1"])
def test_runtime_pad_on_the_ascend_presets(name: str, platform: str):
    _check(name, platform, blocked=False)


def test_pad_value_and_the_run_time_pad_exclude_each_other():
    """The graph op and the tile op: one padding value, a property or an operand."""
    g = Graph()
    x = _input(g, [1, 4, 5, 5], None, np.zeros((1, 4, 5, 5), np.int8))
    zero = _input(g, [], None, np.array(0, np.int8))
    w = g.b.constant(np.ones((8, 4, 3, 3), np.int8), "NCHW")
    bias, scale = g.b.constant(np.zeros(8, np.int32)), g.b.constant(np.ones(8, np.float32))
    with pytest.raises(ShapeError, match="exclude each other"):
        g.op("quant_conv2d", x, w, bias, scale, zero, pads=[1] * 4, pad_value=3)
    with pytest.raises(ShapeError, match="one int8"):
        g.op("quant_conv2d", x, w, bias, scale, bias, pads=[1] * 4)
    fmap = create_ssa_value(scoped_memref([1, 1, 5, 5, 32], i8, "L1"))
    dst = create_ssa_value(scoped_memref([1, 1, 16, 32], i8, "L0A"))
    index = create_ssa_value(IndexType())

    def load(pad) -> Load3dOp:
        return Load3dOp(
            fmap, index, dst, pad_value=pad, kernel_shape=[3, 3], strides=[1, 1],
            dilations=[1, 1], pad_left=1, out_width=5, channels=4,
        )  # fmt: skip

    load(index).verify()
    both = load(index)
    both.properties["pad_value"] = IntegerAttr(3, i64)
    with pytest.raises(VerifyException, match="exclude each other"):
        both.verify()


def test_a_scalar_read_of_gm_waits_for_the_round_trip():
    """``tile.get_value`` of GM (the cube kernel's read of its padding value) costs the
    scalar read and the preset's GM read latency; of UB, the read alone."""
    hw = hardware_preset("ascend910b")
    index = create_ssa_value(IndexType())
    gm = GetValueOp(create_ssa_value(scoped_memref([1], i8, "GM")), [index])
    ub = GetValueOp(create_ssa_value(scoped_memref([1], i8, "UB")), [index])
    assert hw.gm_read_latency_cycles > 0
    assert cost_of(gm, hw) - cost_of(ub, hw) == hw.gm_read_latency_cycles
