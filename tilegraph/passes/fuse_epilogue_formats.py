"""``fuse-ops``'s preparation: elementwise ops on matmul results compute in ND, as epilogues.

The format engine lets an elementwise op whose operands share a storage format compute in
it (``layout.shared``). A pre-norm transformer's residual stream (T5, LLaMA: ``x + o(a)``,
whose sum is read by the next residual add and by the norm) and LLaMA's gate product
``silu(x·W1) * (x·W3)`` are so kept in FRACTAL_NZ, the matmuls' format; but a matmul's
vector epilogue runs on its ND result (fixpipe converts NZ -> ND on the way out), so each
such op was a vector kernel of its own, and the norm read its input through another
conversion kernel.

:func:`epilogues_to_nd` rewrites each connected set of such FRACTAL_NZ elementwise ops
that reads a matmul's (or a Gemm's) result to compute in ND instead: the product's NZ
result is converted to ND after it (the conversion then belongs to the product's group:
fixpipe), an operand converted ND -> FRACTAL_NZ is read before its conversion (which goes
when nothing else reads it), a constant stored in FRACTAL_NZ is stored in ND instead (its
data converted at compile time: T5's decoder position bias), a conversion of a result
back to ND is dropped (the ND value is the result), and a product reading a result in NZ
as a matrix operand gets it through an ND -> NZ conversion (its ``nd2nz`` prologue). A set
with any other operand or reader (a value only NZ, a vector op or the function's return
reading NZ) is left as the format engine chose it: converting there would be a kernel of
its own. BERT's post-norm layers already have their epilogues in ND;
GE's fusion pass gives the same ``MatMul + Add`` / ``MatMul + Mul`` fusions on Ascend
(its ``MatMulAddFusionPass`` family), the elementwise op running on the matmul's output.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import FusionKind, GraphOp
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_storage import convert
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.lowering.analysis.operand_views import matrix_operands

SHARED_FORMAT_ATTR = "layout.shared"
"""The format engine's mark of an op computing in its operands' shared storage format."""
ELEMENTWISE = frozenset({FusionKind.ELEMWISE, FusionKind.BROADCAST})


def _tensor(value: SSAValue) -> TensorType | None:
    t = value.type
    return t if isinstance(t, TensorType) else None


def nd_source(value: SSAValue) -> SSAValue | None:
    """``value`` as an ND tensor without a kernel: itself when it is stored in its origin
    format, the input of its ND -> FRACTAL_NZ conversion; else None. A constant stored in
    FRACTAL_NZ (:func:`restorable_constant`) qualifies too, but is its own source here:
    :func:`nd_constant` makes its ND copy."""
    t = _tensor(value)
    if t is None:
        return None
    if t.storage_format == t.origin_format or restorable_constant(value):
        return value
    owner = value.owner
    if isinstance(owner, Operation) and _to_nz(owner):
        assert isinstance(owner, TransDataOp)
        return owner.input
    return None


def restorable_constant(value: SSAValue) -> bool:
    """A constant with its data, stored in FRACTAL_NZ with ND as origin (``fold-trans-data``
    pre-converted it for the NZ add that reads it: T5's decoder self-attention position
    bias, folded with its causal mask): its storage is a compile-time choice, so an ND
    epilogue reads an ND copy of it, as GE stores a constant in the format its consumer
    selected."""
    t, owner = _tensor(value), value.owner
    return (
        isinstance(owner, ConstantOp)
        and t is not None
        and t.storage_format == Format.FRACTAL_NZ
        and t.origin_format == Format.ND
        and owner.constant_array() is not None
    )


def nd_constant(value: SSAValue) -> SSAValue:
    """The ND copy of a :func:`restorable_constant` (the data converted at compile time),
    inserted after it; the original goes when nothing else reads it."""
    owner, t = value.owner, _tensor(value)
    assert isinstance(owner, ConstantOp) and t is not None
    data = owner.constant_array()
    assert data is not None
    copy = ConstantOp(convert(data, t, _origin_stored(t)), _origin_stored(t))
    copy.output.name_hint = value.name_hint
    copy.location = owner.location
    Rewriter.insert_op(copy, InsertPoint.after(owner))
    return copy.output


def _fractal_conversion(op: Operation) -> tuple[TensorType, TensorType] | None:
    """The (source, result) types of a TransData into or out of FRACTAL_NZ, else None."""
    if not isinstance(op, TransDataOp):
        return None
    src, dst = _tensor(op.input), _tensor(op.output)
    if (
        src is None
        or dst is None
        or Format.FRACTAL_NZ
        not in (
            src.storage_format,
            dst.storage_format,
        )
    ):
        return None
    return src, dst


def _to_nz(op: Operation) -> bool:
    """A conversion from a tensor's origin format to FRACTAL_NZ."""
    types = _fractal_conversion(op)
    return (
        types is not None
        and types[0].storage_format == types[0].origin_format
        and types[1].storage_format == Format.FRACTAL_NZ
    )


def _fractal_elementwise(op: Operation) -> bool:
    """An elementwise op the format engine put in FRACTAL_NZ (every result stored so)."""
    if not isinstance(op, GraphOp) or op.FACTS.fusion not in ELEMENTWISE:
        return False
    if SHARED_FORMAT_ATTR not in op.attributes or not op.results:
        return False
    for r in op.results:
        t = _tensor(r)
        if t is None or t.storage_format != Format.FRACTAL_NZ or t.origin_format != Format.ND:
            return False
    return True


def _to_nd(op: Operation) -> bool:
    """A conversion FRACTAL_NZ -> its origin format ND."""
    types = _fractal_conversion(op)
    return (
        types is not None
        and types[0].storage_format == Format.FRACTAL_NZ
        and types[1].storage_format == types[1].origin_format == Format.ND
    )


