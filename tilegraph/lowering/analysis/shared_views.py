"""Two more places where a matmul addresses GM through a view instead of a kernel's copy.

Both extend :mod:`.operand_views` (whose chains they reuse), for ``fuse-ops`` and the
matmul strategy alike:

* **A split feeding several matmuls** (GPT-2's c_attn output ``[B, S, 3N]`` split into Q, K
  and V): each output of a static split is an offset view of its input — Q's
  ``[b, s, n]`` is ``X[b, s, n]``, K's ``X[b, s, N + n]``, V's ``X[b, s, 2N + n]``, row
  stride ``3N``. When every output reaches a matmul operand through a view chain
  (:func:`split_view_users`), ``fuse-ops`` gives each such matmul its own copy of the split
  (it computes nothing: its outputs are addresses), so the split joins each matmul's
  prologue and needs no kernel with three outputs. A rotary embedding reads its x's rows
  through such a view too (:mod:`.rotary_views`): Phi-3's q and k, cut out of its
  fused ``[q | k | v]`` projection, are rotated before Q·Kᵀ, so their reader is the
  rotary op (its kernel takes the split's copy with the head split), V's the matmul.
* **A split read by one elementwise kernel** (Phi-3's fused ``[gate | up]`` projection
  split before ``SiLU(gate) · up``, a GLU's halves): each output is an offset view of the
  split's input (:func:`split_parts`), so the kernel reads its operands' tiles from the
  input at their offsets and the split runs no kernel of its own.
* **Leading-axes reshapes after a matmul** (GPT-2's addmm ``[B·S, N] -> [B, S, N]``): a
  reshape of a row-major result that keeps the last dim only merges or splits the rows, so
  element ``i`` of the reshaped tensor is element ``i`` of the result; a matmul's 2-D
  output tile is then also a tile of the reshaped tensor (:func:`rows_result`). The
  elementwise ops after it (residual add, GELU) run in the matmul's epilogue on its
  own tiles, their other operands re-indexed to the result's rows (:func:`rows_operand`:
  a ``[B, S, N]`` residual read as ``[B·S, N]``, a ``[N]`` bias as ``[1, N]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.ir import Operation

from tilegraph.dialects.graph.data_movement import ExpandOp, SplitOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.lowering.analysis.operand_views import (
    VIEW_OPS,
    StridedView,
    ViewChain,
    matmul_reading,
    matrix_operands,
    nd_output,
    operand_view,
    result_view,
    sole_user,
    split_part,
    static_row_major,
)
from tilegraph.lowering.analysis.rotary_views import rotary_view


def split_view_users(split: SplitOp) -> list[Operation] | None:
    """Per output of ``split``, the op that reads it as a view with the split on the
    chain: a matmul (a view operand, :func:`~.operand_views.operand_view`'s chain) or a
    rotary op (its x, :func:`~.rotary_views.rotary_view`'s chain); None when an output goes
    elsewhere."""
    users: list[Operation] = []
    for result in split.results:
        value, user = result, sole_user(result)
        while isinstance(user, (*VIEW_OPS, ExpandOp)):  # to the end of the output's chain
            value, user = user.results[0], sole_user(user.results[0])
        if isinstance(user, ApplyRotaryOp) and user.x is value:
            chain = rotary_view(value)
        else:
            reader = matmul_reading(value)
            user, chain = (
                (None, None) if reader is None else (reader[0], operand_view(reader[1], True))
            )
        if user is None or chain is None or split not in chain.ops:
            return None
        users.append(user)
    return users


def split_parts(split: SplitOp) -> list[StridedView] | None:
    """Each output of ``split`` as a strided view of its input (the outputs before it
    along the split axis skipped: its offset); None unless the input and every output
    are static and row-major."""
    shape = static_row_major(split.operands[0])
    if shape is None:
        return None
    whole = StridedView.row_major(shape)
    parts = [split_part(whole, split, result) for result in split.results]
    return None if any(p is None for p in parts) else [p for p in parts if p is not None]


def rows_result(anchor: Operation) -> ViewChain | None:
    """The view chain after ``anchor``'s result when it only merges / splits the leading
    axes of a row-major result (same elements in the same order, same last dim), else
    None. Its ``base`` is the reshaped value the elementwise ops read."""
    if not matrix_operands(anchor):
        return None
    chain = result_view(nd_output(anchor.results[0]))
    if chain is None:
        return None
    shape = static_row_major(chain.base)
    if shape is None or not shape or shape[-1] != chain.view.shape[-1]:
        return None
    return chain if chain.view == StridedView.row_major(chain.view.shape) else None


def rows_operand(
    shape: Sequence[int], rows_shape: Sequence[int], result_shape: Sequence[int]
) -> StridedView | None:
    """An operand of ``shape`` that broadcasts to ``rows_shape`` (the reshaped result), as
    a view shaped for the matmul's result ``result_shape``: the same last dim (or 1), and
    the leading dims either exactly the reshaped result's (read as its rows) or all 1
    (broadcast to every row); None for a partial broadcast over the rows (no strided view
    addresses ``[S, N]`` repeated over ``B``)."""
    if len(shape) > len(rows_shape) or not rows_shape:
        return None
    padded = [1] * (len(rows_shape) - len(shape)) + [int(d) for d in shape]
    if padded[-1] not in (1, rows_shape[-1]):
        return None
    if list(padded[:-1]) == list(rows_shape[:-1]):
        lead = list(result_shape[:-1])
    elif all(d == 1 for d in padded[:-1]):
        lead = [1] * (len(result_shape) - 1)
    else:
        return None
    view = StridedView.row_major([*lead, padded[-1]])
    return view if prod(view.shape) == prod(padded) else None


def rows_epilogue_fits(chain: ViewChain, ops: Sequence[Operation]) -> bool:
    """Whether elementwise ``ops`` after the leading-axes reshape ``chain`` run on the
    matmul's tiles: each result has the reshaped shape (nothing broadcasts the result to a
    larger tensor), and each operand from outside the ops is static, row-major and
    re-indexable to the rows (:func:`rows_operand`)."""
    rows = chain.view.shape
    reshaped = static_row_major(chain.base)
    if reshaped is None:
        return False
    produced = {r for op in ops for r in op.results} | {chain.base}
    for op in ops:
        if any(static_row_major(r) != reshaped for r in op.results):
            return False
        for v in op.operands:
            if v in produced:
                continue
            shape = static_row_major(v)
            if shape is None or rows_operand(shape, reshaped, rows) is None:
                return False
    return True
