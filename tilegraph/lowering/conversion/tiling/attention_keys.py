"""The key mask of a flash kernel's ragged last K block (:mod:`.attention`): its lanes past
``Sk`` set to -inf before the row's max, so that no padding lane enters a row's max, sum
or P·V.

The mask is made each step by loading the first element of each key row of K with -inf
as the padding (``tile.copy`` pads lanes past the tensor) and comparing it with -inf: the
keys that exist compare greater. K's ``nd2nz`` pads its rows past ``Sk`` with zeros, and V's
too, so P is 0 there and V's rows zeros.
"""

from __future__ import annotations

from math import inf

from xdsl.dialects.builtin import f32, i1
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import CopyOp, memref_shape
from tilegraph.dialects.tile.base import element_bytes, memref_strides
from tilegraph.dialects.tile.workspace import gm_base
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.analysis.operand_views import StridedView
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.matmul import MatmulOperand
from tilegraph.lowering.conversion.tiling.matmul_views import view_of
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter


def key_mask_ub_bytes(hw: HardwareModel, bk: int, element: Attribute) -> int:
    """UB bytes of :class:`KeyMask`'s tiles for ``bk`` keys of K's ``element``: the probe,
    -inf in fp32 (and in K's type when it is narrower), the i1 mask."""
    narrow = element != f32
    own = [bk * element_bytes(element), bk * 4, bk // 4]
    if narrow:  # -inf in K's type for the probe's comparison
        own.append(bk * element_bytes(element))
    return sum(aligned_bytes(hw, "UB", n) for n in own)


class KeyMask:
    """The key mask's view of K, its UB tiles (module docstring) and its steps."""

    def __init__(
        self,
        b: KernelBuilder,
        e: VectorEmitter,
        k: MatmulOperand,
        batch_rank: int,
        sk: int,
        bk: int,
        element: Attribute,
    ):
        self.b, self.e = b, e
        keys = memref_strides(k.arg)[-2 if k.transposed else -1]
        shape = (*([1] * (batch_rank + 1)), sk)
        self.view = view_of(b, gm_base(k.arg), StridedView(shape, (keys,) * len(shape)))
        self.view.name_hint = "keys_view"
        row = [*([1] * (batch_rank + 1)), bk]
        self.probe = b.buffer(row, element, "UB", "key_probe_ub")
        self.low = b.buffer(row, f32, "UB", "neg_inf_ub")
        narrow = element != f32
        self.low_k = b.buffer(row, element, "UB", "key_neg_inf_ub") if narrow else self.low
        self.mask = b.buffer(row, i1, "UB", "key_mask_ub")

    def start(self) -> None:
        """Per Q block: the -inf rows."""
        self.e.fill(self.low, -inf)
        if self.low_k is not self.low:
            self.e.fill(self.low_k, -inf)

    def apply(self, x: SSAValue, j: SSAValue) -> None:
        """Lanes of ``x`` past the last key to -inf (the block at key ``j``)."""
        zero = self.b.index(0)
        at = [zero] * (len(memref_shape(self.view)) - 1)
        probe = self.probe
        self.b.add(CopyOp(self.view, [*at, j], probe, [zero] * len(memref_shape(probe)), -inf))
        self.e.compare("gt", probe, self.low_k, self.mask)
        self.e.select(self.mask, x, self.low, x)