def _component(seed: Operation) -> list[Operation]:
    """The FRACTAL_NZ elementwise ops connected to ``seed`` through their values."""
    found: dict[Operation, None] = {seed: None}
    todo = [seed]
    while todo:
        op = todo.pop()
        neighbours = [v.owner for v in op.operands if isinstance(v.owner, Operation)]
        neighbours += [u.operation for r in op.results for u in r.uses]
        for other in neighbours:
            if other not in found and _fractal_elementwise(other):
                found[other] = None
                todo.append(other)
    return list(found)


def _product(op: Operation) -> bool:
    """A matmul or a Gemm (its result is the cube's, converted by fixpipe on the way out;
    a Gemm's bias is fixpipe's too: ERNIE's pooler ``tanh(x·W + b)`` feeding its
    classifier)."""
    return bool(matrix_operands(op))


def _plan(members: set[Operation]) -> bool:
    """Whether ``members`` can compute in ND without a conversion kernel of its own, and
    read a matmul's result (else nothing is gained)."""
    reads_matmul = False
    for op in members:
        for v in op.operands:
            owner = v.owner
            if owner in members:
                continue
            if isinstance(owner, Operation) and _product(owner):
                reads_matmul = True
            elif nd_source(v) is None:
                return False
        for r in op.results:
            for use in r.uses:
                user = use.operation
                if user not in members and not _to_nd(user) and r not in matrix_operands(user):
                    return False
    return reads_matmul


def _origin_stored(t: TensorType) -> TensorType:
    return t.with_storage(t.origin_format)


def _rewrite(members: list[Operation], restored: dict[SSAValue, SSAValue]) -> None:
    """Clone ``members`` (in block order) to compute in ND, rewire, erase the originals;
    ``restored``: the ND copies of FRACTAL_NZ constants made so far in the block (one copy
    however many sets read a constant: T5's decoder layers share their bias)."""
    inside = set(members)
    nd_of: dict[SSAValue, SSAValue] = {}
    dropped: list[Operation] = []

    def nd_value(v: SSAValue) -> SSAValue:
        if v in nd_of:
            return nd_of[v]
        source = nd_source(v)
        if source is not None and restorable_constant(v):
            if v not in restored:
                restored[v] = nd_constant(v)
            dropped.append(v.owner)  # type: ignore[arg-type] - the NZ constant
            return restored[v]
        if source is not None:
            if source is not v:
                dropped.append(v.owner)  # type: ignore[arg-type] - its ND -> NZ conversion
            return source
        owner = v.owner
        assert isinstance(owner, Operation) and _product(owner)  # _plan admitted nothing else
        t = _tensor(v)
        assert t is not None
        conversion = TransDataOp(v, _origin_stored(t))
        conversion.output.name_hint = v.name_hint
        conversion.location = owner.location
        Rewriter.insert_op(conversion, InsertPoint.after(owner))
        nd_of[v] = conversion.output
        return conversion.output

    for op in members:
        operands = [nd_of[v] if v.owner in inside else nd_value(v) for v in op.operands]
        new = op.create(
            operands=operands,
            result_types=[_origin_stored(_tensor(r)) for r in op.results],  # type: ignore[arg-type]
            properties=dict(op.properties),
            attributes={k: a for k, a in op.attributes.items() if k != SHARED_FORMAT_ATTR},
        )
        new.location = op.location
        Rewriter.insert_op(new, InsertPoint.before(op))
        for old, nd in zip(op.results, new.results, strict=True):
            nd.name_hint = old.name_hint
            nd_of[old] = nd
    for op in members:
        for old in op.results:
            _reroute(old, nd_of[old], inside)
    for op in reversed(members):
        Rewriter.erase_op(op)
    for conversion in dropped:
        if conversion.parent is not None and not any(r.uses for r in conversion.results):
            Rewriter.erase_op(conversion)


def _reroute(old: SSAValue, nd: SSAValue, inside: set[Operation]) -> None:
    """The readers of ``old`` (NZ) outside the rewritten ops read ``nd``: a conversion to
    ND is replaced by it, a matmul reads it through one ND -> NZ conversion."""
    to_nz: TransDataOp | None = None
    for use in list(old.uses):
        user = use.operation
        if user in inside:
            continue
        if _to_nd(user):
            assert isinstance(user, TransDataOp)
            user.output.replace_all_uses_with(nd)
            Rewriter.erase_op(user)
        elif old in matrix_operands(user):
            if to_nz is None:
                to_nz = TransDataOp(nd, old.type)  # type: ignore[arg-type]
                to_nz.output.name_hint = old.name_hint
                to_nz.location = user.location
                Rewriter.insert_op(to_nz, InsertPoint.after(nd.owner))  # type: ignore[arg-type]
            user.operands = [to_nz.output if v is old else v for v in user.operands]


def epilogues_to_nd(block: Block) -> int:
    """Rewrite every admissible set of FRACTAL_NZ elementwise ops of ``block`` (module
    docstring) to compute in ND; the number of ops rewritten."""
    seen: set[Operation] = set()
    restored: dict[SSAValue, SSAValue] = {}
    rewritten = 0
    for op in list(block.ops):
        if op in seen or op.parent is None or not _fractal_elementwise(op):
            continue
        component = _component(op)
        seen.update(component)
        if not _plan(set(component)):
            continue
        _rewrite(_in_block_order(block, component), restored)
        rewritten += len(component)
    return rewritten


def _in_block_order(block: Block, ops: Iterable[Operation]) -> list[Operation]:
    wanted = set(ops)
    return [op for op in block.ops if op in wanted]
