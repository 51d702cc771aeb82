"""Scalar programs for ``fuse-ops``: elementwise ops on one-element tensors only.

The int8 path around a dynamically quantised convolution computes a few scalars from
DynamicQuantizeLinear's parameters at run time: the zero point cast to int32 (its bias
``Cast(z) · -Σw``), the product of the data and weight scales (the dequantising
multiply's). Each was a kernel launch of its own (2 µs of scheduling for a few cycles of
work). A vector kernel computes such a scalar as cheaply as it reads one from GM, so
``fuse-ops`` lets a scalar program join the group of the elementwise op that broadcasts
it (an anchor-less group, or an anchored group's epilogue), and first gives each
elementwise user of a shared scalar program its own copy (as it clones a conversion into
each cube user), so that each group computes it.

GE's counterpart: its UB fusion runs a convolution with its dequantisation and
elementwise tail as one kernel (``TbeConvFixPipeFusionPass``), and fixpipe takes a
run-time scalar quantisation parameter (docs/hardware.md, "The int8 path around the cube").
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import ConstantOp, FusionKind, GraphOp
from tilegraph.dialects.layout_type import TensorType

_ELEMENTWISE = frozenset({FusionKind.ELEMWISE, FusionKind.BROADCAST})


def _one_element(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and t.stored_as_one_element


def _elementwise(op: Operation) -> bool:
    return (
        isinstance(op, GraphOp)
        and not isinstance(op, ConstantOp)
        and op.FACTS.fusion in _ELEMENTWISE
    )


def is_scalar_program(op: Operation) -> bool:
    """An elementwise op whose operands and results are all one-element tensors."""
    return _elementwise(op) and all(_one_element(v) for v in (*op.operands, *op.results))


def clone_scalar_programs(block: Block) -> int:
    """Give each user of a scalar program read by several elementwise ops its own copy
    (inserted before the user); the number of copies added. Programs are visited last
    first, so that a chain of them is copied whole into each user."""
    added = 0
    for op in reversed(list(block.ops)):
        if not is_scalar_program(op):
            continue
        users = list(dict.fromkeys(use.operation for r in op.results for use in r.uses))
        if len(users) < 2 or not all(_elementwise(u) for u in users):
            continue
        for user in users[1:]:
            copy = op.clone()
            for new, old in zip(copy.results, op.results, strict=True):
                new.name_hint = old.name_hint
            Rewriter.insert_op(copy, InsertPoint.before(user))
            mapping: dict[SSAValue, SSAValue] = dict(zip(op.results, copy.results, strict=True))
            user.operands = [mapping.get(v, v) for v in user.operands]
            added += 1
    return added
