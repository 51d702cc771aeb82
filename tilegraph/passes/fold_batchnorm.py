"""``fold-batchnorm``: fold per-channel affine maps into the weights of the op before them.

A per-output-channel affine epilogue ``y -> y * a + c`` is

* a BatchNorm at inference: ``a = scale / sqrt(var + epsilon)``, ``c = B - mean * a``;
* an Add / Sub / Mul / Div by a constant that varies at most along the output channels
  (Inductor's binary folding; also the Caffe2-style ``Unsqueeze -> Mul -> Add`` affine that
  DenseNet and Inception v2 exports put after a BatchNorm, once ``constant-fold`` has folded
  the Unsqueeze of the constant).

When it follows a Conv, ConvTranspose, Gemm or MatMul with constant weights whose result
has no other user, it moves into them::

    Conv:          W'[o] = W[o] * a[o]            b' = b * a + c
    ConvTranspose: W[ci, j] scaled by a[o(ci, j)]  (the weight is [Cin, Cout/group, ...])
    Gemm:          B' scaled along N               C' = beta * C * a + c, beta' = 1
    MatMul (2-D A, constant 2-D B): Gemm(A, B * a, c)

A per-input-channel scale before a convolution, ``Conv(x * s)`` with ``s`` shaped
``[Cin, 1, ...]``, moves into W along its input-channel axis (rule 34); through a ReLU only
when every ``s`` is positive (``relu(x) * s == relu(x * s)`` needs ``s > 0``).

A BatchNorm that follows nothing foldable becomes one multiply-add with per-channel
constants (``batchnorm-to-affine``).

New weights are computed in float64 and cast back to the weight's dtype. Each fold is
probed: the old and new ops run on a seeded random input (batch 1, spatial dims cut to
4, one matrix row) through their reference kernels, and the largest absolute difference
is kept in the statistics as ``max-abs-change`` (the rounding the fold introduced).
Statistics: ``rule.<name>`` per fold, ``max-abs-change``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
)
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, SubOp
from tilegraph.dialects.graph.elementwise import ReluOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.nn import BatchNormOp, Conv2dOp, ConvOp, ConvTransposeOp
from tilegraph.dialects.graph.provenance import Located
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import (
    constant_array,
    evaluate,
    in_origin_view,
    new_constant,
    only_user,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, declare_rule
from tilegraph.passes.statistics import PassStatistics, start_pass

PASS_NAME = "fold-batchnorm"
PROBE_LIMIT = 1 << 20
"""Probe inputs with more elements than this are not run (max-abs-change stays unmeasured)."""
PROBE_EXTENT = 4
"""Spatial dims (and matrix rows) of the probe input are cut to this many positions."""

_CONVS = (Conv2dOp, ConvOp, ConvTransposeOp)
_PRODUCERS = (*_CONVS, GemmOp, MatMulOp)

RULES = {
    "conv-batchnorm": declare_rule(
        RuleInfo(
            32,
            "conv-batchnorm",
            "BatchNorm(Conv(x, W, b))",
            "Conv(x, W * a, (b - mean) * a + B), a = scale / sqrt(var + eps)",
            "the conv result has no other user; weights and BN parameters constant; "
            "computed in float64",
            "OO ORT TVM GE OM PT",
            implemented_by=PASS_NAME,
        )
    ),
    "conv-binary": declare_rule(
        RuleInfo(
            33,
            "conv-binary",
            "Conv/ConvTranspose/Gemm/MatMul then Add/Sub/Mul/Div by a per-output-channel constant",
            "weights and bias absorb it",
            "the constant varies only along output channels and does not broadcast the "
            "result; the producer has no other user",
            "ORT TVM(FoldScaleAxis) PT",
            implemented_by=PASS_NAME,
        )
    ),
    "conv-input-scale": declare_rule(
        RuleInfo(
            34,
            "conv-input-scale",
            "Conv(x * s) or Conv(relu(x * s)), s per input channel",
            "Conv(x) or Conv(relu(x)) with W scaled along its input channels",
            "through ReLU only when every s > 0; groups respected; the scale has no other user",
            "TVM(FoldScaleAxis forward)",
            implemented_by=PASS_NAME,
        )
    ),
    "gemm-batchnorm": declare_rule(
        RuleInfo(
            37,
            "gemm-batchnorm",
            "BatchNorm / scalar Mul / Div after MatMul or Gemm",
            "B scaled along N, bias adjusted (MatMul with 2-D A becomes Gemm)",
            "constant B; the product has no other user; float64 fold",
            "ORT PT",
            implemented_by=PASS_NAME,
        )
    ),
    "batchnorm-to-affine": declare_rule(
        RuleInfo(
            None,
            "batchnorm-to-affine",
            "BatchNorm(x) with nothing to fold into",
            "x * a + c with per-channel constants",
            "constant parameters; the rounding of (x - mean) * a differs from x * a + c",
            "ORT TVM(SimplifyInference) OM",
            implemented_by=PASS_NAME,
        )
    ),
}


@dataclass(frozen=True)
class Affine:
    """``y -> y * scale + shift`` per output channel (float64 vectors, or length 1)."""

    scale: np.ndarray
    shift: np.ndarray


def _float(value: SSAValue) -> np.ndarray | None:
    data = constant_array(value)
    return None if data is None or data.dtype.kind != "f" else data.astype(np.float64)


def _channel_vector(data: np.ndarray, out: TensorType, axis: int) -> np.ndarray | None:
    """``data`` as a vector over ``out``'s channel ``axis`` if it varies along no other axis
    and broadcasting it leaves ``out``'s shape alone; length 1 for a scalar."""
    if data.ndim > out.rank:
        return None
    shape = (1,) * (out.rank - data.ndim) + data.shape
    axis %= out.rank
    if any(n != 1 for i, n in enumerate(shape) if i != axis):
        return None
    channels = out.origin_shape[axis]
    if shape[axis] not in (1, channels):
        return None
    return data.reshape(-1)


