"""Rule 40: decompositions as exporters spell them become LayerNorm / RMSNorm / GELU /
Softmax, with the same numbers; near misses stay decomposed."""

from __future__ import annotations

from collections import Counter
from math import pi, sqrt

import numpy as np
import pytest

from tests.passes.semantics import run_pipeline_checked
from tilegraph.builder import GraphBuilder

RNG = np.random.default_rng(3)


def _f32(v) -> np.ndarray:  # noqa: ANN001
    return np.asarray(v, np.float32)


def _ops(module) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op.name != "graph.constant")


def _layer_norm(  # noqa: ANN201
    b: GraphBuilder,
    x,  # noqa: ANN001
    axes=(-1,),  # noqa: ANN001
    square: str = "pow",
    affine: bool = True,
    form: str = "div",
    eps: bool = True,
):
    ax = b.constant(np.array(axes, np.int64))
    mean = b.op("reduce_mean", x, ax)
    d = b.op("sub", x, mean)
    sq = b.op("pow", d, b.constant(_f32(2.0))) if square == "pow" else b.op("mul", d, d)
    var = b.op("reduce_mean", sq, ax)
    root = b.op("sqrt", b.op("add", var, b.constant(_f32(1e-5))) if eps else var)
    if form == "div":
        n = b.op("div", d, root)
    else:  # Cohere's LayerNorm: (x - mean) * torch.rsqrt(var + eps)
        n = b.op("mul", d, b.op("reciprocal", root))
    if not affine:
        return n
    gamma = b.constant(RNG.standard_normal(8).astype(np.float32))
    beta = b.constant(RNG.standard_normal(8).astype(np.float32))
    return b.op("add", b.op("mul", n, gamma), beta)


@pytest.mark.parametrize("form", ["div", "reciprocal"])
@pytest.mark.parametrize("square", ["pow", "mul"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(square: str, affine: bool, form: str):
    b = GraphBuilder()
    x = b.input("x", [2, 3, 8])
    module = b.build(_layer_norm(b, x, square=square, affine=affine, form=form))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-layer-norm},dce")
    assert _ops(module) == Counter(
        {"builtin.module": 1, "func.func": 1, "graph.layer_norm": 1, "func.return": 1}
    )


@pytest.mark.parametrize("form", ["div", "reciprocal"])
def test_layer_norm_without_eps_has_eps_0(form: str):
    """I-BERT's float-mode IntLayerNorm: ``(x - mean) / sqrt(var)``, no ``+ eps``."""
    b = GraphBuilder()
    x = b.input("x", [2, 3, 8])
    module = b.build(_layer_norm(b, x, form=form, eps=False))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-layer-norm},dce")
    assert _ops(module)["graph.layer_norm"] == 1 and _ops(module)["graph.reduce_mean"] == 0
    (ln,) = [op for op in module.walk() if op.name == "graph.layer_norm"]
    assert ln.attr("epsilon") == 0.0


def test_layer_norm_over_a_middle_axis_is_not_recomposed():
    b = GraphBuilder()
    x = b.input("x", [2, 3, 8])
    module = b.build(_layer_norm(b, x, axes=(1,), affine=False))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-layer-norm}")
    assert "graph.layer_norm" not in _ops(module)


def test_layer_norm_shift_of_the_whole_shape_stays_outside():
    """A shift that does not broadcast to the normalised dims is not LayerNorm's bias (the
    differential tests of the tile level found it absorbed, making an invalid op)."""
    b = GraphBuilder()
    x = b.input("x", [2, 4])
    n = _layer_norm(b, x, affine=False)
    module = b.build(b.op("add", n, b.constant(RNG.standard_normal([2, 4]).astype(np.float32))))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-layer-norm},dce")
    module.verify()
    assert _ops(module)["graph.add"] >= 1


def test_layer_norm_with_an_intermediate_used_elsewhere_is_kept():
    b = GraphBuilder()
    x = b.input("x", [2, 8])
    ax = b.constant(np.array([-1], np.int64))
    mean = b.op("reduce_mean", x, ax)
    d = b.op("sub", x, mean)
    var = b.op("reduce_mean", b.op("mul", d, d), ax)
    n = b.op("div", d, b.op("sqrt", b.op("add", var, b.constant(_f32(1e-5)))))
    module = b.build(n, var)  # the variance is also an output
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-layer-norm}")
    assert "graph.layer_norm" not in _ops(module)


@pytest.mark.parametrize("form", ["div", "reciprocal", "reciprocal-no-eps"])
def test_rms_norm(form: str):
    """The division and reciprocal forms; with no ``+ eps`` (Helium's export) eps is 0."""
    b = GraphBuilder()
    x = b.input("x", [4, 8])
    ms = b.op("reduce_mean", b.op("pow", x, b.constant(_f32(2.0))), b.constant(np.array([-1])))
    eps = form != "reciprocal-no-eps"
    root = b.op("sqrt", b.op("add", ms, b.constant(_f32(1e-6))) if eps else ms)
    n = b.op("div", x, root) if form == "div" else b.op("mul", x, b.op("reciprocal", root))
    module = b.build(b.op("mul", n, b.constant(RNG.standard_normal(8).astype(np.float32))))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-rms-norm},dce")
    assert _ops(module)["graph.rms_norm"] == 1 and _ops(module)["graph.reduce_mean"] == 0
    (rms,) = [op for op in module.walk() if op.name == "graph.rms_norm"]
    assert rms.attr("epsilon") == pytest.approx(1e-6 if eps else 0.0)


