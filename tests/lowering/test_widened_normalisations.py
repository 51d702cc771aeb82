"""Softmax, log-softmax, layer norm, RMS norm and the sums (reduce_sum, reduce_mean, ...) on
16-bit data compute in f32 on the vector unit, as CANN's ``softmax_v2``, ``layer_norm``,
``rms_norm`` and ``reduce_sum`` do: the tile program casts the loaded fp16
tile up, runs in f32, and casts the result down once (docs/hardware.md, "Vector kernels'
compute type"). Checked on the ``test`` preset (the kernels split into tiles, NaN in
padding lanes): the IR's compute type, the numbers (within one fp16 rounding of the exact
result, on both executors), that fp32 data is untouched, and what the cycle model charges."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import SSAValue

from tests.lowering.test_tile_differential import (
    NAN,
    VECTOR,
    Graph,
    assert_units,
    run_levels,
)
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.lowering.analysis.kernel_attrs import KERNEL_ATTR

Builder = Callable[[Graph], list[SSAValue]]


def softmax(shape: Sequence[int], log: bool = False) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        return [g.op("log_softmax" if log else "softmax", g.input(shape), axis=-1)]

    return build


def layer_norm(shape: Sequence[int]) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        width = [shape[-1]]
        x = g.input(shape)
        # scale and bias as inputs: the exact result below reads them from g.arrays
        return [g.op("layer_norm", x, g.input(width), g.input(width), axis=-1)]

    return build


def rms_norm(shape: Sequence[int]) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        return [g.op("rms_norm", g.input(shape), g.input([shape[-1]]), axis=-1)]

    return build


def reduce(kind: str, shape: Sequence[int]) -> Builder:
    def build(g: Graph) -> list[SSAValue]:
        return [g.op(kind, g.input(shape), g.ints([-1]), keepdims=1)]

    return build


def _exact(name: str, x: np.ndarray, params: list[np.ndarray]) -> np.ndarray:
    x = x.astype(np.float64)
    if name == "layer_norm":
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        scale, bias = (p.astype(np.float64) for p in params)
        return (x - mean) / np.sqrt(var + 1e-5) * scale + bias
    if name in ("reduce_sum", "reduce_mean"):
        # a long fp16 sum rounded in fp16 at each step would drift by several ulps
        total = x.sum(-1, keepdims=True)
        return total / x.shape[-1] if name == "reduce_mean" else total
    if name == "rms_norm":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * params[0]
    shifted = x - x.max(-1, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(-1, keepdims=True))
    return shifted - log_sum if name == "log_softmax" else np.exp(shifted - log_sum)


CASES: dict[str, tuple[str, Builder]] = {
    "softmax": ("softmax", softmax([9, 300])),
    "log_softmax": ("log_softmax", softmax([7, 130], log=True)),
    "layer_norm": ("layer_norm", layer_norm([11, 200])),
    "rms_norm": ("rms_norm", rms_norm([11, 200])),
    "reduce_sum": ("reduce_sum", reduce("reduce_sum", [9, 600])),
    "reduce_mean": ("reduce_mean", reduce("reduce_mean", [7, 1000])),
}


def _kernel_ops(module, graph_op: str) -> list[str]:
    """``name element-types`` of each tile op of the kernel that runs ``graph_op``."""
    (kernel,) = [
        fn
        for fn in module.ops
        if isinstance(fn, func.FuncOp)
        and KERNEL_ATTR in fn.attributes
        and graph_op in getattr(fn.attributes.get("tile.ops"), "data", "")
    ]
    described = []
    for op in kernel.walk():
        if op.name.startswith("tile.v"):
            types = [
                str(o.type.get_element_type())
                for o in op.operands
                if isinstance(o.type, MemRefType)
            ]
            described.append(f"{op.name} {' '.join(types)}")
    return described


@pytest.mark.parametrize("name", list(CASES))
def test_fp16_normalisations_compute_in_f32(name: str):
    kind, build = CASES[name]
    g = Graph(padded=True, dtype="float16")
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_units(levels.tiled_kernels, {f"graph.{kind}": VECTOR}, "tile-kernels{platform=test}")
    assert levels.splits(), "the test preset should split the kernel into tiles"
    ops = _kernel_ops(levels.module, f"graph.{kind}")
    casts = [op for op in ops if op.startswith("tile.vcast")]
    assert casts[0] == "tile.vcast f16 f32" and casts[-1] == "tile.vcast f32 f16", ops
    arithmetic = [op for op in ops if not op.startswith(("tile.vcast", "tile.vdup"))]
    assert arithmetic and all(set(op.split()[1:]) == {"f32"} for op in arithmetic), ops

    exact = _exact(kind, g.arrays[0], g.arrays[1:])
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    for level in ("interpret", "fast"):
        (out,) = levels.outputs[level]
        error = np.abs(out.astype(np.float64) - exact)
        # one rounding to fp16 (half an ulp) plus the f32 program's own error
        assert (error <= ulp).all(), f"{level}: {error.max()} over one fp16 ulp"


def test_fp16_max_keeps_its_type():
    """Max and min are exact in any type: CANN's reductions keep them in fp16."""
    g = Graph(padded=True, dtype="float16")
    module = g.b.build(*reduce("reduce_max", [9, 300])(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    ops = _kernel_ops(levels.module, "graph.reduce_max")
    assert ops and not any(op.startswith("tile.vcast") for op in ops), ops
    assert all("f32" not in op for op in ops), ops


def test_fp32_normalisations_keep_their_type():
    g = Graph(padded=True)
    module = g.b.build(*softmax([9, 300])(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    ops = _kernel_ops(levels.module, "graph.softmax")
    assert not any(op.startswith("tile.vcast") for op in ops), ops


def test_a_widened_softmax_costs_its_casts():
    """An fp16 softmax computes as an fp32 one does, plus a cast up and a cast down: the
    cycle model charges it the fp32 kernel's vector cycles and the two casts, 64 elements
    a cycle each (the documented vcast rate), where the two tile alike."""
    rows, cols, cast_rate = 64, 128, 64

    def vector_cycles(dtype: str) -> int:
        g = Graph(dtype=dtype)
        module = g.b.build(*softmax([rows, cols])(g))
        levels = run_levels(module, g.arrays, "test")
        return sum(k.busy_cycles.get("V", 0) for k in simulate_module(levels.module).kernels)

    casts = 2 * rows * cols // cast_rate
    assert vector_cycles("float16") == vector_cycles("float32") + casts