def batchnorm_affine(bn: BatchNormOp) -> Affine | None:
    params = [_float(v) for v in (bn.scale, bn.bias, bn.mean, bn.var)]
    if any(p is None for p in params):
        return None
    gamma, beta, mean, var = (p for p in params if p is not None)
    scale = gamma / np.sqrt(var + float(bn.attr("epsilon")))
    return Affine(scale, beta - mean * scale)


def binary_affine(op: Operation, producer: SSAValue, axis: int) -> Affine | None:
    """The affine map of ``op`` applied to ``producer`` by a per-channel constant."""
    if not isinstance(op, AddOp | SubOp | MulOp | DivOp) or op.results[0].type != producer.type:
        return None
    lhs_is_producer = op.lhs == producer
    other = op.rhs if lhs_is_producer else op.lhs
    data = _float(other)
    out = producer.type
    if data is None or not isinstance(out, TensorType) or op.lhs == op.rhs:
        return None
    k = _channel_vector(data, out, axis)
    if k is None:
        return None
    one, zero = np.ones_like(k), np.zeros_like(k)
    if isinstance(op, AddOp):
        return Affine(one, k)
    if isinstance(op, MulOp):
        return Affine(k, zero)
    if isinstance(op, SubOp):
        return Affine(one, -k) if lhs_is_producer else Affine(-one, k)
    if lhs_is_producer and np.all(k != 0):
        return Affine(1.0 / k, zero)
    return None


def _broadcast(v: np.ndarray, n: int) -> np.ndarray:
    return np.broadcast_to(v, (n,)).astype(np.float64)


def _cast_like(array: np.ndarray, like: SSAValue) -> np.ndarray:
    reference = constant_array(like)
    assert reference is not None
    return array.astype(reference.dtype)


def _insert_constant(
    rewriter: PatternRewriter,
    anchor: Operation,
    array: np.ndarray,
    like: SSAValue | None = None,
    name: str | None = None,
) -> SSAValue:
    """A new constant before ``anchor``; with ``like``'s formats and a name derived from
    its name when given."""
    t = None if like is None else like.type
    constant = new_constant(array, t if isinstance(t, TensorType) else None)
    base = name or (like.name_hint if like is not None else None)
    if base:
        constant.output.name_hint = f"{base}_folded"
    rewriter.insert(constant, InsertPoint.before(anchor))
    return constant.output


def fold_into_producer(
    producer: Operation, affine: Affine, rewriter: PatternRewriter, anchor: Operation
) -> Operation | None:
    """Build the producer with ``affine`` folded in (inserted before ``anchor``); None
    when the producer's weights are not constant."""
    out = producer.results[0].type
    assert isinstance(out, TensorType)
    if isinstance(producer, _CONVS):
        return _fold_conv(producer, affine, rewriter, anchor)
    if isinstance(producer, GemmOp):
        return _fold_gemm(producer, affine, rewriter, anchor)
    if isinstance(producer, MatMulOp):
        return _fold_matmul(producer, affine, rewriter, anchor)
    return None


