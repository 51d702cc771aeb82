"""What lowering records on the functions and loops it writes, and how to read it back.

``lower-graph-to-kernels`` marks each kernel with the unit that runs it and keeps the graph
function's tensor signature on the host function; ``tile-kernels`` adds the tile count, the
graph ops a tiled kernel computes and the ``tile.parallel`` mark of the loops whose
iterations are independent. The transforms, the executors and the cycle model read these
names; they are defined here, below all of them, so that none has to import the pass that
writes them.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation

KERNEL_ATTR = "tile.kernel"
"""Function attribute naming a kernel's unit: "cube", "vector" or "host"."""
HOST_REASON_ATTR = "tile.host_reason"
"""Set by ``lower-graph-to-kernels`` on a host kernel: why no tiling strategy runs it."""
SIGNATURE_ATTR = "tile.signature"
"""Set by ``lower-graph-to-kernels`` on the host function: the graph function's tensor
signature, so that executors can lay inputs out and read outputs back in origin layout."""
BLOCKS_ATTR = "tile.blocks"
"""Set by ``tile-kernels`` on a kernel its strategy shared over the cores itself (its
``tile.block_idx`` selects each block's work): the blocks its launches run."""
TILES_ATTR = "tile.tiles"
"""Set by ``tile-kernels``: how many tiles the kernel's loops run (for reports)."""
OPS_ATTR = "tile.ops"
"""Set by ``tile-kernels``: the graph ops a tiled kernel computes (its macro body is gone)."""
MIX_ATTR = "tile.mix"
"""Set by ``tile-kernels`` on the two parts of a mix kernel (a decoupled preset's cube
kernel with a vector epilogue): "aic" or "aiv"; ``tile.kernel`` says "cube" / "vector"."""
LOOP_ID_ATTR = "tile.loop"
"""Set by ``tile-kernels`` on the loops of a mix kernel's parts: the loop of the unsplit
kernel each comes from, so that ``split-cores`` shares out the same loop in both parts."""
PARALLEL_ATTR = "tile.parallel"
"""Set by ``tile-kernels`` on an ``scf.for`` whose iterations write disjoint data (any order,
any core): what ``split-cores`` shares out and the fast executor batches."""
VARYING_TRIPS_ATTR = "tile.varying_trips"
"""Unit attribute of an ``scf.for`` whose trip count changes from one run to the next (its
bounds depend on an outer induction variable: a 3-D convolution's depth taps that read
data); ``inject-sync`` proves the flags it drops on a full walk of such a kernel, since a
short walk need not meet every trip count."""
KERNEL_SLOTS_ATTR = "tile.multi_buffer"
"""Kernel attribute overriding ``multi-buffer``'s ``slots`` for that kernel (1: off)."""


def mix_part(fn: func.FuncOp) -> str | None:
    """ "aic" or "aiv" for a part of a mix kernel, else None."""
    attr = fn.attributes.get(MIX_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def kernel_unit(fn: func.FuncOp) -> str | None:
    """The unit a kernel runs on ("cube", "vector", "host"); None for a non-kernel."""
    attr = fn.attributes.get(KERNEL_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def host_ops(module: ModuleOp) -> Iterator[Operation]:
    """Every op of the module's functions that are no kernel — the host code, where the
    launches are — without walking the kernels' tiled bodies (thousands of ops each: a
    walk of the whole module per kernel made tiling a model quadratic in its kernels)."""
    for fn in module.ops:
        if isinstance(fn, func.FuncOp) and kernel_unit(fn) is None:
            yield from fn.walk()
