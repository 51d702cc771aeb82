"""The way out of a convolution's accumulator tile, shared by the 2-D (:mod:`.conv`) and
3-D (:mod:`.conv3d`) strategies: the bias (and int8 dequantisation scales) of a channel
tile in L1, the fixpipe of each output tile (bias, ReLU, cast) straight to GM, through UB
(no L0C -> GM path, or a vector chain on the tile), and on a decoupled preset the AIVs'
shares of that chain (:mod:`.sub_blocks`).

An int8 result (``graph.requant_conv2d``: fixpipe requantises) is NC1HWC0 with C0 = 32:
two accumulator fractals of 16 channels fill one C1 slice, so the output tile is
``[1, ceil(n1 / 2), rows, width, 32]`` and a tile's C1 offset is its fractal offset / 2
(the channel tiles start on even fractals: :func:`.conv_tiles.chosen_conv_tiles`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import CopyFlatOp, CopyOp, FixpipeOp
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL, Epilogue
from tilegraph.lowering.conversion.tiling.elementwise import store
from tilegraph.lowering.conversion.tiling.sub_blocks import emit_shares


@dataclass
class ConvOutput:
    """The buffers of a convolution kernel's way out (allocated by :func:`conv_output`)
    and the ops that use them. ``out_tile`` is an output tile ``[1, n1, rows, width, 16]``
    (int8: ``[1, ceil(n1 / 2), rows, width, 32]``)."""

    b: KernelBuilder
    epilogue: Epilogue
    out_tile: list[int]
    out_element: Attribute
    rows: int
    cols: int | None
    bias_arg: SSAValue | None
    scale_arg: SSAValue | None
    bias_l1: SSAValue | None
    deq_l1: SSAValue | None
    acc_ub: SSAValue | None
    shared: bool
    """The AIVs of a group share the chain's tile (a decoupled preset)."""
    requant: tuple[int, bool] | None = None
    """Fixpipe requantises to int8: (zero point, ReLU first)."""
    flat_bias: bool = False
    """The bias argument is the 1-D ``[C]`` vector (not NC1HWC0): loaded as a flat run."""

    def load_bias(self, out_c1: SSAValue) -> None:
        """The bias and scales of the channel tile starting at C1 fractal ``out_c1``."""
        b = self.b
        zero = b.index(0)
        if self.flat_bias and self.bias_arg is not None and self.bias_l1 is not None:
            # channels past C are cut and the lanes filled with zeros (copy_flat's load)
            first = b.affine(out_c1, FRACTAL)
            count = prod(memref_shape(self.bias_l1.type))  # [1, n1, 1, 1, 16]
            b.add(CopyFlatOp(self.bias_arg, first, self.bias_l1, zero, count))
        elif self.bias_arg is not None and self.bias_l1 is not None:
            b.add(CopyOp(self.bias_arg, [zero, out_c1, zero, zero, zero], self.bias_l1, [zero] * 5))
        if self.scale_arg is not None and self.deq_l1 is not None:
            b.add(CopyOp(self.scale_arg, [zero, out_c1, zero, zero, zero], self.deq_l1, [zero] * 5))

    def write(self, c_l0: SSAValue, out_arg: SSAValue, offsets: Sequence[SSAValue]) -> None:
        """The accumulator ``c_l0`` out to the NC1HWC0 ``out_arg`` at ``offsets`` (the
        tile's [n, c1, h, w, 0]), through the epilogue."""
        b, epilogue, acc_ub = self.b, self.epilogue, self.acc_ub
        zero = b.index(0)
        chain = epilogue.chain
        offsets = list(offsets)
        if self.requant is not None:
            assert chain is None  # nothing runs on an int8 result in the kernel
            # two fractals of 16 channels a C1 slice of 32 lanes
            pair = b.add(arith.FloorDivSIOp(offsets[1], b.index(2))).results[0]
            offsets[1] = pair
        zero_point, requant_relu = self.requant or (0, False)
        if chain is None:
            # Straight to GM, or (no L0C -> GM) into the UB tile that MTE3 then stores.
            b.add(
                FixpipeOp(
                    c_l0,
                    out_arg if acc_ub is None else acc_ub,
                    offsets if acc_ub is None else [zero] * 5,
                    self.bias_l1,
                    deq=self.deq_l1,
                    layout="nc1hwc0",
                    relu=epilogue.relu or requant_relu,
                    rows=self.rows,
                    cols=self.cols,
                    zero_point=zero_point if self.requant is not None else None,
                )  # fmt: skip
            )
            if acc_ub is not None:
                store(b, acc_ub, out_arg, offsets)
            return
        assert acc_ub is not None
        b.add(
            FixpipeOp(
                c_l0,
                acc_ub,
                [zero] * 5,
                self.bias_l1,
                deq=self.deq_l1,
                layout="nc1hwc0",
                rows=self.rows,
            )  # fmt: skip
        )
        anchor, written = epilogue.anchor_value, epilogue.out_value
        if not self.shared:
            chain.epilogue(b, {anchor: acc_ub}, offsets, out_arg, written)
            return

        def share_epilogue(tile: SSAValue, shape: list[int], at: list[SSAValue]) -> None:
            assert chain is not None
            chain.allocate(b, shape, given=[anchor])
            chain.epilogue(b, {anchor: tile}, at, out_arg, written)

        emit_shares(b, acc_ub, self.out_tile, self.out_element, offsets, share_epilogue)


def conv_output(
    b: KernelBuilder,
    epilogue: Epilogue,
    out_tile: list[int],
    out_element: Attribute,
    *,
    rows: int,
    cols: int | None,
    bias: tuple[SSAValue, Attribute] | None,
    scale_arg: SSAValue | None,
    requant: tuple[int, bool] | None = None,
    flat_bias: bool = False,
) -> ConvOutput:
    """Allocate the way out of ``out_tile``-shaped output tiles: L1 room for the bias
    (``bias``: its kernel argument and element type) and the scales of ``n1`` channel
    fractals, the UB tile when the output goes through UB, the chain's tiles. ``requant``:
    fixpipe requantises to int8 with (zero point, ReLU first); the scales are then float32
    multipliers and ``out_tile`` is given in accumulator fractals (``[1, n1, rows, width,
    16]``), the int8 tile it becomes is ``[1, ceil(n1 / 2), rows, width, 32]``."""
    n1 = out_tile[1]
    bias_l1 = deq_l1 = None
    if bias is not None:
        bias_l1 = b.buffer([1, n1, 1, 1, FRACTAL], bias[1], "L1", "bias_l1")
    if scale_arg is not None:
        scale_element = f32 if requant is not None else out_element
        deq_l1 = b.buffer([1, n1, 1, 1, FRACTAL], scale_element, "L1", "deq_l1")
    if requant is not None:
        out_tile = [1, -(-n1 // 2), *out_tile[2:4], 2 * FRACTAL]
    acc_ub = None
    chain = epilogue.chain
    shared = chain is not None and b.hw.aiv_per_aic > 1  # the AIVs of a group share a tile
    if chain is not None:
        acc_ub = b.buffer(out_tile, out_element, "UB", "acc_ub")
        if not shared:
            chain.allocate(b, out_tile, given=[epilogue.anchor_value])
    elif epilogue.through_ub(b.hw):  # no L0C -> GM (310P): fixpipe to UB, MTE3 to GM
        acc_ub = b.buffer(out_tile, out_element, "UB", "out_ub")
    return ConvOutput(
        b, epilogue, out_tile, out_element, rows, cols,
        None if bias is None else bias[0], scale_arg, bias_l1, deq_l1, acc_ub, shared,
        requant, flat_bias,
    )  # fmt: skip
