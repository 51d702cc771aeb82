"""The search space of every kernel (:func:`tilegraph.lowering.search_space.kernel_space`):
the default point lowers to the same module as no parameters on every kernel of real
models (both a 910B and the ragged ``test`` preset), other points of each kind of
parameter keep the numbers on both executors, a point that does not fit makes the kernel a
host kernel with a reason (or a :class:`TilingParamError` naming it), and the space sizes
are sane (the figures a tuner plans its budget with)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from math import prod

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tests.zoo.zoo import MODELS, make_inputs
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import light_model
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.kernel_attrs import HOST_REASON_ATTR, KERNEL_ATTR
from tilegraph.lowering.analysis.tuning_params import (
    PARAMS_ATTR,
    ParamValue,
    TilingParam,
    TilingParamError,
    default_point,
    kernel_params,
    set_kernel_params,
)
from tilegraph.lowering.conversion.tiling import classify_kernel
from tilegraph.lowering.search_space import kernel_space
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import NPU_PASSES, run_pipeline
from tilegraph.runtime.binding import import_bound
from tilegraph.runtime.reference import run_reference
from tilegraph.runtime.tiles import run_tiles

AFTER_KERNELS = "tile-kernels," + ",".join(NPU_PASSES)
"""What follows ``lower-graph-to-kernels`` (without verify-sync: it changes nothing)."""

Space = list[TilingParam]
Point = dict[str, ParamValue]


@cache
def _macro(model: str, platform: str) -> tuple[ModuleOp, ModuleOp, list[np.ndarray]]:
    """``model`` ("light:NAME" or a zoo model) after ``lower-graph-to-kernels``, the graph
    it came from and the inputs of its first data set (cached: callers clone what they
    change)."""
    if model.startswith("light:"):
        module = load_onnx(light_model(model.removeprefix("light:")))
        inputs: dict[str, np.ndarray] = {}
    else:
        zoo = MODELS[model]
        inputs = make_inputs(zoo, 0)
        module = import_bound(zoo.path(), inputs, static=True).module
    run_pipeline(f"set-target{{platform={platform}}},O2", make_context(), module)
    graph = module.clone()
    run_pipeline("lower-graph-to-kernels", make_context(), module)
    return module, graph, list(inputs.values())


def _kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and KERNEL_ATTR in f.attributes]


def _spaces(module: ModuleOp, platform: str) -> dict[str, Space]:
    hw = hardware_preset(platform)
    return {k.sym_name.data: kernel_space(k, hw) for k in _kernels(module)}


def _lowered_at(module: ModuleOp, points: dict[str, Point]) -> ModuleOp:
    """A copy of macro module ``module`` lowered with ``points[kernel]`` as its params."""
    copy = module.clone()
    for kernel in _kernels(copy):
        set_kernel_params(kernel, points.get(kernel.sym_name.data, {}))
    run_pipeline(AFTER_KERNELS, make_context(), copy)
    return copy


def _without_params(module: ModuleOp) -> str:
    for f in module.ops:
        if isinstance(f, func.FuncOp):
            f.attributes.pop(PARAMS_ATTR, None)
    return str(module)


CASES = [
    pytest.param("bert", "ascend910b", id="bert-910b"),
    pytest.param("bert", "test", id="bert-test"),
    pytest.param("llama", "ascend910b", id="llama-910b"),
    pytest.param("yolov8", "test", id="yolov8-test"),
    pytest.param("light:resnet50", "ascend910b", id="resnet50-910b", marks=pytest.mark.slow),
    pytest.param("swin", "ascend910b", id="swin-910b", marks=pytest.mark.slow),
    pytest.param("yolov8", "ascend910b", id="yolov8-910b", marks=pytest.mark.slow),
    pytest.param("light:resnet50", "test", id="resnet50-test", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("model", "platform"), CASES)
def test_the_default_point_is_the_heuristic(model: str, platform: str) -> None:
    module, _, _ = _macro(model, platform)
    spaces = _spaces(module, platform)
    assert all(kernel_params(k) == {} for k in _kernels(module))  # spaces change nothing
    plain = _lowered_at(module, {})
    chosen = _lowered_at(module, {name: default_point(s) for name, s in spaces.items()})
    for kernel in _kernels(chosen):  # the point stays on the kernel (both mix parts)
        if kernel.attributes[KERNEL_ATTR].data != "host":  # type: ignore[attr-defined]
            assert PARAMS_ATTR in kernel.attributes, kernel.sym_name.data
    assert _without_params(chosen) == str(plain)


def test_every_parameter_is_declared_sanely() -> None:
    module, _, _ = _macro("light:resnet50", "ascend910b")
    for name, space in _spaces(module, "ascend910b").items():
        names = [p.name for p in space]
        assert len(names) == len(set(names)), name
        for param in space:
            assert param.default in param.values and len(set(param.values)) == len(param.values)
            assert param.doc and "." in param.name, param
            sizes = [v for v in param.values if isinstance(v, int) and not isinstance(v, bool)]
            assert sizes == sorted(sizes), param


def test_space_sizes_of_light_resnet50() -> None:
    module, _, _ = _macro("light:resnet50", "ascend910b")
    kernels = {k.sym_name.data: k for k in _kernels(module)}
    for name, space in _spaces(module, "ascend910b").items():
        size = prod(len(p.values) for p in space)
        unit = kernels[name].attributes[KERNEL_ATTR].data  # type: ignore[attr-defined]
        if unit == "cube":
            assert len(space) >= 6, name  # strategy + multi-buffer + split-cores
            assert 10**3 <= size <= 10**8, (name, size)  # a search, not an enumeration
        elif unit == "vector":
            assert 1 <= len(space) and size <= 10**4, (name, size)


# ---- other points keep the numbers ------------------------------------------------------

Chooser = Callable[[Space], Point]


def _other(param: TilingParam, pick: Callable[[list[ParamValue]], ParamValue]) -> ParamValue:
    """A value of ``param`` other than its default (``pick`` of the others)."""
    others = [v for v in param.values if v != param.default]
    return pick(others) if others else param.default


def _set(prefix: str, pick: Callable[[list[ParamValue]], ParamValue]) -> Chooser:
    """Every parameter starting with ``prefix`` at a non-default value."""
    return lambda space: {p.name: _other(p, pick) for p in space if p.name.startswith(prefix)}


def _smallest(values: list[ParamValue]) -> ParamValue:
    return values[0]


def _largest(values: list[ParamValue]) -> ParamValue:
    return values[-1]


def _off(space: Space) -> Point:
    return {p.name: False for p in space if p.name.startswith("multi_buffer.")}


def _no_split(space: Space) -> Point:
    return {p.name: "none" for p in space if p.name == "split_cores.loops"}


def _other_split(space: Space) -> Point:
    return {
        p.name: next((v for v in p.values if v not in (p.default, "none")), p.default)
        for p in space
        if p.name == "split_cores.loops"
    }


def _conv_small(space: Space) -> Point:
    """Small conv tiles, streamed weights: fits wherever the default does."""
    point = _set("conv.", _smallest)(space)
    point.pop("conv.cols", None)
    point.pop("conv.kc1", None)
    return point | {"conv.weights": "streamed"}


def _conv_width(space: Space) -> Point:
    """Width tiles and C1 chunks (the narrow path), wherever the kernel has them."""
    point: Point = {}
    for p in space:
        if p.name in ("conv.cols", "conv.kc1"):
            point[p.name] = _other(p, _largest)
    return point


def _matmul_reuse(space: Space) -> Point:
    """Another L1 reuse with a group size that fits its axis, and one K step per window."""
    names = {p.name: p for p in space}
    if "matmul.l1_reuse" not in names:
        return {}
    blocks = names["matmul.reuse_blocks"]
    default = names["matmul.l1_reuse"].default
    reuse = "a_panel" if default != "a_panel" else "b_panel"
    return {
        "matmul.l1_reuse": reuse,
        "matmul.reuse_blocks": next((v for v in blocks.values if v != 1), 1),
        "matmul.l1_k_steps": 1,
    }


def _split_deeper(space: Space) -> Point:
    """Vector tiles split two axes deeper than the outermost fitting one."""
    return {p.name: 2 for p in space if p.name == "vector.split_depth"}


def _matmul_block(space: Space) -> Point:
    return {p.name: 1 for p in space if p.name in ("matmul.m1", "matmul.n1", "matmul.k1")}


CHOOSERS: dict[str, Chooser] = {
    "conv-small": _conv_small,
    "conv-width": _conv_width,
    "matmul-reuse": _matmul_reuse,
    "matmul-block": _matmul_block,
    "vector-ub-small": _set("vector.", _smallest),
    "vector-ub-large": _set("vector.", _largest),
    "vector-split-deeper": _split_deeper,
    "multi-buffer-off": _off,
    "split-cores-none": _no_split,
    "split-cores-other": _other_split,
}


def _check_point(model: str, platform: str, chooser: Chooser, executor: str) -> None:
    module, graph, arrays = _macro(model, platform)
    points = {name: chooser(space) for name, space in _spaces(module, platform).items()}
    assert any(points.values()), "the chooser found no parameter to set"
    lowered = _lowered_at(module, points)
    assert _without_params(lowered.clone()) != str(_lowered_at(module, {}))  # a new point
    want = run_reference(graph, arrays)
    got = run_tiles(lowered, arrays, executor=executor, pad_value=float("nan"))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3)


POINT_CASES = [
    ("small_cnn", "test", "conv-small"),
    ("small_cnn", "ascend910b", "conv-width"),
    ("small_cnn", "ascend910b", "split-cores-other"),
    ("small_cnn", "test", "multi-buffer-off"),
    ("masked_attention", "ascend910b", "matmul-reuse"),
    ("masked_attention", "test", "matmul-block"),
    ("masked_attention", "test", "vector-ub-small"),
    ("masked_attention", "test", "vector-ub-large"),
    ("masked_attention", "ascend910b", "split-cores-none"),
    ("bert", "test", "vector-ub-small"),
    ("bert", "ascend910b", "vector-split-deeper"),
]


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize(("model", "platform", "chooser"), POINT_CASES)
def test_another_point_keeps_the_numbers(
    model: str, platform: str, chooser: str, executor: str
) -> None:
    _check_point(model, platform, CHOOSERS[chooser], executor)


# ---- points that do not fit -------------------------------------------------------------


def _first_kernel(module: ModuleOp, prefix: str) -> func.FuncOp:
    return next(k for k in _kernels(module) if any(p.startswith(prefix) for p in _names(k)))


def _names(kernel: func.FuncOp) -> list[str]:
    return [p.name for p in kernel_space(kernel, hardware_preset("test"))]


@pytest.mark.parametrize(
    ("prefix", "point", "reason"),
    [
        ("conv.", {"conv.n1": 64, "conv.rows": 32, "conv.k1": 64}, "do not fit"),
        ("conv.", {"conv.weights": "resident", "conv.rows": 32}, "do not fit"),
        ("matmul.", {"matmul.l1_reuse": "none", "matmul.reuse_blocks": 2}, "without an L1"),
    ],
)
def test_a_point_that_does_not_fit_is_a_host_reason(prefix: str, point: Point, reason: str) -> None:
    model = "small_cnn" if prefix == "conv." else "masked_attention"
    module = _macro(model, "test")[0].clone()
    kernel = _first_kernel(module, prefix)
    space = {p.name: p for p in kernel_space(kernel, hardware_preset("test"))}
    # the largest legal value where the point asks for more than the kernel offers
    legal = {
        k: v if v in space[k].values else max(space[k].values)  # type: ignore[type-var]
        for k, v in point.items()
    }
    if not any(v != space[k].default for k, v in legal.items()):
        pytest.skip("the kernel's space has no larger value")
    set_kernel_params(kernel, legal)
    unit, why = classify_kernel(kernel, hardware_preset("test"))
    assert unit == "host" and why is not None and reason in why, why
    run_pipeline(AFTER_KERNELS, make_context(), module)  # tile-kernels keeps it on the host
    assert kernel.attributes[KERNEL_ATTR].data == "host"  # type: ignore[attr-defined]
    assert reason in kernel.attributes[HOST_REASON_ATTR].data  # type: ignore[attr-defined]


def test_a_value_outside_a_transform_space_names_the_kernel() -> None:
    module = _macro("small_cnn", "test")[0].clone()
    kernel = _first_kernel(module, "split_cores.")
    set_kernel_params(kernel, {"split_cores.loops": "no_such_loop"})
    with pytest.raises(TilingParamError, match=r"kernel @\w+: .*'split_cores.loops'"):
        run_pipeline(AFTER_KERNELS, make_context(), module)


def test_mix_parts_carry_the_kernel_params() -> None:
    module, _, _ = _macro("masked_attention", "ascend910b")
    spaces = _spaces(module, "ascend910b")
    lowered = _lowered_at(module, {n: default_point(s) for n, s in spaces.items()})
    parts = [f for f in lowered.ops if isinstance(f, func.FuncOp) and "_mix_" in f.sym_name.data]
    if not parts:
        pytest.skip("no mix kernel on this model")
    assert all(kernel_params(p) for p in parts)


def test_every_parameter_is_documented() -> None:
    """docs/tuning.md's table names every parameter light ResNet-50 and BERT declare
    (``multi_buffer.<buffer>`` stands for the per-buffer switches)."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "tuning.md").read_text()
    table = page[page.index("## The search space") :]
    for model in ("light:resnet50", "bert"):
        module, _, _ = _macro(model, "ascend910b")
        for space in _spaces(module, "ascend910b").values():
            for param in space:
                name = (
                    "multi_buffer.<buffer>"
                    if param.name.startswith("multi_buffer.")
                    else param.name
                )
                assert f"`{name}`" in table, name
