"""What ``fuse-ops`` rewrites in a block before its groups grow (:data:`PREPARATIONS`).

Each step returns how many ops it changed, counted as its statistic: FRACTAL_NZ
elementwise ops on matmul results to ND (``epilogues-to-nd``,
:mod:`tilegraph.passes.fuse_epilogue_formats`), a conversion shared by several cube ops
cloned into each (``conversions-cloned``, below), a split read as views by several matmuls
cloned into each (``splits-cloned``, :mod:`tilegraph.passes.fuse_views`), a view read by
several matmuls as (part of) their operands cloned into each (``views-cloned``, the same
module), a scalar program
cloned into each user (``scalar-programs-cloned``, :mod:`tilegraph.passes.fuse_scalars`).
The order matters: the conversions to clone are those left after the epilogues moved.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.data_movement import ConcatOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.passes.fuse_epilogue_formats import epilogues_to_nd
from tilegraph.passes.fuse_scalars import clone_scalar_programs
from tilegraph.passes.fuse_views import (
    clone_shared_views_into_matmuls,
    clone_splits_into_matmul_views,
)


def runs_on_cube(op: Operation) -> bool:
    return isinstance(op, GraphOp) and op.FACTS.heavy


def users_of(op: Operation) -> list[Operation]:
    """The ops reading any result of ``op`` (once per use)."""
    return [use.operation for r in op.results for use in r.uses]


def clone_conversions_into_cube_users(block: Block) -> int:
    """Give each user of a shared conversion its own copy when every user takes it into
    its kernel: a cube op, or (a conversion into NC1HWC0) a concat, whose region loads its
    input through the conversion (``fuse-ops``' module docstring); the number of copies
    added."""
    added = 0
    for op in list(block.ops):
        if not isinstance(op, TransDataOp):
            continue
        users = list(dict.fromkeys(users_of(op)))
        into_5hd = (
            isinstance(t := op.output.type, TensorType) and t.storage_format == Format.NC1HWC0
        )
        if len(users) < 2 or not all(
            runs_on_cube(u) or (into_5hd and isinstance(u, ConcatOp)) for u in users
        ):
            continue
        for user in users[1:]:
            copy = op.clone()
            copy.output.name_hint = op.output.name_hint
            Rewriter.insert_op(copy, InsertPoint.before(user))
            user.operands = [copy.output if v is op.output else v for v in user.operands]
            added += 1
    return added


PREPARATIONS: tuple[tuple[str, Callable[[Block], int]], ...] = (
    ("epilogues-to-nd", epilogues_to_nd),
    ("conversions-cloned", clone_conversions_into_cube_users),
    ("splits-cloned", clone_splits_into_matmul_views),
    ("views-cloned", clone_shared_views_into_matmuls),
    ("scalar-programs-cloned", clone_scalar_programs),
)
"""What rewrites a block before its groups grow, in order, and the statistic of each."""
