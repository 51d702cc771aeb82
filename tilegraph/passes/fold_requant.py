"""``fold-requant``: an int8 convolution or matmul whose result is quantised again
requantises in fixpipe, under ``int8``.

After ``fold-qdq`` a QDQ model's convolution is ``graph.quant_conv2d`` (int32 sum
dequantised to float in fixpipe) followed by the next layer's QuantizeLinear, a vector
program: on 910B a mix kernel (AIC + AIV through a GM workspace), and the activation
between the layers travels in float. This pass makes such a pair one
``graph.requant_conv2d`` (:mod:`~tilegraph.dialects.graph.requantized_cube`): fixpipe
takes the int32 sum straight to int8 with the multiplier ``x_scale · w_scale / y_scale``
per output channel and the QuantizeLinear's zero point (Ascend C's ``REQ8`` / ``VREQ8``),
and the int8 NC1HWC0 result (C0 = 32) is what the next int8 convolution reads. A
``graph.quant_matmul`` and its QuantizeLinear become ``graph.requant_matmul`` the same way
(per-column multipliers, ``VREQ8``; a per-tensor one is repeated per column): its int8 ND
result is what the next int8 matmul loads into its 16 x 32 fractals.

Matched: a ``graph.quant_conv2d`` whose groups allow it (:func:`int8_groups_fill_slices`),
or a ``graph.quant_matmul``, whose result's only user is a
QuantizeLinear to int8 (a float32 scale and an int8 zero point, one each, constant), and
either

* only ``graph.quant_conv2d`` / ``graph.quant_matmul`` ops read that QuantizeLinear's
  int8 result, directly or through int8 reshapes / transposes / concats (the int8 tensor
  is written for cube ops anyway), or
* its only user is ``DequantizeLinear → Relu → QuantizeLinear`` with the same scale and
  zero point throughout (onnxruntime's symmetric QDQ ResNet-50 keeps its ReLUs so), whose
  last QuantizeLinear is such an operand: ``Q(relu(DQ(q))) = max(q, zero point)`` exactly,
  which is fixpipe's ReLU before the requantisation (``relu = 1``); a Clip of constant
  bounds counts as that ReLU when its lower bound is 0 and its upper bound lies at or above
  the largest value the QuantizeLinear represents (``scale · (127 - zero point)``).

A quantised result that vector ops read (the residual add of a ResNet block, alone or
beside the next convolution) keeps its dequantisation: there the QuantizeLinear, the add
and what follows fuse into the convolution's epilogue, and an int8 result would only add
kernels (dequantising ones and a TransData from C0 = 32 to 16).

Semantics: one rounding, ``saturate(round_half_even(float32(acc) · m) + zero point)`` with
``m = float32(x_scale · w_scale) / y_scale`` in float32, as onnxruntime's QLinearConv
requantises; the graph it replaces rounds twice (the dequantised float, then the
quotient), so outputs on a rounding boundary may move by one quantisation step — toward
onnxruntime's. Under any other precision the pass changes nothing.

Statistics: ``requantised-convs``, ``requantised-matmuls``, ``requantised-relus`` (of
those, the ones that took a ReLU / Clip with them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.dead_code_elimination import dce

from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.graph.elementwise import ClipOp, ReluOp
from tilegraph.dialects.graph.quantize import DequantizeLinearOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantized_cube import QuantConv2dOp, QuantMatMulOp
from tilegraph.dialects.graph.requantized_cube import RequantConv2dOp, RequantMatMulOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.formats.shape import group_plan
from tilegraph.passes.fold_qdq import INT8_PRECISION
from tilegraph.passes.qdq_activations import MOVES, Int8Quantization, int8_quantization
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import constant_array
from tilegraph.passes.statistics import start_pass
from tilegraph.target import target_of

INT8_MAX = 127
INT8_C0 = 32
"""The C0 of int8 NC1HWC0 data and FRACTAL_Z weights."""


def _live_users(value: SSAValue) -> list[Operation]:
    """The users of ``value`` (the pass erases dead ops first: what fold-qdq left of the
    float patterns it replaced would otherwise look like readers)."""
    return [use.operation for use in value.uses]


def _only_user(value: SSAValue) -> Operation | None:
    users = _live_users(value)
    return users[0] if len(users) == 1 else None


def _int8_quantize(op: Operation | None) -> Int8Quantization | None:
    """``op``'s quantisation when it is a plain per-tensor QuantizeLinear to int8."""
    if not isinstance(op, QuantizeLinearOp):
        return None
    out = op.y.type
    if not isinstance(out, TensorType) or out.dtype != DType.int8:
        return None
    if any(int(op.attr(name)) for name in ("output_dtype", "block_size", "precision")):
        return None
    return int8_quantization(op.y_scale, op.y_zero_point)


def _feeds_cube(value: SSAValue) -> bool:
    """Only int8 cube ops read ``value`` (as an operand), directly or through int8 moves
    (reshapes / transposes: an attention block's head split before Q·Kᵀ) and int8 concats
    (``fold-qdq``'s lengthened K of an asymmetric matmul of two activations): a tensor that
    vector ops read too (a residual add next to the next convolution) keeps its
    dequantisation, which fuses into the convolution's epilogue, where an int8 result would
    need its own dequantising kernels and TransData (C0 = 32 -> 16)."""
    users = _live_users(value)
    return bool(users) and all(
        isinstance(u, QuantConv2dOp | QuantMatMulOp)
        or (isinstance(u, MOVES) and u.operands[0] is value and _feeds_cube(u.results[0]))
        or (isinstance(u, ConcatOp) and _feeds_cube(u.results[0]))
        for u in users
    )


