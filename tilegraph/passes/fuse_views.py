"""Which graph ops a matmul's kernel takes as views of its operands and result, for
``fuse-ops`` (:mod:`tilegraph.passes.fuse_ops`): the claims of the reshape / transpose
chains that only re-index a row-major tensor (the attention head split and merge), and
the copies of a split whose outputs are offset views of several matmuls' operands
(GPT-2's QKV split). The chains themselves are found by
:mod:`tilegraph.lowering.analysis.operand_views` and
:mod:`tilegraph.lowering.analysis.shared_views`."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph.data_movement import SplitOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.lowering.analysis.operand_views import (
    VIEW_OPS,
    matmul_reading,
    matrix_operands,
    sole_user,
    view_ops_of,
)
from tilegraph.lowering.analysis.rotary_views import rotary_input_view
from tilegraph.lowering.analysis.shared_views import split_view_users


def view_claims(ops: Sequence[Operation]) -> dict[Operation, tuple[Operation, str]]:
    """For every matmul / gemm among ``ops``, the view ops of its operands ("prologue")
    and of its result ("epilogue", with the FRACTAL_NZ -> ND conversion that feeds the
    result's chain). A chain that is both (the head merge feeding the output projection)
    is the writing matmul's: claims of results override those of operands."""
    claims: dict[Operation, tuple[Operation, str]] = {}
    anchors = [op for op in ops if matrix_operands(op)]
    for side in ("prologue", "epilogue"):
        for anchor in anchors:
            chain = [op for op, found in view_ops_of(anchor).items() if found == side]
            if side == "prologue" and _converted_source(chain):
                continue
            for op in chain:
                claims[op] = (anchor, side)
            if side == "epilogue":
                result = anchor.results[0]
                user = next(iter(u.operation for u in result.uses), None)
                if isinstance(user, TransDataOp) and any(
                    claims.get(u.operation) == (anchor, side)
                    or _round_trip(user, u.operation)
                    or _read_as_view(user, u.operation, claims)
                    for u in user.output.uses
                ):
                    claims[user] = (anchor, side)
    return claims


def _read_as_view(
    to_nd: TransDataOp, user: Operation, claims: dict[Operation, tuple[Operation, str]]
) -> bool:
    """``to_nd`` (a product's result to ND) is the sole input of another matmul's operand
    view chain (T5's decoder cross-attention: Q's projection written in FRACTAL_NZ, then
    head-split for Q·Kᵀ): the product's fixpipe writes the ND tensor the view reads in GM;
    left to the reader, the conversion would be a vector kernel before it and the chain
    no view of the reader's inputs."""
    claim = claims.get(user)
    return (
        claim is not None
        and claim[1] == "prologue"
        and sole_user(to_nd.output) is user
        and _matmul_result(to_nd)
    )


def _round_trip(to_nd: TransDataOp, user: Operation) -> bool:
    """``to_nd`` (a product's result to ND) feeds a conversion back into FRACTAL_NZ: the ND
    tensor a flash attention reads (:func:`~tilegraph.passes.fuse_attention.
    attention_operands_to_nd`), which the product's fixpipe writes."""
    t = to_nd.input.type
    return (
        isinstance(user, TransDataOp)
        and isinstance(t, TensorType)
        and t.storage_format == Format.FRACTAL_NZ
        and user.output.type == t
    )


def _converted_source(chain: Sequence[Operation]) -> bool:
    """An operand's view chain reads the output of a layout conversion (a CNN's flatten of
    an NC1HWC0 -> NCHW TransData before its FC layer): the chain fuses with that conversion
    as before, into the kernel that writes the ND tensor the matmul then reads whole; a
    claim would pull the chain away from the conversion and leave both alone. Not a
    conversion out of NDC1HWC0 (a 3-D CNN's pooled vector): it stays a kernel of its own
    (``fuse-ops``), so the chain is the matmul's to claim."""
    members = set(chain)
    return any(
        isinstance(operand.owner, TransDataOp)
        and operand.owner not in members
        and not _from_planes(operand.owner)
        and not _matmul_result(operand.owner)
        for op in chain
        for operand in op.operands
    )


def _matmul_result(op: TransDataOp) -> bool:
    """A matmul's FRACTAL_NZ result converted to ND: the conversion is that matmul's
    (fixpipe), so the chain reading it (T5's and LLaMA's QKV split, a projection without a
    bias add after it) is the reading matmul's to claim."""
    t = op.input.type
    return (
        isinstance(t, TensorType)
        and t.storage_format == Format.FRACTAL_NZ
        and isinstance(op.input.owner, Operation)
        and bool(matrix_operands(op.input.owner))
    )


def _from_planes(op: TransDataOp) -> bool:
    t = op.input.type
    return isinstance(t, TensorType) and t.storage_format == Format.NDC1HWC0


def clone_splits_into_matmul_views(block: Block) -> int:
    """Give each matmul that reads outputs of a split as view operands, and each rotary op
    that reads one as its x's view (Phi-3's q and k), its own copy of the
    split (fuse-ops's module docstring), and of the view chain that makes the split's input
    (nn.MultiheadAttention's packed in_proj reshaped to ``[3, ...]``); the number of split
    copies added. A copy's outputs that other matmuls read stay unused: they are addresses,
    not data. When a copy would not be
    claimed as part of its matmul's views after all (a chain that :func:`view_claims`
    leaves alone), the copies are undone and the split stays one kernel."""
    added = 0
    for op in list(block.ops):
        users = split_view_users(op) if isinstance(op, SplitOp) else None
        if users is None:
            continue
        copies: list[Operation] = []
        prefix = _view_prefix(op)
        for user in list(dict.fromkeys(users))[1:]:
            copy = op.clone()
            Rewriter.insert_op(copy, InsertPoint.after(op))
            copies += _clone_prefix(prefix, copy)
            for old, new, reader in zip(op.results, copy.results, users, strict=True):
                new.name_hint = old.name_hint
                if reader is user:
                    old.replace_all_uses_with(new)
            copies.append(copy)
        if _all_claimed(block, [op, *copies], users):
            added += sum(isinstance(c, SplitOp) for c in copies)
            continue
        for copy in reversed(copies):  # each split copy before the chain it reads
            if isinstance(copy, SplitOp):
                for old, new in zip(op.results, copy.results, strict=True):
                    new.replace_all_uses_with(old)
            Rewriter.erase_op(copy)
    return added


def _all_claimed(block: Block, ops: Sequence[Operation], users: Sequence[Operation]) -> bool:
    """Every one of ``ops`` (a split, its copies and theirs of its prefix) is on a view
    chain its reader takes: a matmul's prologue (:func:`view_claims`) or a rotary op's x
    (:func:`~tilegraph.lowering.analysis.rotary_views.rotary_input_view`, which
    ``fuse-ops``' rotary claim puts into the rotary kernel)."""
    claims = view_claims(list(block.ops))
    rotated = {
        member
        for user in users
        if isinstance(user, ApplyRotaryOp)
        for member in getattr(rotary_input_view(user.x), "ops", ())
    }
    return all(claims.get(s, (None, ""))[1] == "prologue" or s in rotated for s in ops)


def _view_prefix(split: Operation) -> list[Operation]:
    """The view ops (each the sole user of the last) that make the split's input from a
    tensor, in program order: nn.MultiheadAttention's packed in_proj reshaped and
    transposed to ``[3, S, B, E]`` before the split into q, k and v."""
    prefix: list[Operation] = []
    value = split.operands[0]
    while isinstance(value.owner, VIEW_OPS) and sole_user(value) is not None:
        prefix.insert(0, value.owner)
        value = value.owner.operands[0]
    return prefix


def _clone_prefix(prefix: Sequence[Operation], copy: Operation) -> list[Operation]:
    """Give the split ``copy`` its own copy of the view chain ``prefix`` (so that each
    matmul's view chain reaches the tensor the chain starts from); the cloned ops."""
    clones: list[Operation] = []
    if not prefix:
        return clones
    value = prefix[0].operands[0]
    for original in prefix:
        clone = original.clone()
        clone.operands = [value, *clone.operands[1:]]
        Rewriter.insert_op(clone, InsertPoint.before(copy))
        clones.append(clone)
        value = clone.results[0]
    copy.operands = [value, *copy.operands[1:]]
    return clones


def clone_shared_views_into_matmuls(block: Block) -> int:
    """Give each matmul that reads a view op's result as a view operand (directly, through
    its ND -> FRACTAL_NZ conversion or through more view ops) its own copy of the view op,
    so that every chain feeds one matmul and is claimed as that matmul's prologue
    (:func:`view_claims`); the number of copies added. A grouped product's group split read
    by several products (SqueezeBERT's Q, K and V over one LayerNorm output: ``Transpose(
    Reshape(x, [B, S, g, C/g]), [0, 2, 1, 3])``) is then read in place by each instead of
    copied once by a kernel of its own. The block is walked from the end, so a chain's later
    ops are copied before its earlier ones. When the copies would not all be claimed, they
    are undone and the view stays one kernel."""
    added = 0
    for op in reversed(list(block.ops)):
        if not isinstance(op, VIEW_OPS):
            continue
        uses = list(op.results[0].uses)
        if len(uses) < 2 or not all(_reads_as_operand(u.operation, op) for u in uses):
            continue
        copies: list[Operation] = []
        for use in uses[1:]:
            copy = op.clone()
            copy.results[0].name_hint = op.results[0].name_hint
            Rewriter.insert_op(copy, InsertPoint.after(op))
            use.operation.operands[use.index] = copy.results[0]
            copies.append(copy)
        claims = view_claims(list(block.ops))
        if all(claims.get(v, (None, ""))[1] == "prologue" for v in (op, *copies)):
            added += len(copies)
            continue
        for copy in copies:
            copy.results[0].replace_all_uses_with(op.results[0])
            Rewriter.erase_op(copy)
    return added


def _reads_as_operand(user: Operation, view: Operation) -> bool:
    """``user`` reads ``view``'s result on the way to one matmul operand: the matmul
    itself, its operand's conversion into FRACTAL_NZ, or a view op whose chain reaches one
    (each op of it the sole reader of the last)."""
    if isinstance(user, VIEW_OPS):
        return matmul_reading(user.results[0]) is not None
    if isinstance(user, TransDataOp):
        reader = sole_user(user.output)
        return reader is not None and any(v is user.output for v in matrix_operands(reader))
    return any(v is view.results[0] for v in matrix_operands(user))
