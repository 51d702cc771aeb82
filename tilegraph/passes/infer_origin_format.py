"""``infer-origin-format``: label every tensor with the origin format its neighbours imply.

GE's origin-format propagation (docs/formats.md, "Propagation of origin format"). The origin
format is a label at this stage (storage format = origin format, before storage selection),
so the pass changes types only, never data. What it guarantees, per function:

**Anchors** (set before any propagation, in this order):

1. every tensor that already has a non-ND origin format (function arguments given by the
   user or the frontend, values labelled by shape functions, hand-written labels);
2. every SENSITIVE op (Conv, pooling, BatchNorm, LRN, ...) whose data operand (operand 0)
   has its ``data_format``'s rank (4 for NCHW, 5 for NCDHW): the data operand, the results,
   every other operand of that same rank (the conv weight: OIHW is read as NCHW, GE's
   convention, so it can later become FRACTAL_Z), and the low-rank operands named in
   ``FACTS.reshape_types`` whose rank matches the reshape type (conv bias, BatchNorm
   scale/B/mean/var: rank 1, "C"). Low-rank parameters get the format because storage
   selection needs it: NC1HWC0 <-> ND is forbidden, so an ND bias could never reach the 5HD
   kernel variants. At any other rank (1-D conv, BatchNorm on ``[N, C]``) the op anchors
   nothing.

**Propagation**: breadth-first (FIFO) from the anchors, forward to consumers and backward to
producers: when a value gets a format, its producer and its users (in program order) apply
their rule. A value is set only if it is still ND, is a ``!layout.tensor``, is not a scalar,
is not locked (below), and its rank fits the format: equal to the format's rank, or lower
for a broadcast operand (AGNOSTIC rule). Rules per ``FACTS.role``:

* AGNOSTIC: its tensors are the operands in ``format_operands`` (all if None) and the
  results. The first non-ND format among them (operands in order, then results) whose
  tensor has the format's full rank is copied to the ND ones of full rank. A lower-rank
  operand (a ``[C, 1, 1]`` bias of an ``add``) gets the format too (GE: format plus
  reshapeType), when the results have the full rank and its rank expansion (the op's
  ``reshape_types`` entry, else the default) puts its dims where numpy broadcasting does,
  the test ``select-storage-format`` applies: ``[C, 1, 1]`` ("CHW"), ``[1]`` and ``[1, 1]``
  in NCHW, ``[C]`` in NHWC; not ``[W]`` or ``[H, W]`` in NCHW (the default "C"/"CH" would
  misplace them), which stay ND. Low-rank tensors are leaves: they never pass a format on.
* PAIRED: operand i and result i share a format (same rank), independently of the other pairs.
* RESHAPE: ``graph.transpose`` of rank 4/5 maps the axis letters through ``perm``; if they
  spell an axis format of that rank (NCHW with ``[0, 2, 3, 1]`` gives NHWC), the other side
  gets it (forward with ``perm``, backward with its inverse), otherwise it stays ND.
  ``graph.gather`` passes the format between data and result when their ranks are equal
  (1-D indices: every axis keeps its meaning). reshape/flatten/squeeze/unsqueeze are
  conservative: the format passes only through an identity (data and result have the same
  known shape, static or symbolic). formats.md only resets tensors whose rank does not
  match; we also reset a rank-preserving reshape that moves dims (``[1, 64, 8, 8] ->
  [1, 64, 64, 1]`` is not NCHW any more). Squeeze and unsqueeze change the rank, so they
  always stop propagation (formats.md: below rank 4).
* SENSITIVE: nothing beyond its anchors (weights, biases and the other operands are not set
  through the op). ND_ONLY (matmul, gemm, softmax, reductions, shape queries): nothing.

**Locks and conflicts**: a non-ND format is never overwritten. All anchors are set before
propagation, so an anchor always wins over a propagated format; among propagated formats
the first to arrive in BFS order wins (anchors enqueued in program order). A value whose
storage format differs from its origin format is locked (never relabelled, though it may be
a source); so are the operands and results of ops that are neither graph ops nor
``func.return`` (``layout.trans_data`` requires equal origin formats on both sides).
Graph inputs that no anchor reaches stay ND. Function types are updated.

:func:`infer_origin_formats` computes the assignment without mutating the IR.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilegraph.dialects.graph.base import GraphOp
from tilegraph.dialects.graph.control_flow import has_only_tensors, walk_outside_bodies
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.facts import FormatRole
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import AXIS_FORMATS_3D, AXIS_FORMATS_4D, Format, FormatError, expand_rank
from tilegraph.formats.dims import is_unknown
from tilegraph.passes.registry import register_pass

_BY_AXES: dict[str, Format] = {f.value: f for f in (*AXIS_FORMATS_4D, *AXIS_FORMATS_3D)}


@dataclass
class OriginFormats:
    """The outcome for one function."""

    formats: dict[SSAValue, Format] = field(default_factory=dict)
    """Every ``!layout.tensor`` value of the function -> its origin format after the pass."""
    why: dict[SSAValue, str] = field(default_factory=dict)
    """Values the pass labels -> the reason (anchor or the op it came through)."""

    def changed(self) -> list[SSAValue]:
        """Values whose origin format the pass sets, in the order they were set."""
        return list(self.why)


def _tensor(v: SSAValue) -> TensorType | None:
    return v.type if isinstance(v.type, TensorType) else None


def _rank(v: SSAValue) -> int:
    t = _tensor(v)
    return -1 if t is None else t.rank


def _expands(v: SSAValue, fmt: Format, reshape_type: str | None, *, numpy: bool) -> bool:
    """Whether low-rank ``v`` can carry ``fmt``: its rank expansion (``reshape_type``, else
    the default) is valid and, with ``numpy``, puts its dims where broadcasting does."""
    t = _tensor(v)
    if t is None or not 0 < t.rank < (fmt.rank or 0):
        return False
    try:
        expanded = expand_rank(list(t.origin_shape), fmt, reshape_type)
    except FormatError:
        return False
    return not numpy or list(expanded) == [1] * (len(expanded) - t.rank) + list(t.origin_shape)


def _same_shape(x: SSAValue, y: SSAValue) -> bool:
    """Both have the same known origin shape (static or symbolic, no unknown dim)."""
    tx, ty = _tensor(x), _tensor(y)
    if tx is None or ty is None or tx.origin_shape != ty.origin_shape:
        return False
    return not any(is_unknown(d) for d in tx.origin_shape)


class _Inference:
    def __init__(self, fn: func.FuncOp):
        self.out = OriginFormats()
        self.locked: set[SSAValue] = set()
        self.queue: deque[SSAValue] = deque()
        self.order: dict[Operation, int] = {}
        ops = list(walk_outside_bodies(fn.body))
        values: list[SSAValue] = [*fn.body.blocks[0].args] if fn.body.blocks else []
        for i, op in enumerate(ops):
            self.order[op] = i
            values.extend(op.results)
            if not isinstance(op, GraphOp | func.ReturnOp) or not has_only_tensors(op):
                self.locked.update([*op.operands, *op.results])
        for v in values:
            if (t := _tensor(v)) is not None:
                self.out.formats[v] = t.origin_format
                if t.storage_format != t.origin_format:
                    self.locked.add(v)
                if t.origin_format is not Format.ND and t.rank == t.origin_format.rank:
                    self.queue.append(v)
        for op in ops:
            if isinstance(op, GraphOp) and op.FACTS.role is FormatRole.SENSITIVE:
                self._anchor(op)
        while self.queue:
            v = self.queue.popleft()
            owner = v.owner if isinstance(v.owner, Operation) else None
            users = sorted({u.operation for u in v.uses}, key=lambda o: self.order.get(o, -1))
            for op in [owner, *users] if owner is not None else users:
                if isinstance(op, GraphOp):
                    self._propagate(op)

    # ---- state ------------------------------------------------------------------------
    def fmt(self, v: SSAValue) -> Format:
        return self.out.formats.get(v, Format.ND)

    def _set(self, v: SSAValue, fmt: Format, why: str, *, low_rank: bool = False) -> None:
        """Label ``v`` if allowed; full-rank labels are enqueued, low-rank ones are leaves."""
        rank = _rank(v)
        if v not in self.out.formats or v in self.locked or self.fmt(v) is not Format.ND:
            return
        if rank == fmt.rank:
            self.queue.append(v)
        elif not (low_rank and 0 < rank < (fmt.rank or 0)):
            return
        self.out.formats[v] = fmt
        self.out.why[v] = why

    def _full(self, v: SSAValue) -> Format | None:
        f = self.fmt(v)
        return f if f is not Format.ND and _rank(v) == f.rank else None

    # ---- rules ------------------------------------------------------------------------
    def _anchor(self, op: GraphOp) -> None:
        fmt = op.FACTS.data_format
        if fmt is None or not op.operands or _rank(op.operands[0]) != fmt.rank:
            return
        why = f"anchor: {op.name} ({fmt})"
        self._set(op.operands[0], fmt, why)
        for r in op.results:
            self._set(r, fmt, why)
        for i, v in enumerate(op.operand_slots()):
            if v is not None and i > 0:
                rt = op.FACTS.reshape_types.get(i)
                low = rt is not None and _expands(v, fmt, rt, numpy=False)
                self._set(v, fmt, f"{why}, operand {i}", low_rank=low)

    def _propagate(self, op: GraphOp) -> None:
        role = op.FACTS.role
        if role is FormatRole.AGNOSTIC:
            self._agnostic(op)
        elif role is FormatRole.PAIRED:
            for x, y in zip(op.operands, op.results, strict=False):
                self._share(op, x, y)
        elif isinstance(op, TransposeOp):
            self._transpose(op)
        elif role is FormatRole.RESHAPE and op.operands and op.results:
            x, y = op.operands[0], op.results[0]
            if _same_shape(x, y) or (isinstance(op, GatherOp) and _rank(x) == _rank(y)):
                self._share(op, x, y)

    def _share(self, op: GraphOp, x: SSAValue, y: SSAValue) -> None:
        if _rank(x) != _rank(y):
            return
        if (f := self._full(x)) is not None:
            self._set(y, f, f"forward through {op.name}")
        elif (f := self._full(y)) is not None:
            self._set(x, f, f"backward through {op.name}")

    def _agnostic(self, op: GraphOp) -> None:
        slots = op.operand_slots()
        operands = [
            (i, v)
            for i, v in enumerate(slots)
            if v is not None and op.FACTS.takes_part_in_format(i)
        ]
        tensors = [v for _, v in operands] + list(op.results)
        fmt = next((f for v in tensors if (f := self._full(v)) is not None), None)
        if fmt is None:
            return
        results_full = all(_rank(r) == fmt.rank for r in op.results)
        for i, v in operands:
            rt = op.FACTS.reshape_types.get(i)
            low = results_full and _expands(v, fmt, rt, numpy=True)
            self._set(v, fmt, f"through {op.name}", low_rank=low)
        for r in op.results:
            self._set(r, fmt, f"through {op.name}")

    def _transpose(self, op: TransposeOp) -> None:
        x, y = op.operands[0], op.results[0]
        rank = _rank(x)
        if rank < 4:
            return  # formats.md: a transpose below rank 4 stops propagation
        perm = list(op.attr("perm") or range(rank)[::-1])
        if (f := self._full(x)) is not None and f.axes is not None:
            g = _BY_AXES.get("".join(f.axes[p] for p in perm))
            if g is not None:
                self._set(y, g, f"forward through {op.name} {perm}")
        elif (f := self._full(y)) is not None and f.axes is not None:
            letters = [""] * rank
            for i, p in enumerate(perm):
                letters[p] = f.axes[i]
            g = _BY_AXES.get("".join(letters))
            if g is not None:
                self._set(x, g, f"backward through {op.name} {perm}")


def infer_origin_formats(fn: func.FuncOp) -> OriginFormats:
    """The origin format of every tensor of ``fn`` after the pass (the IR is not changed)."""
    return _Inference(fn).out


@register_pass
@dataclass(frozen=True)
class InferOriginFormatPass(ModulePass):
    """Propagate origin formats (NCHW, NHWC, ...) from anchors through format-agnostic ops.

    Control-flow bodies (``graph.if`` / ``loop`` / ``scan`` / ``sequence_map``) are skipped:
    they run as host code, unoptimised; ops with sequence or optional values stay ND.
    """

    name = "infer-origin-format"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.walk()):
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                self._run_function(fn)

    @staticmethod
    def _run_function(fn: func.FuncOp) -> None:
        result = infer_origin_formats(fn)
        for v in result.changed():
            t = v.type
            assert isinstance(t, TensorType)
            Rewriter.replace_value_with_new_type(v, t.with_origin_format(result.formats[v]))
        inputs = [a.type for a in fn.body.blocks[0].args]
        ret = fn.body.blocks[0].last_op
        outputs = (
            [v.type for v in ret.arguments]
            if isinstance(ret, func.ReturnOp)
            else list(fn.function_type.outputs.data)
        )
        new_type = FunctionType.from_lists(inputs, outputs)
        if new_type != fn.function_type:
            fn.function_type = new_type
