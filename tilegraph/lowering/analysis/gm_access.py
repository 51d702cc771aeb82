"""Which GM buffers a kernel's tile ops read and write, by the buffer they view.

``split-cores`` shares each top-level nest of a kernel out over the cores on its own only
when no nest reads what another writes (:func:`passes_data_through_gm` is False), and the
fast executor merges the blocks of a launch with several shared loops into one call under
the same condition: then the blocks' order does not matter, on the chip or in a run that
takes them one at a time.
"""

from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.tile import TileOp
from tilegraph.dialects.tile.base import scope_of


def gm_root(value: SSAValue) -> SSAValue:
    """The GM buffer a memref value views: followed through the ops that make a view of
    their first memref operand (``tile.strided_view``) to a kernel argument or an
    allocation."""
    while isinstance(op := value.owner, Operation):
        sources = [v for v in op.operands if isinstance(v.type, MemRefType)]
        if not sources:
            break
        value = sources[0]
    return value


def gm_reads_and_writes(op: Operation) -> tuple[set[SSAValue], set[SSAValue]]:
    """The GM buffers (:func:`gm_root`) the tile ops in ``op`` read, and those they write."""
    reads: set[SSAValue] = set()
    writes: set[SSAValue] = set()
    for inner in op.walk():
        if not isinstance(inner, TileOp):
            continue
        written = inner.written()
        if written is not None and scope_of(written) == "GM":
            writes.add(gm_root(written))
        reads.update(gm_root(v) for v in inner.read() if scope_of(v) == "GM")
    return reads, writes


def passes_data_through_gm(op: Operation) -> bool:
    """Whether some tile op in ``op`` reads a GM buffer that some tile op in it writes (a
    reduction's workspace, an in-place update): then the order of its parts matters."""
    reads, writes = gm_reads_and_writes(op)
    return bool(reads & writes)