@pytest.mark.parametrize("order", ["pytorch", "paddle"])
def test_gelu_erf(order: str):
    b = GraphBuilder()
    x = b.input("x", [3, 16])
    erf = b.op("erf", b.op("div", x, b.constant(_f32(sqrt(2.0)))))
    one_plus = b.op("add", erf, b.constant(_f32(1.0)))
    if order == "pytorch":  # (x * (1 + erf)) * 0.5
        y = b.op("mul", b.op("mul", x, one_plus), b.constant(_f32(0.5)))
    else:  # (x * 0.5) * (1 + erf)
        y = b.op("mul", b.op("mul", x, b.constant(_f32(0.5))), one_plus)
    module = b.build(y)
    run_pipeline_checked(module, "algebraic-simplify,dce")
    assert _ops(module)["graph.gelu"] == 1 and _ops(module)["graph.erf"] == 0
    (gelu,) = [op for op in module.walk() if op.name == "graph.gelu"]
    assert gelu.attr("approximate") == "none"


def test_gelu_tanh_is_its_own_form():
    b = GraphBuilder()
    x = b.input("x", [3, 16])
    cube = b.op("mul", b.op("pow", x, b.constant(_f32(3.0))), b.constant(_f32(0.044715)))
    inner = b.op("mul", b.op("add", x, cube), b.constant(_f32(sqrt(2.0 / pi))))
    one_plus = b.op("add", b.op("tanh", inner), b.constant(_f32(1.0)))
    module = b.build(b.op("mul", b.op("mul", x, one_plus), b.constant(_f32(0.5))))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-gelu-tanh},dce")
    (gelu,) = [op for op in module.walk() if op.name == "graph.gelu"]
    assert gelu.attr("approximate") == "tanh"


def _factored_gelu_tanh(b: GraphBuilder, x, form: str, c: float = 0.044715):  # noqa: ANN001, ANN202
    """tanh's argument factored: ``sqrt(2/pi) * x * (1 + c * x^2)``."""
    k, k_c = b.constant(_f32(sqrt(2.0 / pi))), b.constant(_f32(c))
    if form == "bloom":  # x * 0.5 * (1 + tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
        poly = b.op("add", b.op("mul", b.op("mul", x, k_c), x), b.constant(_f32(1.0)))
        inner = b.op("mul", b.op("mul", x, k), poly)
    elif form == "fast":  # HF FastGELU: tanh(x * 0.7978845608 * (1 + 0.044715 * x * x))
        poly = b.op("add", b.constant(_f32(1.0)), b.op("mul", k_c, b.op("mul", x, x)))
        inner = b.op("mul", b.op("mul", x, k), poly)
    else:  # the cube as a product: sqrt(2/pi) * (x + 0.044715 * x * x * x)
        cube = b.op("mul", b.op("mul", b.op("mul", x, x), x), k_c)
        inner = b.op("mul", k, b.op("add", x, cube))
    one_plus = b.op("add", b.constant(_f32(1.0)), b.op("tanh", inner))
    return b.op("mul", b.op("mul", x, b.constant(_f32(0.5))), one_plus)


@pytest.mark.parametrize("form", ["bloom", "fast", "cube_product"])
def test_gelu_tanh_factored_forms(form: str):
    """Bloom's and HF FastGELU's spelling (tanh's argument factored through x) and a cube
    written as a product are the same GELU; the numbers are checked at the graph level."""
    b = GraphBuilder()
    x = b.input("x", [3, 16])
    module = b.build(_factored_gelu_tanh(b, x, form))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-gelu-tanh},dce")
    assert _ops(module) == Counter(
        {"builtin.module": 1, "func.func": 1, "graph.gelu": 1, "func.return": 1}
    )


def test_gelu_tanh_factored_with_a_wrong_coefficient_is_kept():
    b = GraphBuilder()
    x = b.input("x", [3, 16])
    module = b.build(_factored_gelu_tanh(b, x, "bloom", c=0.05))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-gelu-tanh},dce")
    assert "graph.gelu" not in _ops(module) and _ops(module)["graph.tanh"] == 1


def test_gelu_with_a_wrong_constant_is_not_recomposed():
    b = GraphBuilder()
    x = b.input("x", [3, 16])
    erf = b.op("erf", b.op("div", x, b.constant(_f32(1.5))))
    one_plus = b.op("add", erf, b.constant(_f32(1.0)))
    module = b.build(b.op("mul", b.op("mul", x, one_plus), b.constant(_f32(0.5))))
    run_pipeline_checked(module, "algebraic-simplify{only=recompose-gelu-erf}")
    assert "graph.gelu" not in _ops(module)


@pytest.mark.parametrize("shifted", [True, False])
def test_softmax(shifted: bool):
    b = GraphBuilder()
    x = b.input("x", [3, 10])
    ax = b.constant(np.array([1], np.int64))
    z = b.op("sub", x, b.op("reduce_max", x, ax)) if shifted else x
    e = b.op("exp", z)
    module = b.build(b.op("div", e, b.op("reduce_sum", e, ax)))
    rule = "recompose-softmax" if shifted else "recompose-softmax-unshifted fast-math=true"
    run_pipeline_checked(module, f"algebraic-simplify{{only={rule}}},dce")
    assert _ops(module)["graph.softmax"] == 1 and _ops(module)["graph.exp"] == 0


def test_unshifted_softmax_needs_fast_math():
    b = GraphBuilder()
    x = b.input("x", [3, 10])
    e = b.op("exp", x)
    module = b.build(b.op("div", e, b.op("reduce_sum", e, b.constant(np.array([1])))))
    run_pipeline_checked(module, "algebraic-simplify")
    assert "graph.softmax" not in _ops(module)
