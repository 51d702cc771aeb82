"""What ``fold-qdq`` does with a QuantizeLinear after data movement: the quantisation
moves before the movement, so the int8 tensor is what moves and the QuantizeLinear
becomes the tail of the kernel that produced the float value.

onnxruntime's QDQ quantiser quantises an attention block's head split *after* it::

    linear -> Reshape -> Transpose [-> Mul by a scalar] -> QuantizeLinear

and the output merge likewise (``DQ -> Transpose -> Reshape -> Q``). As written, the
transpose moves float32 (four times the bytes of int8) and the QuantizeLinear is a vector
kernel of its own: the format engine keeps moves and elementwise ops in separate kernels
(``fuse-ops``' shape-op / elementwise split). A per-tensor quantisation is elementwise with
one scale and zero point, and so is a binary op whose other operand is one constant value:
each commutes with any op that only rearranges elements (``Q(move(x)) = move(Q(x))``
element by element, the same float operands, the same roundings). :func:`hoist_quantize`
rewrites::

    Q(f_n(...f_1(m_k(...m_1(x))))) -> m_k(...m_1(Q(f_n(...f_1(x)))))

for moves ``m_i`` (Reshape, Transpose, Squeeze, Unsqueeze, Flatten; :data:`MOVES`) and
scalar-operand elementwise ops ``f_j`` (Mul, Add, Sub, Div by one constant value) in any
interleaving, each the only user of the one before: the same int8 values, bit for bit
(the elementwise ops keep their order; only the moves go after them). The QuantizeLinear
and the ``f_j`` then fuse into the producer's kernel (a matmul's epilogue) and the moves
move int8.

When nothing but moves separates the QuantizeLinear from a DequantizeLinear of the same
per-tensor int8 quantisation, ``Q(DQ(q)) = q`` (``round(((q - z)·s)/s) + z = q``: the
float32 quotient of an integer of at most 8 bits times ``s`` by ``s`` is within far less
than 0.5 of it) and the moves take ``q`` itself.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.base import ShapeError
from tilegraph.dialects.graph.binary import AddOp, DivOp, MulOp, SubOp
from tilegraph.dialects.graph.constant_ops import ShapeOp, SizeOp
from tilegraph.dialects.graph.quantize import QuantizeLinearOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.qdq_activations import MOVES, int8_dequantize, int8_quantization
from tilegraph.passes.simplify.match import constant_array, one_element_constant

SCALAR_ELEMENTWISE = (MulOp, AddOp, SubOp, DivOp)
"""Binary ops that commute with a move when their other operand is one constant value."""


SHAPE_READERS = (ShapeOp, SizeOp)
"""Ops that read only their operand's shape. They may stay on an old move (the new ops go
before the QuantizeLinear, which they may follow); constant folding answers them from the
static shape, and the old float chain goes with the next ``dce``."""


def _data_user(value: SSAValue, shape_readers: bool) -> Operation | None:
    """The one user of ``value`` that reads its elements (with ``shape_readers``, other
    users may be :data:`SHAPE_READERS`), else None."""
    users = [use.operation for use in value.uses]
    data = [u for u in users if not (shape_readers and isinstance(u, SHAPE_READERS))]
    return data[0] if len(data) == 1 else None


def _per_tensor(q: QuantizeLinearOp) -> bool:
    """One scale and one zero point, both constants (no axis, no blocks, no precision)."""
    if any(int(q.attr(name)) for name in ("block_size", "precision")):
        return False
    params = [constant_array(q.y_scale)]
    if q.y_zero_point is not None:
        params.append(constant_array(q.y_zero_point))
    return all(p is not None and p.size == 1 for p in params)


def _data_slot(op: Operation, source_rank: int) -> int | None:
    """The operand slot of ``op``'s data when ``op`` commutes with a move: a move's data
    operand, or the tensor operand of a scalar-operand elementwise op whose constant's rank
    is at most ``source_rank`` (so it broadcasts the same way before the moves)."""
    if isinstance(op, MOVES):
        return 0
    if not isinstance(op, SCALAR_ELEMENTWISE):
        return None
    for slot in (0, 1):
        if one_element_constant(op.operands[1 - slot], source_rank):
            if constant_array(op.operands[slot]) is None:
                return slot
    return None


def _rebuilt(op: Operation, slot: int, data: SSAValue) -> Operation | None:
    """``op`` with ``data`` in operand ``slot``, its result type inferred; None when the
    shapes do not infer."""
    operands = list(op.operands)
    operands[slot] = data
    properties = dict(op.properties)
    try:
        results = type(op).infer_shapes(operands, properties)  # type: ignore[attr-defined]
    except ShapeError:
        return None
    built = type(op).create(operands=operands, result_types=list(results), properties=properties)
    built.results[0].name_hint = op.results[0].name_hint
    return built


def _chain(q: QuantizeLinearOp) -> tuple[SSAValue, list[Operation]] | None:
    """The value the chain of moves and scalar-operand elementwise ops before ``q`` starts
    from, and the chain in program order; None without a move in it."""
    chain: list[Operation] = []
    value = q.x
    while True:
        op = value.owner
        if not isinstance(op, Operation):
            break
        if _data_user(value, isinstance(op, MOVES)) is not (chain[0] if chain else q):
            break
        data = op.operands[0] if isinstance(op, MOVES) else None
        if isinstance(op, SCALAR_ELEMENTWISE):
            slots = [s for s in (0, 1) if constant_array(op.operands[s]) is None]
            data = op.operands[slots[0]] if len(slots) == 1 else None
        rank = data.type.rank if data is not None and isinstance(data.type, TensorType) else -1
        if data is None or _data_slot(op, rank) is None:
            break
        chain.insert(0, op)
        value = data
    if not any(isinstance(op, MOVES) for op in chain):
        return None
    return value, chain


def hoist_quantize(q: QuantizeLinearOp) -> bool:
    """Move the per-tensor QuantizeLinear ``q`` (and the scalar-operand elementwise ops
    between) before the moves that precede it; ``q``'s uses go to the last int8 move,
    which is inserted before ``q``. True when rewritten (the old ops are left dead)."""
    if not _per_tensor(q):
        return False
    found = _chain(q)
    if found is None:
        return False
    value, chain = found
    if not isinstance(value.type, TensorType):
        return False
    built: list[Operation] = []
    result = _hoisted(q, value, chain, built)
    out = q.y.type
    if (
        result is None
        or not isinstance(out, TensorType)
        or not isinstance(result.type, TensorType)
        or (result.type.origin_shape, result.type.dtype) != (out.origin_shape, out.dtype)
    ):
        for op in reversed(built):
            op.erase(safe_erase=False)
        return False
    result.name_hint = q.y.name_hint
    Rewriter.insert_op(built, InsertPoint.before(q))
    q.y.replace_all_uses_with(result)
    return True


def _hoisted(
    q: QuantizeLinearOp, value: SSAValue, chain: list[Operation], built: list[Operation]
) -> SSAValue | None:
    """The ops of the hoisted chain appended to ``built`` (not inserted): the elementwise
    ops on ``value``, ``q`` (or the int8 value a DequantizeLinear of ``q``'s quantisation
    dequantises), the moves; their last result, or None when a shape does not infer."""
    source = value.type
    assert isinstance(source, TensorType)
    elementwise = [op for op in chain if not isinstance(op, MOVES)]
    for op in elementwise:
        slot = _data_slot(op, source.rank)
        new = None if slot is None else _rebuilt(op, slot, value)
        if new is None:
            return None
        built.append(new)
        value = new.results[0]
    dequantized = int8_dequantize(value) if not elementwise else None
    if dequantized is not None and dequantized[1] == int8_quantization(q.y_scale, q.y_zero_point):
        value = dequantized[0]
    else:
        quantized = _rebuilt(q, 0, value)
        if quantized is None:
            return None
        built.append(quantized)
        value = quantized.results[0]
        value.name_hint = None  # the name goes to the last move
    for op in chain:
        if isinstance(op, MOVES):
            new = _rebuilt(op, 0, value)
            if new is None:
                return None
            built.append(new)
            value = new.results[0]
    return value
