"""A Scan that only frames a signal -> strided Slices and a Concat (no loop left).

onnxscript-written audio front ends (onnx-asr's wespeaker / kaldi-style preprocessors) cut
a signal into overlapping frames with a *sliding buffer*: a Scan over the hops ``X[B, T, H]``
carrying the last ``P`` samples, whose body is ::

    frame = Concat(prev, curr, axis=-1)      # [B, P + H]: the scan output
    next  = Slice(frame, [H], [end], [-1])   # [B, P]:     the new state

so frame ``t`` is ``S[:, t·H : t·H + W]`` of the signal ``S = Concat(prev₀, X as [B, T·H])``,
``W = P + H``. That is data movement only: with ``u = gcd(P, H)``, ``S`` viewed as
``[B, L, u]`` units (``L = P/u + T·H/u``) gives frame ``t`` as units ``t·s .. t·s + n - 1``
(``s = H/u``, ``n = W/u``), so the frames are the Concat along the last axis of ``n``
Slices of the units axis by step ``s``: Slice ``k`` starts at ``k`` and ends ``n - 1 - k``
units before the end (``ends`` counted from the end, so ``T`` may be symbolic). The
result is the scan output exactly (the same samples, copied); a Scan whose final state is
read, that scans backwards, or whose frames need more than :data:`MAX_PIECES` pieces is
left as it is.
"""

from __future__ import annotations

from math import gcd

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.control_flow import ScanOp
from tilegraph.dialects.graph.data_movement import ConcatOp, SliceOp
from tilegraph.dialects.graph.fused import YieldOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import dims_compatible
from tilegraph.passes.simplify.match import constant_ints, drop_ops, ints_constant, reshaped
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

MAX_PIECES = 16
"""The most Slices a frame is assembled from (``W / gcd(P, H)``); more would be a kernel per
piece for little work each."""

_TO_END = 2**31 - 1
"""An ``ends`` at least this large runs to the end of the axis."""


def _static_last(value: SSAValue) -> int | None:
    t = value.type
    if isinstance(t, TensorType) and t.rank == 2 and isinstance(t.origin_shape[-1], int):
        return t.origin_shape[-1] if t.origin_shape[-1] >= 0 else None
    return None


def _outer(scan: ScanOp, value: SSAValue) -> SSAValue:
    """What a body value stands for outside: a capture argument's captured value."""
    block = scan.body.block
    captured = scan.captured_values
    first = len(block.args) - len(captured)
    for arg, outer in zip(block.args[first:], captured, strict=True):
        if arg is value:
            return outer
    return value


def sliding_frame(scan: ScanOp) -> tuple[int, int] | None:
    """``(P, H)`` when ``scan`` is a sliding buffer (the module docstring's form, forwards,
    over axis 1 of a ``[B, T, H]`` input, stacked along axis 1, final state unread), else
    None."""
    if len(scan.initial) != 1 or len(scan.scan_inputs) != 1 or scan.outputs[0].uses:
        return None
    for name in ("scan_input_axes", "scan_output_axes"):
        if list(scan.attr(name) or [0]) not in ([1], [-2]):  # type: ignore[arg-type]
            return None
    for name in ("scan_input_directions", "scan_output_directions"):
        if any(int(d) for d in scan.attr(name) or []):  # type: ignore[union-attr]
            return None
    block = scan.body.block
    prev, curr = block.args[0], block.args[1]
    yielded = block.last_op
    ops = list(block.ops)
    if not isinstance(yielded, YieldOp) or len(ops) != 3:
        return None
    next_state, frame = yielded.operands
    concat, cut = frame.owner, next_state.owner
    if not isinstance(concat, ConcatOp) or not isinstance(cut, SliceOp):
        return None
    if list(concat.operands) != [prev, curr] or int(concat.attr("axis")) % 2 != 1:  # type: ignore[arg-type]
        return None
    h, p = _static_last(curr), _static_last(scan.initial[0])
    if h is None or p is None or h == 0 or p == 0 or cut.data != frame:
        return None
    slots = [None if s is None else constant_ints(_outer(scan, s)) for s in cut.operand_slots()[1:]]
    starts, ends, axes, steps = (slots + [None, None])[:4]
    if starts != (h,) or ends is None or len(ends) != 1 or ends[0] < p + h:
        return None
    if axes not in (None, (1,), (-1,)) or steps not in (None, (1,)):
        return None
    return p, h


def frames_by_slices(scan: ScanOp, p: int, h: int) -> list[Operation] | None:
    """The ops computing the scan output of the sliding buffer ``(P, H)`` (None: too many
    pieces, or a shape function disagreed)."""
    u = gcd(p, h)
    pieces, step = (p + h) // u, h // u
    if pieces > MAX_PIECES:
        return None
    ops: list[Operation] = []
    flat = reshaped(scan.scan_inputs[0], [0, -1], ops)
    signal = ConcatOp.make(scan.initial[0], flat, axis=1)
    ops.append(signal)
    units = reshaped(signal.results[0], [0, -1, u], ops)
    parts: list[SSAValue] = []
    for k in range(pieces):
        from_end = pieces - 1 - k
        bounds = [ints_constant([k]), ints_constant([-from_end if from_end else _TO_END])]
        bounds += [ints_constant([1]), ints_constant([step])]
        piece = SliceOp.make(units, *(b.results[0] for b in bounds))
        ops += [*bounds, piece]
        parts.append(piece.results[0])
    declared = scan.outputs[1].type
    frames = ConcatOp.make(*parts, axis=2)
    ops.append(frames)
    if not _refines(frames.results[0].type, declared):
        drop_ops(ops)
        return None
    # typed as the Scan's output (its body may have left the frame length unknown) so that
    # its users still type-check; infer-shapes refines them all
    Rewriter.replace_value_with_new_type(frames.results[0], declared)
    return ops


def _refines(new: object, old: object) -> bool:
    """``new`` says nothing against ``old`` (and may say more: the Slices know the frame
    length a Scan's body may have left unknown)."""
    if not isinstance(new, TensorType) or not isinstance(old, TensorType):
        return False
    return (
        new.rank == old.rank
        and new.element_type == old.element_type
        and all(map(dims_compatible, new.origin_shape, old.origin_shape))
    )


@simplify_rule
class SlidingFrameScan(SimplifyRule):
    INFO = RuleInfo(
        None,
        "scan-sliding-frames",
        "Scan(prev, X) { f = Concat(prev, x_t); yield Slice(f, H..), f }",
        "Concat of strided Slices of Concat(prev₀, X) viewed as units",
        "only when the final state is unread, forwards, at most 16 pieces a frame",
    )
    ROOTS = (ScanOp,)

    def rewrite(self, op: ScanOp, rewriter: PatternRewriter) -> None:
        found = sliding_frame(op)
        if found is None:
            return
        ops = frames_by_slices(op, *found)
        if ops is None:
            return
        frames = ops[-1].results[0]
        frames.name_hint = op.outputs[1].name_hint
        rewriter.insert(ops, InsertPoint.before(op))
        rewriter.replace_all_uses_with(op.outputs[1], frames)
        rewriter.erase(op)  # its final state is unread (checked)
