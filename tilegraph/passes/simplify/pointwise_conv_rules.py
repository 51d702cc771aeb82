"""A pointwise (1x1) 1-D convolution -> a channels-last (group-batched) MatMul.

A Conv1d of kernel size 1, stride 1 and no padding over ``X [N, C, L]`` mixes channels at
each position and nothing else: ``Y[n, m, l] = sum_c W[m, c] X[n, c, l] + B[m]``, a matrix
product. SqueezeBERT's projections are such convolutions, grouped (``groups = g``): group
``j`` maps input channels ``j·C/g ..`` to output channels ``j·M/g ..``, so the product is
batched over the groups — the reference's own form of the convolution
(:meth:`~tilegraph.dialects.graph.nn.ConvOpBase.reference`).

:class:`PointwiseConv1dAsMatMul` writes it channels-last, as a Linear layer over
``Xᵀ [N, L, C]``: the groups split like attention heads (``[N, L, g, C/g] -> [N, g, L,
C/g]``), times ``Wᵀ [g, C/g, M/g]``, plus the bias, the groups merged back (``[N, L, M]``)
and one transpose to ``[N, M, L]``. SqueezeBERT transposes its ``[N, L, C]`` hidden states
into every convolution and out of every LayerNorm, so each transpose meets another one and
cancels (``transpose-compose``, with ``elementwise-before-movement`` moving the residual
adds and GELUs past them), and the group split / merge are the views the matmuls read and
write in place. As a convolution it ran as the cube's conv2d (``conv-forms``: an unsqueeze
to ``[N, C, 1, L]``, a conv2d on NC1HWC0 data, a squeeze back) with TransData and transpose
kernels around it. :class:`TransposedProduct` takes the one read that wants the
channels-first result (SqueezeBERT's key, ``[N, H, D, L]``).

Only where the transposes meet others: the data transposed in from channels-last (maybe
through a head merge's reshape), or the result only transposed back (a Conformer
convolution module's last pointwise convolution), or one position (L = 1: the transposes
are views). A channels-first network's 1x1 convolution between wider ones (DAC, silero)
stays a convolution: with ``conv-forms`` its data stays NC1HWC0 from one convolution to
the next, where the product's transposes would be kernels of their own (DAC at [3, 1,
832]: 258 -> 140 kernels with the Snake moves of ``conv-forms``).

Exact up to the order of the float sums (the matmul sums the same products).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.nn import ConvOp
from tilegraph.dialects.graph.shape_ops import ReshapeOp, TransposeOp
from tilegraph.dialects.graph.windows import known, window
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_array,
    in_origin_view,
    is_float,
    made_by,
    new_constant,
    only_user,
    replace_if_typed,
    reshaped,
    tensor_type_of,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


def _pointwise(op: ConvOp, x: TensorType, w: TensorType) -> bool:
    """``op`` is a 1-D convolution whose window is one position: kernel 1, stride 1, no
    padding (dilation is then moot)."""
    if x.rank != 3 or w.rank != 3 or w.origin_shape[2] != 1:
        return False
    try:
        (axis,) = window(ConvOp, op.properties, [x.origin_shape[2]], [1])
    except ValueError:
        return False
    return axis.stride == 1 and axis.begin == 0 and axis.end == 0


def _as(value: SSAValue, shape: list[int], perm: list[int], ops: list[Operation]) -> SSAValue:
    """``value`` reshaped to ``shape`` (Reshape's ``0`` / ``-1`` allowed), then transposed
    by ``perm`` (empty: not): a constant becomes a new constant (nothing left for
    constant-fold), any other value the Reshape and Transpose ops (appended to ``ops``)."""
    array = constant_array(value)
    if array is not None and all(d > 0 for d in shape):
        array = array.reshape(shape)
        const = new_constant(np.ascontiguousarray(array.transpose(perm) if perm else array))
        ops.append(const)
        return const.output
    value = reshaped(value, shape, ops)
    return _transposed(value, perm, ops) if perm else value


def _transposed(value: SSAValue, perm: list[int], ops: list[Operation]) -> SSAValue:
    op = TransposeOp.make(value, perm=perm)
    ops.append(op)
    return op.results[0]


def _transposed_in(value: SSAValue) -> bool:
    """``value`` is a Transpose's result, maybe reshaped (SqueezeBERT's head merge
    ``Reshape(Transpose(heads))``): channels-last data brought channels-first for the
    convolution, so the product's own transposes meet that one and cancel. A
    channels-first network (DAC's, silero's 1x1 convolutions between wider ones) keeps the
    convolution: its transposes would stay kernels of their own."""
    owner = value.owner
    while isinstance(owner, ReshapeOp):
        owner = owner.data.owner
    return isinstance(owner, TransposeOp)


def _transposed_out(op: ConvOp) -> bool:
    """Every reader of ``op``'s result transposes it (a Conformer convolution module's
    last pointwise convolution, back to ``[N, L, C]``): the product's transpose back
    meets those."""
    uses = list(op.results[0].uses)
    return bool(uses) and all(isinstance(u.operation, TransposeOp) for u in uses)


@simplify_rule
class PointwiseConv1dAsMatMul(SimplifyRule):
    """``conv(X [N, C, L], W [M, C/g, 1], B)``, kernel 1, stride 1, no padding -> the
    channels-last product ``Xᵀ Wᵀ`` (module docstring) transposed back to ``[N, M, L]``."""

    INFO = RuleInfo(
        None,
        "pointwise-conv1d-as-matmul",
        "Conv(X [N, C, L], W [M, C/g, 1], B), kernel 1, stride 1, no padding, group g",
        "Transpose(MatMul(Transpose(X) [N, L, C] (its groups split as heads [N, g, L, C/g]), "
        "Wᵀ [C, M] | [g, C/g, M/g]) + B, groups merged) -> [N, M, L]",
        "float; X a Transpose's result, maybe reshaped, or the result only transposed "
        "(channels-last data on one side: the transposes cancel), or L = 1 (they are "
        "views); M and C static (the group split); sums in another order",
        "",
    )
    ROOTS = (ConvOp,)

    def rewrite(self, op: ConvOp, rewriter: PatternRewriter) -> None:
        x, w = tensor_type_of(op.input), tensor_type_of(op.weight)
        if x is None or w is None or not is_float(op.input) or not in_origin_view(op):
            return
        if not _pointwise(op, x, w):
            return
        one_position = x.origin_shape[2] == 1  # the transposes move a size-1 dim: views
        if not (one_position or _transposed_in(op.input) or _transposed_out(op)):
            return  # channels-first data: the transposes would not meet others and cancel
        m, cg = w.origin_shape[0], w.origin_shape[1]
        if not known(m) or not known(cg):
            return
        g = int(op.attr("group") or 1)
        m, cg = int(m), int(cg)
        ops: list[Operation] = []
        rows = _transposed(op.input, [0, 2, 1], ops)  # [N, L, C]
        if g == 1:
            weight = _as(op.weight, [m, cg], [1, 0], ops)
        else:  # the groups as heads: [N, L, g, C/g] -> [N, g, L, C/g]
            rows = _transposed(reshaped(rows, [0, 0, g, cg], ops), [0, 2, 1, 3], ops)
            weight = _as(op.weight, [g, m // g, cg], [0, 2, 1], ops)
        mm = MatMulOp.make(rows, weight)
        ops.append(mm)
        y: SSAValue = mm.results[0]
        if op.bias is not None:
            add = AddOp.make(y, _as(op.bias, [m] if g == 1 else [g, 1, m // g], [], ops))
            ops.append(add)
            y = add.results[0]
        if g != 1:  # the heads merged: [N, g, L, M/g] -> [N, L, M]
            y = reshaped(_transposed(y, [0, 2, 1, 3], ops), [0, 0, m], ops)
        _transposed(y, [0, 2, 1], ops)
        replace_if_typed(rewriter, op, ops)


@simplify_rule
class TransposedProduct(SimplifyRule):
    """``Transpose(MatMul(a, C), last two dims swapped)`` read by a matmul -> ``MatMul(Cᵀ,
    Transpose(a))``: a channels-last product read channels-first (SqueezeBERT's key ``[B,
    H, D, S]`` of :class:`PointwiseConv1dAsMatMul`) becomes the channels-first product.
    The transpose moves from the result (a kernel: a product is written by rows) to an
    operand (a view the matmul reads column by column; ``a``'s own transposes compose with
    it)."""

    INFO = RuleInfo(
        None,
        "transposed-product",
        "Transpose(MatMul(a, C constant) [+ bias constant], q) read by a matmul, q "
        "swapping the last two dims",
        "MatMul(Cᵀ, Transpose(a, q)) [+ biasᵀ]",
        "the product and its bias add have no other reader; both operands of rank 2 at "
        "least; exact (the same sums)",
        "",
    )
    ROOTS = (TransposeOp,)

    def rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        t = tensor_type_of(op.data)
        if t is None or t.rank < 2 or not in_origin_view(op):
            return
        if not isinstance(only_user(op.results[0]), MatMulOp):
            return  # read by a matmul: else the transpose may cancel where it goes
        swap = [*range(t.rank - 2), t.rank - 1, t.rank - 2]
        if list(op.attr("perm") or []) != swap:
            return
        product, bias = _biased(op.data)
        mm = made_by(product, MatMulOp) if product is not None else None
        if mm is None:
            return
        weight, lhs = constant_array(mm.rhs), tensor_type_of(mm.lhs)
        if weight is None or weight.ndim < 2 or lhs is None or lhs.rank < 2:
            return
        ops: list[Operation] = []
        flipped = new_constant(np.ascontiguousarray(np.swapaxes(weight, -1, -2)))
        ops.append(flipped)
        rows = _transposed(mm.lhs, [*range(lhs.rank - 2), lhs.rank - 1, lhs.rank - 2], ops)
        ops.append(MatMulOp.make(flipped, rows))
        if bias is not None:  # the bias transposed with the product
            bias = bias.reshape((1,) * (t.rank - bias.ndim) + bias.shape)
            shifted = new_constant(np.ascontiguousarray(np.swapaxes(bias, -1, -2)))
            ops += [shifted, AddOp.make(ops[-1], shifted)]
        replace_if_typed(rewriter, op, ops)


def _biased(value: SSAValue) -> tuple[SSAValue | None, np.ndarray | None]:
    """``(product, bias)`` for ``value = product + bias`` with a constant bias (an add
    nothing else reads), else ``(value, None)``."""
    add = made_by(value, AddOp)
    if add is None:
        return value, None
    for product, other in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        bias = constant_array(other)
        if bias is not None and isinstance(product.owner, MatMulOp):
            return product, bias
    return None, None
