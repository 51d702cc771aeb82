"""How a rotary embedding's kernel (``graph.apply_rotary``,
:mod:`tilegraph.lowering.conversion.tiling.rotary`) reads its x and writes its result
through the ops around it, for ``fuse-ops``' rotary claim
(:mod:`tilegraph.passes.fuse_rotary_views`) and the kernel alike.

* **x as a view** (:func:`rotary_input_view`): LLaMA's head split (reshape / transpose) is a
  strided view of the projection's result, read row by row; Phi-3's and Falcon's q and k
  are also cut out of a fused ``[q | k | v]`` projection by a split, whose output is an
  offset view (:mod:`.shared_views`), so the rotary's own copy of the split joins the view.
* **a scale as its tail** (:func:`rotary_tail`): Falcon and Phi-3 scale q and k by
  ``head_dim ** -0.25`` (no power of two) right after the rotation; the multiply by a
  one-element tensor is one more vector op on the result tile before it is stored (the
  same product of the same rotated value: exact). Reshapes that keep the row-major order
  between them (Phi-3's unsqueeze of K before its repeat) only rename the result's
  elements and join too.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.binary import DivOp, MulOp
from tilegraph.dialects.graph.data_movement import SplitOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.graph.shape_ops import FlattenOp, ReshapeOp, SqueezeOp, UnsqueezeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.lowering.analysis.operand_views import (
    ViewChain,
    operand_view,
    sole_user,
    static_row_major,
)

ROW_ORDER_VIEWS = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)
"""View ops that keep a row-major tensor's elements in order (only its shape changes)."""


def rotary_view(x: SSAValue, shared_split: bool = True) -> ViewChain | None:
    """x's view chain when a rotary kernel can read its rows through it: unit stride
    along the rotated last axis, no repeated (grouped) dim; ``shared_split``: a split on
    the chain counts whoever reads its other outputs (else the chain stops at it)."""
    chain = operand_view(x, shared_split=shared_split)
    if chain is None or chain.view.groups or chain.view.strides[-1] != 1:
        return None
    return chain


def rotary_input_view(x: SSAValue) -> ViewChain | None:
    """The view chain that makes a rotary op's ``x`` when its kernel reads x through it
    (:func:`rotary_view`). A split starts it only when its one output in use is this
    chain's (the rotary's own copy of the split, given by ``fuse-ops``: the split is
    then an offset into the rows, no kernel of its own); a split with other outputs in
    use ends it (the chain then reads the split's output)."""
    chain = rotary_view(x)
    if chain is None or any(
        isinstance(op, SplitOp) and sum(bool(r.uses) for r in op.results) != 1 for op in chain.ops
    ):
        return rotary_view(x, shared_split=False)
    return chain


def rotary_tail(
    rotary: ApplyRotaryOp, scale_source: Callable[[SSAValue], bool]
) -> tuple[Operation, ...]:
    """The ops after ``rotary`` its kernel runs on the result tile (module docstring):
    order-keeping reshapes, each the sole user of the last, then a multiply by (or a
    division by) a one-element tensor of the result's element type that ``scale_source``
    accepts (``fuse-ops``: a constant; the kernel: one of its inputs), shaped as its other
    operand (nothing broadcast). Empty without such a scale."""
    ops: list[Operation] = []
    value = rotary.results[0]
    user = sole_user(value)
    while isinstance(user, ROW_ORDER_VIEWS) and user.operands[0] is value:
        ops.append(user)
        value = user.results[0]
        user = sole_user(value)
    if not isinstance(user, MulOp | DivOp) or len(user.operands) != 2:
        return ()
    lhs, rhs = user.operands
    scale = rhs if lhs is value else lhs if isinstance(user, MulOp) else None
    if scale is None or scale is value or not scale_source(scale):
        return ()
    t, x = scale.type, value.type
    if not isinstance(t, TensorType) or not isinstance(x, TensorType) or t.num_elements() != 1:
        return ()
    shape = static_row_major(value)
    if t.element_type != x.element_type or shape is None:
        return ()
    return (*ops, user) if static_row_major(user.results[0]) == shape else ()
