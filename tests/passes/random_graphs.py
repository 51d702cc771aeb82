"""Random small graphs for differential testing of the optimisation passes (hypothesis).

:func:`graphs` draws a function over one input — an NCHW feature map or a matrix — built
from a menu of op *makers*. The makers are chosen so that every rewrite rule has inputs that
trigger it and inputs that must not: identity-like constants (0, -0.0, 1) next to ordinary
ones, per-channel and full-shape constants (broadcast or not), inverse transposes and
reshapes, cast chains that widen and that narrow, conv + BatchNorm with a second user or
without, Pad before conv and pools, MatMul + Add, Log(Softmax), reductions followed by
Unsqueeze, GELU / Softmax / LayerNorm decompositions. Values stay float32 at the graph boundary.

The graphs are made with :mod:`tilegraph.builder`: its op methods, with numpy data where an
op takes a constant operand (the builder makes the ``graph.constant``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from tilegraph.builder import GraphBuilder
from tilegraph.dialects.layout_type import TensorType

Draw = Callable[[st.SearchStrategy[Any]], Any]

SPECIAL = (0.0, -0.0, 1.0, 2.0, -1.0, 0.5)
f32 = np.float32


def ints(*values: int) -> np.ndarray:
    """An int64 operand (axes, shapes, pads, slice bounds)."""
    return np.array(values, np.int64)


def _shape(v: SSAValue) -> list[int]:
    t = v.type
    assert isinstance(t, TensorType)
    return [int(d) for d in t.origin_shape]  # type: ignore[arg-type]


def _format(v: SSAValue) -> str:
    t = v.type
    assert isinstance(t, TensorType)
    return str(t.origin_format)


@dataclass
class Ctx:
    draw: Draw
    b: GraphBuilder
    values: list[SSAValue]
    rng: np.random.Generator

    def pick(self, rank: int | None = None) -> SSAValue | None:
        candidates = [v for v in self.values if rank is None or len(_shape(v)) == rank]
        if not candidates:
            return None
        return candidates[self.draw(st.integers(0, len(candidates) - 1))]

    def const(self, shape: list[int], special: bool = True) -> SSAValue:
        """A constant: a splat of a special value, or random data."""
        if special and self.draw(st.booleans()):
            value = self.draw(st.sampled_from(SPECIAL))
            return self.b.constant(np.full(shape, value, np.float32))
        return self.b.constant(self.rng.uniform(0.5, 1.5, shape).astype(np.float32))

    def broadcast_shape(self, shape: list[int]) -> list[int]:
        """A shape that broadcasts to ``shape`` (scalar, per-channel, trailing, full)."""
        options = [[], shape, [1] * len(shape), shape[-1:]]
        if len(shape) == 4:
            options.append([shape[1], 1, 1])
        return self.draw(st.sampled_from(options))


Maker = Callable[[Ctx], SSAValue | None]

UNARY = ("relu", "sigmoid", "tanh", "abs", "neg", "floor", "ceil", "sign", "identity", "exp")


def unary(c: Ctx) -> SSAValue | None:
    x = c.pick()
    return None if x is None else c.b.op(c.draw(st.sampled_from(UNARY)), x)


def twice(c: Ctx) -> SSAValue | None:
    """f(f(x)): idempotent ops and involutions."""
    x = c.pick()
    if x is None:
        return None
    kind = c.draw(st.sampled_from(("relu", "floor", "abs", "sign", "neg", "ceil")))
    return c.b.op(kind, c.b.op(kind, x))


def binary_constant(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    k = c.const(c.broadcast_shape(_shape(x)))
    kind = c.draw(st.sampled_from(("add", "sub", "mul", "div")))
    return c.b.op(kind, k, x) if c.draw(st.booleans()) else c.b.op(kind, x, k)


def binary_values(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    same = [v for v in c.values if _shape(v) == _shape(x)]
    y = same[c.draw(st.integers(0, len(same) - 1))]
    kind = c.draw(st.sampled_from(("add", "sub", "mul", "max", "min")))
    return c.b.op(kind, x, y)


def constant_chain(c: Ctx) -> SSAValue | None:
    """(x op c1) op c2, and (x + c1) * c2: reassociation and distribution material."""
    x = c.pick()
    if x is None:
        return None
    inner = c.draw(st.sampled_from(("add", "mul")))
    outer = c.draw(st.sampled_from(("add", "mul")))
    shape = _shape(x)
    y = c.b.op(inner, x, c.const(c.broadcast_shape(shape), special=False))
    return c.b.op(outer, y, c.const(c.broadcast_shape(shape), special=False))


def clip(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    lo = c.draw(st.sampled_from((-1.0, 0.0, -0.5, None)))
    hi = c.draw(st.sampled_from((1.0, 6.0, 0.5, None)))
    y = c.b.clip(x, *(None if v is None else f32(v) for v in (lo, hi)))
    if c.draw(st.booleans()):
        y = c.b.relu(y)
    if c.draw(st.booleans()):
        y = c.b.clip(y, f32(-0.25), f32(3.0))
    return y


def cast_chain(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    # ONNX dtype codes: 1 float32, 10 float16, 11 float64, 6 int32, 7 int64
    middle = c.draw(st.sampled_from((1, 10, 11, 6, 7)))
    return c.b.cast(c.b.cast(x, to=middle), to=1)


def transpose_pair(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    rank = len(_shape(x))
    perm = c.draw(st.permutations(list(range(rank))))
    y = c.b.transpose(x, perm=list(perm))
    if c.draw(st.booleans()):
        back = [int(i) for i in np.argsort(perm)]
        y = c.b.transpose(y, perm=back)
    return y


def reshape_chain(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    shape = _shape(x)
    flat = c.b.reshape(x, ints(-1))
    middle = c.draw(st.sampled_from(([1, -1], [int(np.prod(shape)), 1], shape[:1] + [-1])))
    y = c.b.reshape(flat, ints(*middle))
    return c.b.reshape(y, ints(*shape))


def squeeze_pair(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    axes = c.b.constant(ints(0))  # one constant, two users
    y = c.b.unsqueeze(x, axes)
    if c.draw(st.booleans()):
        y = c.b.squeeze(c.b.unsqueeze(y, ints(1)), ints(1))
    return c.b.squeeze(y, axes)


def reduce_unsqueeze(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    rank = len(_shape(x))
    axis = c.draw(st.integers(0, rank - 1))
    axes = c.b.constant(ints(axis))
    kind = c.draw(st.sampled_from(("reduce_mean", "reduce_max", "reduce_sum")))
    r = c.b.op(kind, x, axes, keepdims=0)
    return c.b.unsqueeze(r, axes)


def softmax_log(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    s = c.b.softmax(x, axis=-1)
    return c.b.log(s) if c.draw(st.booleans()) else s


def conv_bn(c: Ctx) -> SSAValue | None:
    x = c.pick(4)
    if x is None or _format(x) != "NCHW":
        return None
    channels = _shape(x)[1]
    k = c.draw(st.sampled_from((1, 3)))
    w = c.b.constant(c.rng.standard_normal([channels, channels, k, k]).astype(np.float32), "NCHW")
    bias = c.b.constant(c.rng.standard_normal(channels).astype(np.float32))
    with_bias = c.draw(st.booleans())
    pads = [k // 2] * 4
    y = c.b.conv2d(x, w, bias if with_bias else None, pads=pads)
    if c.draw(st.booleans()):
        params = [
            c.rng.uniform(0.5, 2.0, channels),
            c.rng.standard_normal(channels),
            c.rng.standard_normal(channels),
            c.rng.uniform(0.5, 2.0, channels),
        ]
        y = c.b.batch_norm(y, *(p.astype(np.float32) for p in params))
    return y


def pad_window(c: Ctx) -> SSAValue | None:
    """Pad (zero or -inf) before a conv or a pool."""
    x = c.pick(4)
    if x is None or _format(x) != "NCHW":
        return None
    n, ch, _, _ = _shape(x)
    fill = c.draw(st.sampled_from((0.0, -np.inf, 1.0)))
    p = c.b.pad(x, ints(0, 0, 1, 1, 0, 0, 1, 1), f32(fill))
    kind = c.draw(st.sampled_from(("conv", "max_pool", "avg_pool")))
    if kind == "conv":
        w = c.b.constant(c.rng.standard_normal([ch, ch, 3, 3]).astype(np.float32), "NCHW")
        return c.b.conv2d(p, w)
    include = c.draw(st.sampled_from((0, 1)))
    if kind == "avg_pool":
        return c.b.avg_pool(p, kernel_shape=[3, 3], count_include_pad=include)
    return c.b.max_pool(p, kernel_shape=[3, 3])


def matmul_add(c: Ctx) -> SSAValue | None:
    x = c.pick(2)
    if x is None:
        return None
    k = _shape(x)[1]
    w = c.b.constant(c.rng.standard_normal([k, k]).astype(np.float32))
    if c.draw(st.booleans()):
        w = c.b.transpose(w, perm=[1, 0])
    y = c.b.matmul(x, w)
    if c.draw(st.booleans()):
        y = c.b.add(y, c.const(c.draw(st.sampled_from(([k], [1, k], _shape(x))))))
    return y


def concat_slice(c: Ctx) -> SSAValue | None:
    x = c.pick()
    if x is None:
        return None
    rank = len(_shape(x))
    axis = c.draw(st.integers(0, rank - 1))
    both = c.b.concat(x, x, axis=axis)
    if c.draw(st.booleans()):
        both = c.b.concat(both, axis=axis)
    size = _shape(x)[axis]
    start = c.draw(st.sampled_from((0, size)))
    return c.b.slice(both, ints(start), ints(start + size), ints(axis))


def decomposed(c: Ctx) -> SSAValue | None:
    """GELU, Softmax or LayerNorm spelt out as exporters do (rule 40's material)."""
    x = c.pick()
    if x is None:
        return None
    b = c.b
    last = b.constant(ints(-1))
    kind = c.draw(st.sampled_from(("gelu", "softmax", "layer_norm")))
    if kind == "gelu":
        erf = b.erf(b.div(x, f32(np.sqrt(2.0))))
        return b.mul(b.mul(x, b.add(erf, f32(1.0))), f32(0.5))
    if kind == "softmax":
        e = b.exp(b.sub(x, b.reduce_max(x, last)))
        return b.div(e, b.reduce_sum(e, last))
    d = b.sub(x, b.reduce_mean(x, last))
    var = b.reduce_mean(b.mul(d, d), last)
    return b.div(d, b.sqrt(b.add(var, f32(1e-5))))


def dropout(c: Ctx) -> SSAValue | None:
    x = c.pick()
    return None if x is None else c.b.dropout(x)


MAKERS: tuple[Maker, ...] = (
    unary,
    twice,
    binary_constant,
    binary_values,
    constant_chain,
    clip,
    cast_chain,
    transpose_pair,
    reshape_chain,
    squeeze_pair,
    reduce_unsqueeze,
    softmax_log,
    conv_bn,
    pad_window,
    matmul_add,
    concat_slice,
    decomposed,
    dropout,
)


@st.composite
def graphs(draw: Draw, max_ops: int = 6) -> ModuleOp:
    """A random verified module (see the module docstring)."""
    seed = draw(st.integers(0, 2**31 - 1))
    b = GraphBuilder()
    if draw(st.booleans()):
        x = b.input("x", [1, draw(st.sampled_from((2, 3))), 5, 5], format="NCHW")
    else:
        x = b.input("x", [draw(st.sampled_from((2, 3))), 4])
    c = Ctx(draw, b, [x], np.random.default_rng(seed))
    for _ in range(draw(st.integers(1, max_ops))):
        made = draw(st.sampled_from(MAKERS))(c)
        if made is not None:
            c.values.append(made)
    outputs = [c.values[-1]]
    if len(c.values) > 2 and draw(st.booleans()):
        other = c.values[draw(st.integers(1, len(c.values) - 2))]
        outputs.append(other)
    return b.build(*outputs)
