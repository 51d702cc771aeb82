"""The attention pattern ``softmax(mask(scale(Q·Kᵀ)))·V`` in a graph, and whether the fused
flash-style kernel (:mod:`tilegraph.lowering.conversion.tiling.attention`) can run it.

Shared by ``fuse-ops`` (which claims the three groups of today's sequence — Q·Kᵀ with its
elementwise epilogue, the softmax, ·V — as one group: the mix kernel on a decoupled
preset, the in-core kernel of ``tiling/attention_coupled.py`` on a coupled one) and by the
tiling strategy (which reads the same pattern out of the kernel body), so that both agree
on what qualifies.

The pattern, in dataflow order (each value used once, by the next step)::

    s   = graph.matmul(Q_nz, K_nz)              # (..., Sq, Sk), the "qk" matmul
    s'  = layout.trans_data s  NZ -> ND         # fixpipe's conversion on the way out
    x   = elementwise chain of s'                # scale (mul / div), additive mask (add /
                                                 # sub), causal where: one operand on the
                                                 # path, the others read from outside
    p   = graph.softmax(x, axis = -1)
    g   = graph.where(graph.is_nan(p), 0, p)     # optional: torch's SDPA NaN guard
    p'  = layout.trans_data g  ND -> NZ         # the next matmul's nd2nz
    o   = graph.matmul(p', V_nz)                 # (..., Sq, D), the "pv" matmul

The Q, K and V operands keep whatever reaches the matmuls (ND -> NZ conversions of views
of the inputs: the head split; the output's head merge stays the ``pv`` matmul's result
view).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, SubOp
from tilegraph.dialects.graph.linalg import MatMulOp
from tilegraph.dialects.graph.logical import WhereOp
from tilegraph.dialects.graph.math_ops import IsNaNOp
from tilegraph.dialects.graph.nn import SoftmaxOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.hardware import HardwareModel

CHAIN_OPS = (MulOp, DivOp, AddOp, SubOp, WhereOp)
"""What may stand between the scores and the softmax: scale, additive mask, causal where."""
FLASH_ELEMENTS = ("f32", "f16", "bf16")
"""The graph element types the kernel takes: a 16-bit attention keeps its chain in its
type and its softmax statistics, P·V and O in fp32 (as CANN's FlashAttentionScore)."""
MAX_CHAIN = 8
"""The most ops the pattern takes between the scores and the softmax."""
MAX_HEAD_DIM = 128
"""The largest head dim D the kernel keeps a Q block and an O block of on chip for."""


@dataclass(frozen=True)
class AttentionPattern:
    """The ops of one attention pattern (module docstring), in dataflow order."""

    qk: MatMulOp
    scores_to_nd: TransDataOp
    chain: tuple[Operation, ...]
    softmax: SoftmaxOp
    probs_to_nz: TransDataOp
    pv: MatMulOp
    guard: tuple[Operation, ...] = ()
    """The NaN guard between the softmax and the conversion (is_nan, where), or none."""

    @property
    def ops(self) -> tuple[Operation, ...]:
        """Every op of the pattern itself (not the operands' prologues)."""
        return (
            self.qk,
            self.scores_to_nd,
            *self.chain,
            self.softmax,
            *self.guard,
            self.probs_to_nz,
            self.pv,
        )


def _tensor(value: SSAValue) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) else None


def _element(value: SSAValue) -> object:
    t = _tensor(value)
    return None if t is None else t.element_type


def _same_shape(value: SSAValue, t: TensorType) -> bool:
    other = _tensor(value)
    return other is not None and other.origin_shape == t.origin_shape


def _only_user(value: SSAValue) -> Operation | None:
    users = {u.operation for u in value.uses}
    return next(iter(users)) if len(users) == 1 else None


def _converts(op: Operation, source: Format | None, target: Format | None) -> bool:
    """``op`` is a TransData from ``source`` to ``target`` (None: the origin format)."""
    if not isinstance(op, TransDataOp):
        return False
    src, dst = _tensor(op.input), _tensor(op.output)
    if src is None or dst is None:
        return False
    want_src = src.origin_format if source is None else source
    want_dst = dst.origin_format if target is None else target
    return src.storage_format == want_src and dst.storage_format == want_dst


def match_attention(softmax: Operation, claimed: bool = False) -> AttentionPattern | None:
    """The attention pattern around ``softmax``, or None when it is not one. ``claimed``:
    the ops are a group ``fuse-ops`` claimed (a NaN guard's 0 is then an input of it)."""
    if not isinstance(softmax, SoftmaxOp):
        return None
    t = _tensor(softmax.results[0])
    if t is None or t.rank < 3:
        return None
    axis = softmax.attr("axis")
    if axis not in (-1, t.rank - 1):
        return None
    path = _scores_path(softmax.operands[0], t, MAX_CHAIN)
    if path is None:
        return None
    chain, to_nd = path
    qk = to_nd.input.owner
    assert isinstance(qk, MatMulOp)
    guard = nan_guard(softmax, claimed)
    found = _probabilities_to_pv(guard[-1] if guard else softmax)
    if found is None:
        return None
    return AttentionPattern(qk, to_nd, chain, softmax, *found, guard or ())


