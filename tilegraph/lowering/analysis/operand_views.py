"""Matmul operands and results that are strided *views* of a row-major tensor in GM.

A chain of reshapes and transposes that only re-indexes a row-major tensor needs no kernel
of its own when its consumer can address the tensor with strides: attention's head split
``X[B,S,H·D] -> reshape [B,S,H,D] -> transpose(0,2,1,3) -> [B,H,S,D]`` is
``A[b,h,s,d] = X[b, s, h·D + d]`` (strides ``(S·H·D, D, H·D, 1)``), which the matmul's
GM -> L1 DMA (``tile.nd2nz``) reads row by row, ``D`` elements per burst, at a row stride
of ``H·D``; the head merge after ``attention · V`` is the same view of the merged result,
which ``fixpipe`` writes row by row. GE and Ascend C matmuls read and write such operands
in place.

This module is the one place that decides what such a view is, for both sides:

* ``fuse-ops`` puts the chain's ops into the matmul's group (the prologue of an operand,
  or the tail of the result's epilogue) only when :func:`operand_view` /
  :func:`result_view` find a view there (:func:`view_ops_of`);
* the matmul strategy (``tiling/matmul_views.py``) turns the same view into a
  ``tile.strided_view`` of the kernel's GM argument that its DMAs address.

A view is a :class:`StridedView`: the shape the matmul sees and the element strides of
each of its dims over the source's row-major buffer (offset 0). Only views whose matrix
(the last two dims) is contiguous along one axis qualify: the row-contiguous one is read
as is, the column-contiguous one (K's extra transpose in ``Q · Kᵀ``) as the transposed
operand (held as ``(N, K)``). Every tensor on the chain must be static and row-major
(ND storage or storage = origin format), and each op of the chain must feed only the next.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph.data_movement import ExpandOp, SplitOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.shape_ops import (
    FlattenOp,
    ReshapeOp,
    SqueezeOp,
    TransposeOp,
    UnsqueezeOp,
)
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format

VIEW_OPS = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp)
"""The graph ops a view chain is made of: each only relabels the dims of its input."""

OPERAND_VIEW_OPS = (*VIEW_OPS, SplitOp, ExpandOp)
"""An operand's chain may also start with a split: each output is an offset view of the
input (GPT-2's c_attn output ``[B, S, 3N]`` split into Q, K, V at column offsets 0, N,
2N, row stride 3N); and it may expand a batch dim (LLaMA's grouped K / V heads repeated
for the query heads: :attr:`StridedView.groups`)."""


@dataclass(frozen=True)
class StridedView:
    """``shape`` over a row-major buffer: element ``i`` is at ``sum(i[d] // groups[d] *
    strides[d])`` (``groups`` empty: every factor 1)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    """Elements of the buffer before the view's first element (a split's later parts)."""
    groups: tuple[int, ...] = ()
    """Per dim, how many consecutive indices read the same stored index (grouped heads:
    LLaMA's repeated K / V, ``h -> h // n_rep``; a broadcast dim's group is its size).
    A strided memref cannot say it, so the kernel reads the :meth:`stored` view and
    divides its index by the group (:func:`~tilegraph.lowering.conversion.tiling.
    matmul_views.lead_offsets`)."""

    @staticmethod
    def row_major(shape: Sequence[int]) -> StridedView:
        strides, step = [], 1
        for d in reversed(shape):
            strides.append(step)
            step *= d
        return StridedView(tuple(shape), tuple(reversed(strides)))

    def group(self, axis: int) -> int:
        """Dim ``axis``'s group factor (1: every index its own element)."""
        return self.groups[axis] if self.groups else 1

    def _with(
        self, shape: Sequence[int], strides: Sequence[int], groups: Sequence[int]
    ) -> StridedView:
        grouped = tuple(groups) if any(g != 1 for g in groups) else ()
        return StridedView(tuple(shape), tuple(strides), self.offset, grouped)

    def transpose(self, perm: Sequence[int]) -> StridedView:
        shape, strides = tuple(self.shape[p] for p in perm), tuple(self.strides[p] for p in perm)
        return self._with(shape, strides, [self.group(p) for p in perm])

    def part(self, axis: int, start: int, size: int, step: int = 1) -> StridedView | None:
        """Elements ``start, start + step, ...`` (``size`` of them) of dim ``axis`` (one
        output of a split; a forward slice when ``step`` is not 1)."""
        if self.group(axis) != 1 or step < 1:
            return None
        shape = (*self.shape[:axis], size, *self.shape[axis + 1 :])
        strides = (*self.strides[:axis], self.strides[axis] * step, *self.strides[axis + 1 :])
        return StridedView(shape, strides, self.offset + start * self.strides[axis], self.groups)

    def swap_last(self) -> StridedView:
        """The view with its last two dims exchanged (a matrix read transposed)."""
        perm = [*range(len(self.shape) - 2), len(self.shape) - 1, len(self.shape) - 2]
        return self.transpose(perm)

    def stored(self) -> StridedView:
        """The elements the view reads, without repeats: each grouped dim cut to
        ``size // group`` (the view a ``tile.strided_view`` can type)."""
        shape = tuple(d // self.group(i) for i, d in enumerate(self.shape))
        return StridedView(shape, self.strides, self.offset)

    def expand(self, new_shape: Sequence[int]) -> StridedView | None:
        """ONNX Expand of a view to ``new_shape`` (the same rank): each size-1 dim that
        grows reads its one element ``size`` times (its group is its size)."""
        if len(new_shape) != len(self.shape):
            return None
        groups = [self.group(i) for i in range(len(self.shape))]
        for i, (old, new) in enumerate(zip(self.shape, new_shape, strict=True)):
            if old != new:
                if old != 1:
                    return None
                groups[i] = new
        return self._with(new_shape, self.strides, groups)

    def reshape(self, new_shape: Sequence[int]) -> StridedView | None:
        """The same elements as ``new_shape`` without moving them, or None when the
        reshape would need a copy (it merges dims that are not contiguous in the view).
        A dim of size 1 takes the stride row-major order would give it (any stride
        addresses its one element; this one keeps contiguity visible). Broadcast dims
        merged after the dims they repeat (``[kv, n_rep] -> kv·n_rep``: Hugging Face's
        ``repeat_kv``) make the merged dim grouped; a grouped dim is never split."""
        if prod(new_shape) != prod(self.shape):
            return None
        old = [
            (d, s, self.group(i))
            for i, (d, s) in enumerate(zip(self.shape, self.strides, strict=True))
            if d != 1
        ]
        new = [i for i, d in enumerate(new_shape) if d != 1]
        strides = [0] * len(new_shape)
        groups = [1] * len(new_shape)
        oi = ni = 0
        while oi < len(old) and ni < len(new):
            old_size, new_size = old[oi][0], new_shape[new[ni]]
            oj, nj = oi + 1, ni + 1
            while old_size != new_size:
                if new_size < old_size:
                    new_size *= new_shape[new[nj]]
                    nj += 1
                else:
                    old_size *= old[oj][0]
                    oj += 1
            run, repeat = old[oi:oj], 1
            while len(run) > 1 and run[-1][2] == run[-1][0]:  # a broadcast dim repeats
                repeat *= run[-1][0]
                run = run[:-1]
            if len(run) == 1:
                repeat *= run[0][2]
            elif any(g != 1 for _, _, g in run):
                return None  # a grouped dim merged with others
            if repeat != 1 and nj - ni != 1:
                return None  # the repeated dims would be split again
            if any(run[k][1] != run[k + 1][1] * run[k + 1][0] for k in range(len(run) - 1)):
                return None  # the old dims of this group are not one contiguous run
            step = run[-1][1]
            groups[new[ni]] = repeat
            for k in reversed(range(ni, nj)):
                strides[new[k]] = step
                step *= new_shape[new[k]]
            oi, ni = oj, nj
        for i in reversed(range(len(new_shape))):
            if new_shape[i] == 1:
                strides[i] = strides[i + 1] * new_shape[i + 1] if i + 1 < len(new_shape) else 1
        return self._with([int(d) for d in new_shape], strides, groups)

    def extent(self) -> int:
        """Elements of the source the view spans (the last one addressed, plus one)."""
        stored = self.stored()
        last = sum((d - 1) * s for d, s in zip(stored.shape, stored.strides, strict=True))
        return 1 + self.offset + last


@dataclass(frozen=True)
class ViewChain:
    """A matmul operand or result that is a view of ``base`` (a row-major GM tensor)."""

    base: SSAValue
    """The tensor in GM: a read operand's source, or the written result's final value."""
    ops: tuple[Operation, ...]
    """The view ops, in program order."""
    view: StridedView
    """The matrix value (the operand as the matmul reads it / its result) over ``base``."""

    @property
    def transposed(self) -> bool:
        """The matrix is contiguous along its rows' dim, not its columns (read as ``(N,
        K)`` for B, ``(K, M)`` for A): its last dim's stride is not 1."""
        return self.view.strides[-1] != 1


def static_row_major(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    if not isinstance(t, TensorType):
        return None
    row_major = t.storage_format == t.origin_format or t.storage_format == Format.ND
    try:
        shape = tuple(int(d) for d in t.origin_shape)
    except TypeError:  # a symbolic dim: sizes known only when a Session binds them
        return None
    if not row_major or any(d < 0 for d in shape):
        return None
    return shape


def split_part(view: StridedView, split: SplitOp, result: SSAValue) -> StridedView | None:
    """``view`` (the split's input) cut to the part ``result`` is: its offset along the
    split axis is the sizes of the outputs before it."""
    axis = split.attr("axis")
    axis = 0 if axis is None else int(axis)  # type: ignore[arg-type]
    axis = axis + len(view.shape) if axis < 0 else axis
    start = 0
    for r in split.results:
        shape = static_row_major(r)
        if shape is None or len(shape) != len(view.shape):
            return None
        if r is result:
            return view.part(axis, start, shape[axis])
        start += shape[axis]
    return None


def view_step(
    view: StridedView, op: Operation, forward: bool, result: SSAValue | None = None
) -> StridedView | None:
    """``view`` through ``op`` (forward: the op's input -> its ``result``; else back)."""
    if isinstance(op, SplitOp):
        return split_part(view, op, result) if forward and result is not None else None
    if isinstance(op, TransposeOp):
        perm = [int(p) for p in op.attr("perm")] if op.attr("perm") is not None else None
        rank = len(view.shape)
        perm = perm if perm is not None else list(range(rank))[::-1]
        if not forward:
            perm = sorted(range(rank), key=perm.__getitem__)  # the inverse permutation
        return view.transpose(perm)
    if isinstance(op, ExpandOp):
        target = static_row_major(op.results[0]) if forward else None
        return None if target is None else view.expand(target)
    target = static_row_major((result or op.results[0]) if forward else op.operands[0])
    return None if target is None else view.reshape(target)


def _matrix(view: StridedView) -> bool:
    """A matrix (with batch dims) contiguous along one of its two axes; only its batch
    dims may be grouped (repeated)."""
    if len(view.shape) < 2 or view.group(-1) != 1 or view.group(-2) != 1:
        return False
    return 1 in (view.strides[-1], view.strides[-2])


def sole_user(value: SSAValue) -> Operation | None:
    users = {use.operation for use in value.uses}
    return users.pop() if len(users) == 1 else None


def matmul_reading(value: SSAValue) -> tuple[Operation, SSAValue] | None:
    """(the matmul, the chain's last value) when ``value`` reaches a matrix operand of a
    matmul through view ops (each the sole user of the last; an expand too, as
    :func:`operand_view` reads it: Phi-3's repeat of V's heads) and the operand's
    ND -> FRACTAL_NZ conversion, if any; else None."""
    user = sole_user(value)
    while isinstance(user, (*VIEW_OPS, ExpandOp)):
        value = user.results[0]
        user = sole_user(value)
    operand = value
    if isinstance(user, TransDataOp):
        t = user.output.type
        if not isinstance(t, TensorType) or t.storage_format != Format.FRACTAL_NZ:
            return None
        operand, user = user.output, sole_user(user.output)
    if user is None or all(operand is not v for v in matrix_operands(user)):
        return None
    return user, value


def _one_reader(split: SplitOp) -> bool:
    """Every used output of ``split`` is a view operand of one and the same matmul (the
    split then belongs to that matmul's chains; else it stays a kernel of its own)."""
    readers = [matmul_reading(r) for r in split.results if r.uses]
    return all(r is not None for r in readers) and len({r[0] for r in readers if r}) == 1


def operand_view(value: SSAValue, shared_split: bool = False) -> ViewChain | None:
    """``value`` (a matmul operand before its ND -> FRACTAL_NZ conversion, if any) as a
    view of the row-major tensor a chain of view ops starts from; None without such a
    chain or when it is no matrix view (module docstring). A split on the chain adds its
    output's offset; the chain goes through it only when all its used outputs are operands
    of the same matmul (``shared_split``: whichever matmuls read them)."""
    ops: list[Operation] = []
    values: list[SSAValue] = []
    current = value
    while True:
        owner = current.owner
        if not isinstance(owner, OPERAND_VIEW_OPS) or static_row_major(current) is None:
            break
        if isinstance(owner, SplitOp) and not (shared_split or _one_reader(owner)):
            break
        if ops and sole_user(current) is not ops[0]:
            break
        if not ops and sole_user(current) is None:
            break
        ops.insert(0, owner)
        values.insert(0, current)
        current = owner.operands[0]
    view = walked_view(current, ops, values)
    if view is None or not _matrix(view):
        return None
    return ViewChain(current, tuple(ops), view)


Step = Callable[[StridedView, Operation, SSAValue], "StridedView | None"]


def walked_view(
    base: SSAValue,
    ops: Sequence[Operation],
    values: Sequence[SSAValue],
    step: Step = lambda view, op, result: view_step(view, op, True, result),
) -> StridedView | None:
    """The view of the row-major tensor ``base`` that view ops ``ops`` (in program order,
    ``values[i]`` the result of ``ops[i]`` on the chain) make, through ``step`` per op;
    None without ops, for a non-static ``base`` or when a step is no view."""
    shape = static_row_major(base)
    if not ops or shape is None:
        return None
    view: StridedView | None = StridedView.row_major(shape)
    for op, result in zip(ops, values, strict=True):
        view = step(view, op, result) if view is not None else None
    return view


def result_view(value: SSAValue) -> ViewChain | None:
    """``value`` (a matmul result after its FRACTAL_NZ -> ND conversion, if any) as a view
    of the tensor a chain of view ops ending in one op's result makes of it; None without
    such a chain or when the result's rows are not contiguous there."""
    ops: list[Operation] = []
    current = value
    while static_row_major(current) is not None:
        user = sole_user(current)
        if not isinstance(user, VIEW_OPS) or static_row_major(user.results[0]) is None:
            break
        ops.append(user)
        current = user.results[0]
    if not ops:
        return None
    shape = static_row_major(current)
    assert shape is not None
    view: StridedView | None = StridedView.row_major(shape)
    for op in reversed(ops):
        view = view_step(view, op, False) if view is not None else None
    if view is None or len(view.shape) < 2 or view.strides[-1] != 1:
        return None
    return ViewChain(current, tuple(ops), view)


def nd_input(value: SSAValue) -> SSAValue:
    """The ND value a conversion into FRACTAL_NZ feeding a cube op converts (the matmul's
    DMA does it on the way in), else ``value``."""
    owner = value.owner
    if isinstance(owner, TransDataOp) and sole_user(value) is not None:
        t = owner.output.type
        if isinstance(t, TensorType) and t.storage_format == Format.FRACTAL_NZ:
            return owner.input
    return value


def nd_output(value: SSAValue) -> SSAValue:
    """The ND result of a FRACTAL_NZ -> ND conversion of a cube result (fixpipe does it on
    the way out), else ``value``."""
    user = sole_user(value)
    if isinstance(user, TransDataOp):
        t = user.input.type
        if isinstance(t, TensorType) and t.storage_format == Format.FRACTAL_NZ:
            return user.output
    return value


def matrix_operands(op: Operation) -> tuple[SSAValue, ...]:
    """The matrix operands of a matmul / gemm (a gemm's C is added, not multiplied)."""
    if isinstance(op, MatMulOp):
        return (op.lhs, op.rhs)
    if isinstance(op, GemmOp):
        return (op.a, op.b)
    return ()


def view_ops_of(anchor: Operation) -> dict[Operation, str]:
    """The view ops a matmul / gemm ``anchor`` reads or writes through: each maps to
    "prologue" (it feeds an operand) or "epilogue" (it re-indexes the result)."""
    found: dict[Operation, str] = {}
    for operand in matrix_operands(anchor):
        chain = operand_view(nd_input(operand))
        if chain is not None:
            found.update(dict.fromkeys(chain.ops, "prologue"))
    if matrix_operands(anchor):
        chain = result_view(nd_output(anchor.results[0]))
        if chain is not None:
            found.update(dict.fromkeys(chain.ops, "epilogue"))
    return found
