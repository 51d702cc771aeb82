"""How ``fuse-ops`` (:mod:`tilegraph.passes.fuse_ops`) rewrites a group: one ``graph.fused``
op (:mod:`tilegraph.dialects.graph.fused`) at the root's place, whose body holds clones of
the members in the order given and yields the root's results (first, those of the other
members an op outside reads: a group of several outputs); the members are erased and
their uses outside read the fused op's outputs.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import FusedOp, YieldOp
from tilegraph.dialects.graph.fused import new_body
from tilegraph.dialects.graph.provenance import locate, location_of
from tilegraph.passes.fuse_legality import Group, leaving_values


def kernel_name(members: Sequence[Operation], index: int) -> str:
    """``fused_conv2d_add_relu_3``: the member kinds in order (repeats collapsed, at most
    five), then the group's index in its function."""
    names: list[str] = []
    for op in members:
        short = op.name.split(".", 1)[-1]
        if not names or names[-1] != short:
            names.append(short)
    if len(names) > 5:
        names = [*names[:4], "etc"]
    return "_".join(["fused", *names, str(index)])


def materialize(group: Group, members: Sequence[Operation], index: int) -> FusedOp:
    """Replace the group's ops by one ``graph.fused`` op at the root's place."""
    member_set = set(members)
    inputs: list[SSAValue] = []
    for op in members:
        for v in op.operands:
            if v.owner not in member_set and v not in inputs:
                inputs.append(v)
    body, block = new_body([v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = {}
    for v, arg in zip(inputs, block.args, strict=True):
        arg.name_hint = v.name_hint
        mapping[v] = arg
    for op in members:
        block.add_op(op.clone(value_mapper=mapping))
    root = group.root
    leaving = leaving_values(root, list(members))
    block.add_op(YieldOp(*(mapping[r] for r in leaving)))
    fused = FusedOp(
        kernel_name(members, index), group.kind(), inputs, [r.type for r in leaving], body
    )
    locate([fused], location_of(members))  # the fused op and its yield
    Rewriter.insert_op(fused, InsertPoint.before(root))
    for old, new in zip(leaving, fused.outputs, strict=True):
        new.name_hint = old.name_hint
        old.replace_all_uses_with(new)
    for op in reversed(members):
        Rewriter.erase_op(op)
    return fused