def _is_relu(op: Operation, q: Int8Quantization) -> bool:
    """``op`` is a ReLU, or a Clip whose bounds are that ReLU within ``q``'s range."""
    if isinstance(op, ReluOp):
        return True
    if not isinstance(op, ClipOp) or op.min is None:
        return False
    low = constant_array(op.min)
    high = None if op.max is None else constant_array(op.max)
    if low is None or low.size != 1 or float(low.reshape(())) != 0.0:
        return False
    top = float(q.scale) * (INT8_MAX - q.zero)
    return op.max is None or (
        high is not None and high.size == 1 and float(high.reshape(())) >= top
    )


def _relu_chain(q: QuantizeLinearOp, want: Int8Quantization) -> QuantizeLinearOp | None:
    """The QuantizeLinear ending ``DequantizeLinear → Relu → QuantizeLinear`` after ``q``
    with ``want``'s scale and zero point throughout, each op the only user of the last."""
    dq = _only_user(q.y)
    if not isinstance(dq, DequantizeLinearOp) or dq.x is not q.y:
        return None
    if int(dq.attr("block_size")) or int(dq.attr("output_dtype")):
        return None
    if int8_quantization(dq.x_scale, dq.x_zero_point) != want:
        return None
    relu = _only_user(dq.y)
    if relu is None or not _is_relu(relu, want) or relu.operands[0] is not dq.y:
        return None
    last = _only_user(relu.results[0])
    if _int8_quantize(last) != want:
        return None
    assert isinstance(last, QuantizeLinearOp)
    return last


def int8_groups_fill_slices(conv: QuantConv2dOp) -> bool:
    """Whether each group block of ``conv`` writes whole C1 slices of an int8 output
    (C0 = 32): the cube runs a grouped convolution in blocks of ``e`` groups
    (FRACTAL_Z's groups rule with int8's C0 = 32, :func:`~tilegraph.formats.shape.
    group_plan`), and fixpipe writes a block's ``e · M / groups`` output channels starting
    at the block's first one; an int8 tile of two accumulator fractals must start on a
    C1 slice, so with more than one block that width must be a multiple of 32. Holds for
    one group, for depthwise convolutions (``e`` = 32 groups of one channel), and for
    ResNeXt-style groups of 32 · k channels; not for, e.g., 64 -> 32 channels in 4
    groups (blocks of 16 output channels)."""
    groups = int(conv.attr("group"))
    if groups == 1:
        return True
    weight = conv.weight.type
    if not isinstance(weight, TensorType):
        return False
    m, per_group_in = weight.origin_shape[:2]
    if not isinstance(m, int) or not isinstance(per_group_in, int):
        return False
    plan = group_plan(m, per_group_in, INT8_C0, groups)
    if plan is None or plan.enlarge is None or plan.blocks is None:
        return False
    return plan.blocks == 1 or plan.n_per_group * plan.enlarge % INT8_C0 == 0


def _requantise(
    conv: QuantConv2dOp | QuantMatMulOp,
) -> tuple[Operation, QuantizeLinearOp, bool] | None:
    """The ``graph.requant_conv2d`` / ``graph.requant_matmul`` for ``conv`` and the
    QuantizeLinear whose result it replaces (and whether it took a ReLU), its multiplier
    constant inserted before ``conv``; None when ``conv`` does not match."""
    if isinstance(conv, QuantConv2dOp) and not int8_groups_fill_slices(conv):
        return None
    q = _only_user(conv.output)
    want = _int8_quantize(q)
    if want is None or not isinstance(q, QuantizeLinearOp) or q.x is not conv.output:
        return None
    relu = False
    if not _feeds_cube(q.y):
        last = _relu_chain(q, want)
        if last is None or not _feeds_cube(last.y):
            return None
        q, relu = last, True
    scale = constant_array(conv.scale)
    if scale is None or scale.dtype != np.float32:
        return None
    multiplier = ConstantOp((scale / want.scale).astype(np.float32))
    properties = dict(conv.properties)
    properties["zero_point"] = IntegerAttr(want.zero, i64)
    if relu:
        properties["relu"] = IntegerAttr(1, i64)
    operands = [*conv.operands[:3], multiplier.output, *conv.operands[4:]]
    cls = RequantConv2dOp if isinstance(conv, QuantConv2dOp) else RequantMatMulOp
    (result,) = cls.infer_shapes(operands, properties)
    replaced = q.y.type
    # the QuantizeLinear's result carries no origin format; the convolution's is NCHW
    if not isinstance(replaced, TensorType) or replaced.origin_shape != result.origin_shape:
        return None
    Rewriter.insert_op(multiplier, InsertPoint.before(conv))
    op = cls.create(operands=operands, result_types=[result], properties=properties)
    return op, q, relu


@register_pass
@dataclass(frozen=True)
class FoldRequantPass(ModulePass):
    """Under the ``int8`` precision, a ``graph.quant_conv2d`` (grouped ones when their
    group blocks fill int8 C1 slices) or ``graph.quant_matmul`` and the QuantizeLinear
    (with a ReLU the quantisation makes exact) whose result only int8 cube ops read become
    one ``graph.requant_conv2d`` / ``graph.requant_matmul``: fixpipe writes int8."""

    name = "fold-requant"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        if target_of(op).precision != INT8_PRECISION:
            return
        dce(op)
        for conv in list(op.walk()):
            if not isinstance(conv, QuantConv2dOp | QuantMatMulOp):
                continue
            found = _requantise(conv)
            if found is None:
                continue
            requant, q, relu = found
            requant.results[0].name_hint = q.y.name_hint
            Rewriter.insert_op(requant, InsertPoint.before(conv))
            q.y.replace_all_uses_with(requant.results[0])
            stats.add(
                "requantised-convs" if isinstance(conv, QuantConv2dOp) else "requantised-matmuls"
            )
            if relu:
                stats.add("requantised-relus")