def _fold_conv(conv: Any, affine: Affine, rewriter: PatternRewriter, anchor: Operation):
    w = _float(conv.weight)
    bias = None if conv.bias is None else _float(conv.bias)
    if w is None or (conv.bias is not None and bias is None):
        return None
    group = int(conv.attr("group"))
    if isinstance(conv, ConvTransposeOp):
        cin, per_group = w.shape[0], w.shape[1]
        cout = per_group * group
        a = _broadcast(affine.scale, cout)
        # Output channel of weight slice [ci, j]: its group's first channel plus j.
        channel = (np.arange(cin)[:, None] // (cin // group)) * per_group + np.arange(per_group)
        w2 = w * a[channel].reshape(cin, per_group, *([1] * (w.ndim - 2)))
    else:
        cout = w.shape[0]
        a = _broadcast(affine.scale, cout)
        w2 = w * a.reshape(cout, *([1] * (w.ndim - 1)))
    shift = _broadcast(affine.shift, cout)
    new_w = _insert_constant(rewriter, anchor, _cast_like(w2, conv.weight), conv.weight)
    new_b: SSAValue | None = None
    if bias is not None or np.any(shift != 0):
        b2 = (np.zeros(cout) if bias is None else bias) * a + shift
        b_name = conv.bias.name_hint if conv.bias is not None else f"{conv.output.name_hint}_bias"
        new_b = _insert_constant(rewriter, anchor, _cast_like(b2, conv.weight), name=b_name)
    new = type(conv).make(conv.input, new_w, new_b, result_types=[conv.output.type], **_attrs(conv))
    rewriter.insert(new, _before(anchor))
    return new


def _fold_gemm(gemm: GemmOp, affine: Affine, rewriter: PatternRewriter, anchor: Operation):
    b = _float(gemm.b)
    c = None if gemm.c is None else _float(gemm.c)
    if b is None or (gemm.c is not None and c is None):
        return None
    trans_b = bool(gemm.attr("transB"))
    n = b.shape[0] if trans_b else b.shape[1]
    a = _broadcast(affine.scale, n)
    b2 = b * (a[:, None] if trans_b else a[None, :])
    shift = _broadcast(affine.shift, n)
    beta = float(gemm.attr("beta"))
    c2 = shift if c is None else beta * c * a + shift
    new_b = _insert_constant(rewriter, anchor, _cast_like(b2, gemm.b), gemm.b)
    new_c = _insert_constant(rewriter, anchor, _cast_like(c2, gemm.b), gemm.c or gemm.b)
    attrs = {**_attrs(gemm), "beta": 1.0}
    new = GemmOp.make(gemm.a, new_b, new_c, result_types=[gemm.output.type], **attrs)
    rewriter.insert(new, _before(anchor))
    return new


def _fold_matmul(mm: MatMulOp, affine: Affine, rewriter: PatternRewriter, anchor: Operation):
    b = _float(mm.rhs)
    lhs = mm.lhs.type
    if b is None or b.ndim != 2 or not isinstance(lhs, TensorType) or lhs.rank != 2:
        return None
    n = b.shape[1]
    b2 = b * _broadcast(affine.scale, n)[None, :]
    new_b = _insert_constant(rewriter, anchor, _cast_like(b2, mm.rhs), mm.rhs)
    shift = _cast_like(_broadcast(affine.shift, n), mm.rhs)
    new_c = _insert_constant(rewriter, anchor, shift, name=f"{mm.rhs.name_hint}_bias")
    new = GemmOp.make(mm.lhs, new_b, new_c, result_types=[mm.results[0].type])
    rewriter.insert(new, _before(anchor))
    return new


def _attrs(op: Operation) -> dict[str, Any]:
    return {k: v for k, v in op.properties.items() if k != "operandSegmentSizes"}


def _before(anchor: Operation) -> InsertPoint:
    return InsertPoint.before(anchor)


def _output_axis(producer: Operation) -> int:
    return 1 if isinstance(producer, _CONVS) else -1


# ---- probing ------------------------------------------------------------------------------


def _run_chain(ops: Sequence[Operation], inputs: dict[SSAValue, np.ndarray]) -> np.ndarray:
    """Evaluate ``ops`` in order (constants read from the IR); the last op's result."""
    env = dict(inputs)
    result = np.zeros(())
    for op in ops:
        arrays = []
        for v in op.operands:
            data = env.get(v)
            arrays.append(constant_array(v) if data is None else data)
        (result,) = evaluate(op, arrays)
        env[op.results[0]] = result
    return result


def probe_change(
    data: SSAValue, old: Sequence[Operation], new: Sequence[Operation], stats: PassStatistics
) -> None:
    """Record the largest |old - new| on a seeded random input of ``data``."""
    t = data.type
    if not isinstance(t, TensorType) or not t.is_static:
        return
    rng = np.random.default_rng(0)
    # Batch 1 and at most PROBE_EXTENT along the other leading/spatial dims: the fold does
    # not depend on them, and probing the full tensor would cost a second model run.
    shape = [int(d) for d in t.origin_shape]
    if len(shape) >= 3:  # N, C, spatial...: keep the channels whole
        probe = [1, shape[1], *(min(d, PROBE_EXTENT) for d in shape[2:])]
    else:  # a matrix: one row
        probe = [1, *shape[1:]] if shape else []
    if int(np.prod(probe)) > PROBE_LIMIT:
        return
    x = rng.standard_normal(probe).astype(t.dtype.numpy)
    try:
        before = _run_chain(old, {data: x})
        after = _run_chain(new, {data: x})
    except Exception:
        return
    stats.maximum("max-abs-change", float(np.max(np.abs(before - after), initial=0.0)))


# ---- patterns -----------------------------------------------------------------------------


class _FoldRule(SimplifyRule):
    """A fold pattern; it counts its folds itself (one pattern serves several rules)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, self.ROOTS):
            self.rewrite(op, rewriter)

    def count(self, rule: str) -> None:
        if self.stats is not None:
            self.stats.add(f"rule.{rule}")

    def probe(self, data: SSAValue, old: Sequence[Operation], new: Sequence[Operation]) -> None:
        if self.stats is not None:
            probe_change(data, old, new, self.stats)


def _foldable_producer(value: SSAValue) -> Operation | None:
    producer = value.owner
    if not isinstance(producer, _PRODUCERS) or only_user(value) is None:
        return None
    return producer if in_origin_view(producer) else None


def _weights_constant(producer: Operation) -> bool:
    """Whether the producer's weights (and bias) are constants a fold can rewrite."""
    if isinstance(producer, _CONVS):
        return _float(producer.weight) is not None and (
            producer.bias is None or _float(producer.bias) is not None
        )
    if isinstance(producer, GemmOp):
        return _float(producer.b) is not None and (
            producer.c is None or _float(producer.c) is not None
        )
    if isinstance(producer, MatMulOp):
        rhs, lhs = _float(producer.rhs), producer.lhs.type
        return rhs is not None and rhs.ndim == 2 and isinstance(lhs, TensorType) and lhs.rank == 2
    return False


def _bn_folds_into_producer(bn: BatchNormOp) -> bool:
    """Whether :class:`FoldEpilogue` takes this BatchNorm into the op before it."""
    producer = _foldable_producer(bn.input)
    if producer is None or not _weights_constant(producer) or batchnorm_affine(bn) is None:
        return False
    out = producer.results[0].type
    return isinstance(out, TensorType) and (_output_axis(producer) == 1 or out.rank == 2)


class FoldEpilogue(_FoldRule):
    """Rules 32, 33, 37: a per-output-channel affine epilogue moves into its producer."""

    INFO = RULES["conv-batchnorm"]
    ROOTS = (BatchNormOp, AddOp, SubOp, MulOp, DivOp)

    def rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not in_origin_view(op):
            return
        for value in op.operands[:1] if isinstance(op, BatchNormOp) else op.operands:
            producer = _foldable_producer(value)
            if producer is None:
                continue
            axis = _output_axis(producer)
            if isinstance(op, BatchNormOp):
                out = producer.results[0].type
                if not isinstance(out, TensorType) or (axis == -1 and out.rank != 2):
                    return
                affine = batchnorm_affine(op)
            else:
                affine = binary_affine(op, value, axis)
            if affine is None:
                continue
            new = fold_into_producer(producer, affine, rewriter, op)
            if new is None:
                continue
            self.probe(producer.operands[0], [producer, op], [new])
            rewriter.replace(op, [], new.results)
            rewriter.erase(producer)
            if isinstance(producer, GemmOp | MatMulOp):
                self.count("gemm-batchnorm")
            else:
                self.count("conv-batchnorm" if isinstance(op, BatchNormOp) else "conv-binary")
            return


class FoldInputScale(_FoldRule):
    """Rule 34: ``Conv(x * s)`` / ``Conv(relu(x * s))`` (s > 0) with s per input channel."""

    INFO = RULES["conv-input-scale"]
    ROOTS = (Conv2dOp, ConvOp)

    def rewrite(self, conv: Any, rewriter: PatternRewriter) -> None:
        w = _float(conv.weight)
        if w is None or not in_origin_view(conv):
            return
        chain: list[Operation] = []
        value: SSAValue = conv.input
        relu = value.owner
        if isinstance(relu, ReluOp) and only_user(value) is not None:
            chain.append(relu)
            value = relu.input
        mul = value.owner
        if not isinstance(mul, MulOp) or only_user(value) is None or not in_origin_view(mul):
            return
        found = self._scale(mul)
        if found is None:
            return
        x, s = found
        if chain and not np.all(s > 0):
            return
        group = int(conv.attr("group"))
        cin_per_group = w.shape[1]
        s_full = _broadcast(s, cin_per_group * group)
        # Input channel ci of group g is W's column ci - g * cin_per_group for its outputs.
        cout = w.shape[0]
        rows = (np.arange(cout) // (cout // group))[:, None] * cin_per_group
        s_w = s_full[rows + np.arange(cin_per_group)]
        w2 = w * s_w.reshape(cout, cin_per_group, *([1] * (w.ndim - 2)))
        new_w = _insert_constant(rewriter, conv, _cast_like(w2, conv.weight), conv.weight)
        new_input = x
        new_ops: list[Operation] = []
        if chain:
            new_relu = ReluOp.make(x)
            rewriter.insert(new_relu, _before(conv))
            new_ops.append(new_relu)
            new_input = new_relu.results[0]
        slots = [new_input, new_w, *conv.operand_slots()[2:]]
        new = type(conv).make(*slots, result_types=[conv.output.type], **_attrs(conv))
        rewriter.insert(new, _before(conv))
        self.probe(x, [mul, *chain, conv], [*new_ops, new])
        rewriter.replace(conv, [], new.results)
        for op in chain:
            rewriter.erase(op)
        rewriter.erase(mul)
        self.count("conv-input-scale")

    @staticmethod
    def _scale(mul: MulOp) -> tuple[SSAValue, np.ndarray] | None:
        for x, other in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
            data = _float(other)
            out = x.type
            if data is None or not isinstance(out, TensorType) or mul.output.type != out:
                continue
            s = _channel_vector(data, out, 1)
            if s is not None:
                return x, s
        return None


class BatchNormToAffine(_FoldRule):
    """A lone BatchNorm becomes ``x * a + c`` with ``[C, 1, ...]`` constants."""

    INFO = RULES["batchnorm-to-affine"]
    ROOTS = (BatchNormOp,)

    def rewrite(self, bn: BatchNormOp, rewriter: PatternRewriter) -> None:
        if not in_origin_view(bn) or _bn_folds_into_producer(bn):
            return
        affine = batchnorm_affine(bn)
        t = bn.input.type
        if affine is None or not isinstance(t, TensorType):
            return
        dtype = t.dtype.numpy
        shape = (-1, *([1] * (t.rank - 2)))
        scale = new_constant(affine.scale.astype(dtype).reshape(shape))
        shift = new_constant(affine.shift.astype(dtype).reshape(shape))
        if bn.output.name_hint:
            scale.output.name_hint = f"{bn.output.name_hint}_scale"
            shift.output.name_hint = f"{bn.output.name_hint}_shift"
        mul = MulOp.make(bn.input, scale)
        add = AddOp.make(mul, shift, result_types=[bn.output.type])
        if mul.results[0].type != bn.input.type:
            return
        rewriter.insert([scale, shift, mul, add], _before(bn))
        self.probe(bn.input, [bn], [mul, add])
        add.results[0].name_hint = bn.output.name_hint
        rewriter.replace(bn, [], add.results)
        self.count("batchnorm-to-affine")


@register_pass
@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Fold BatchNorm and per-channel constant arithmetic into conv / matmul weights."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        patterns = [FoldEpilogue(stats), FoldInputScale(stats), BatchNormToAffine(stats)]
        walker = PatternRewriteWalker(Located(GreedyRewritePatternApplier(list(patterns))))
        walker.rewrite_module(op)