def _scores_path(
    value: SSAValue, t: TensorType, depth: int
) -> tuple[tuple[Operation, ...], TransDataOp] | None:
    """The chain (in dataflow order) from a matmul's scores converted to ND to ``value``,
    and that conversion; None when ``value`` is not reached so. An operand of the scores'
    shape may be a mask or a position bias computed by the same kinds of ops (T5's sum of
    its bias and padding mask), so each candidate is followed back to the matmul."""
    owner = value.owner
    if not isinstance(owner, Operation) or _only_user(value) is None:
        return None
    if _converts(owner, Format.FRACTAL_NZ, None):
        assert isinstance(owner, TransDataOp)
        qk = owner.input.owner
        if not isinstance(qk, MatMulOp) or _only_user(qk.results[0]) is not owner:
            return None
        return (), owner
    if not isinstance(owner, CHAIN_OPS) or depth == 0:
        return None
    found = [
        path
        for v in dict.fromkeys(owner.operands)
        if _same_shape(v, t) and (path := _scores_path(v, t, depth - 1)) is not None
    ]
    if len(found) != 1:
        return None
    chain, to_nd = found[0]
    return (*chain, owner), to_nd


def nan_guard(softmax: SoftmaxOp, claimed: bool = False) -> tuple[IsNaNOp, WhereOp] | None:
    """torch's SDPA NaN guard on the softmax's result, ``where(isnan(p), 0, p)`` with 0 a
    one-element constant (the probabilities of a fully masked row, NaN, become 0), when
    the guard's two ops are the result's only users; else None. In a ``claimed`` group
    the 0 is an input (``fuse-ops`` saw the constant when it claimed)."""
    p = softmax.results[0]
    users = {u.operation for u in p.uses}
    nan = next((u for u in users if isinstance(u, IsNaNOp)), None)
    where = next((u for u in users if isinstance(u, WhereOp)), None)
    if nan is None or where is None or len(users) != 2:
        return None
    if (
        where.condition is not nan.results[0]
        or where.y is not p
        or _only_user(nan.results[0]) is not where
        or not _zero(where.x, claimed)
    ):
        return None
    return nan, where


def _zero(value: SSAValue, claimed: bool) -> bool:
    """A one-element constant 0; in a ``claimed`` group or kernel, where the constant is an
    input (a block argument, a ``tile.read``), any one-element input."""
    data = constant_value(value)
    if data is not None:
        return data.size == 1 and bool(data.reshape(()) == 0)
    t = _tensor(value)
    computed = isinstance(value.owner, GraphOp)
    return claimed and not computed and t is not None and t.num_elements() == 1


def _probabilities_to_pv(probs: Operation) -> tuple[TransDataOp, MatMulOp] | None:
    """The ND -> FRACTAL_NZ conversion of the probabilities (``probs``: the softmax, or
    the guard's where) and the ·V matmul it is the left operand of, or None."""
    to_nz = _only_user(probs.results[0])
    if to_nz is None or not _converts(to_nz, None, Format.FRACTAL_NZ):
        return None
    assert isinstance(to_nz, TransDataOp)
    pv = _only_user(to_nz.output)
    if not isinstance(pv, MatMulOp) or pv.lhs is not to_nz.output or pv.rhs is to_nz.output:
        return None
    return to_nz, pv


def attention_in(ops: list[Operation]) -> AttentionPattern | None:
    """The attention pattern whose softmax is among ``ops`` and whose ops all are (a fused
    kernel's body), else None."""
    members = set(ops)
    for op in ops:
        pattern = match_attention(op, claimed=True)
        if pattern is not None and set(pattern.ops) <= members:
            return pattern
    return None


def shapes(pattern: AttentionPattern) -> tuple[tuple[int, ...], int, int, int] | None:
    """(batch dims, Sq, Sk, D) of a pattern with static shapes, else None."""
    scores, out = _tensor(pattern.qk.results[0]), _tensor(pattern.pv.results[0])
    if scores is None or out is None:
        return None
    dims = [*scores.origin_shape, *out.origin_shape]
    if not all(isinstance(d, int) for d in dims):
        return None
    *batch, sq, sk = (int(d) for d in scores.origin_shape)
    *out_batch, out_sq, d = (int(d) for d in out.origin_shape)
    if out_batch != batch or out_sq != sq:
        return None
    return tuple(batch), sq, sk, d


def unqualified(pattern: AttentionPattern, hw: HardwareModel) -> str | None:
    """Why the flash kernel does not take this pattern on ``hw`` (None: it does). Every
    preset has one (decoupled: the mix kernel; coupled: the in-core kernel); the limits
    are the pattern's (shapes, head dim, element types, the chain's ops)."""
    del hw  # the same limits on every preset today
    found = shapes(pattern)
    if found is None:
        return "symbolic attention shapes"
    _, _, _, d = found
    if d > MAX_HEAD_DIM:
        return f"a head dim {d} over {MAX_HEAD_DIM}"
    element = _tensor(pattern.pv.results[0])
    if element is None or str(element.element_type) not in FLASH_ELEMENTS:
        return "an attention that is neither f32, f16 nor bf16"
    values = (pattern.qk.lhs, pattern.qk.rhs, pattern.qk.results[0], pattern.pv.rhs)
    if any(_element(v) != element.element_type for v in values):
        return "an attention mixing element types"
    for op in pattern.chain:
        if not isinstance(op, GraphOp):
            return f"{op.name} between the scores and the softmax"
    return None
