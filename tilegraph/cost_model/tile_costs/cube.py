"""Costs of the cube path: the L1 -> L0A / L0B loads (``load2d``, img2col's ``load3d``), the
``mmad`` and the fixpipe out of L0C (CANN's two stages). A ragged last block's instances
are charged by :mod:`tilegraph.cost_model.cycles.ragged` through the ``*_cycles``
functions here.
"""

from __future__ import annotations

from math import ceil, prod

from tilegraph.cost_model.tile_costs.dma import dma_cycles, dma_head_cycles
from tilegraph.cost_model.tile_costs.registry import tile_cost
from tilegraph.dialects.tile.base import (
    contiguous_run,
    element_bytes,
    memref_element,
    memref_shape,
    memref_strides,
    scope_of,
)
from tilegraph.dialects.tile.cube import MmadOp
from tilegraph.dialects.tile.dma import int_values
from tilegraph.dialects.tile.fixpipe import FixpipeOp
from tilegraph.dialects.tile.fractal import Load2dOp, Load3dOp
from tilegraph.hardware import HardwareModel


@tile_cost(Load2dOp)
def load2d(op: Load2dOp, hw: HardwareModel) -> int:
    """The whole destination (a ragged load's instances: :func:`load2d_cycles`)."""
    return load2d_cycles(op, hw, op.ragged_fractals())


def load2d_cycles(
    op: Load2dOp, hw: HardwareModel, fractals: int, k_fractals: int | None = None
) -> int:
    """A ``load2d`` of ``fractals`` of its destination's fractals along its ragged axis
    and ``k_fractals`` along K (None: all; fewer on a matmul's ragged last block or K
    step, :class:`Load2dOp`'s ``valid`` / ``k``)."""
    return dma_cycles(hw, f"L1->{scope_of(op.dst)}", op.moved_bytes(fractals, k_fractals))


def img2col_bytes_per_cycle(out_width: int, stride_w: int) -> float:
    """L1 -> L0A rate of img2col (``load3d``): CANN's cube tiling (``GetLoad3dThroughput``,
    docs/hardware.md) gives ``512 / (n + 2)`` B/cycle at width stride 1, ``512 / (2·stride
    + n)`` at strides 2, 4 and 8, and 32 at any other, where ``n`` is how many times the
    16 output pixels of one fractal row block change output row: ``16 // Wo``, or
    ``15 // Wo`` when ``Wo`` divides 16 (the last change falls on the fractal's end). The
    kernel's size does not enter: each fractal row is one pixel's C0 channels wherever the
    window sits."""
    changes = (15 if 16 % out_width == 0 else 16) // out_width
    if stride_w == 1:
        return 512.0 / (changes + 2)
    if stride_w in (2, 4, 8):
        return 512.0 / (2 * stride_w + changes)
    return 32.0


@tile_cost(Load3dOp)
def load3d(op: Load3dOp, hw: HardwareModel) -> int:
    _, stride_w = int_values(op.strides)
    rate = img2col_bytes_per_cycle(op.out_width.value.data, stride_w)
    return hw.load3d_start_cycles + ceil(op.moved_bytes() / rate)


FixValid = tuple[int, int] | None
"""What a ragged fixpipe instance moves: (rows, 16-column fractals) of its accumulator;
None: all of it."""


def fixpipe_elements(op: FixpipeOp, valid: FixValid = None) -> int:
    """Accumulator elements FIX moves for ``op``: all of them, or a ragged instance's
    ``valid`` (rows, column fractals): its rows exactly, each in whole 16-column (C0)
    blocks — pypto's cycle-accurate A2/A3 model (``CalcFixL0cOut``) moves ``mSize`` rows
    of ``ceil(nSize / 16)`` C0 blocks each (docs/hardware.md, "What a ragged charge
    rounds to")."""
    if valid is None:
        return prod(memref_shape(op.src))
    rows, col_fractals = valid
    return rows * col_fractals * 16


def fixpipe_read_bytes(op: FixpipeOp, valid: FixValid = None) -> int:
    """Accumulator bytes FIX reads out of L0C (fp32 or int32; :func:`fixpipe_elements`)."""
    if valid is None:
        return op.moved_bytes()
    return fixpipe_elements(op, valid) * element_bytes(memref_element(op.src))


def fixpipe_out_bytes(op: FixpipeOp, valid: FixValid = None) -> int:
    """Bytes FIX writes for ``op`` (all of it, or a ragged instance's ``valid`` rows and
    column fractals: :func:`fixpipe_elements`) in the destination's element type."""
    return fixpipe_elements(op, valid) * element_bytes(memref_element(op.dst))


def fixpipe_gm_burst_bytes(op: FixpipeOp, valid: FixValid = None) -> int | None:
    """The GM runs FIX writes ``op``'s part in (:meth:`FixpipeOp.gm_burst_bytes`); a
    ragged ``nd`` instance's window is its ``valid`` rows of whole column fractals."""
    if valid is None or scope_of(op.dst) != "GM" or op.layout.data != "nd":
        fractals = None if valid is None else (-(-valid[0] // 16), valid[1])
        return op.gm_burst_bytes(fractals)
    rows, col_fractals = valid
    eb, dst = element_bytes(memref_element(op.dst)), op.dst
    return contiguous_run((rows, col_fractals * 16), memref_shape(dst), eb, memref_strides(dst))


@tile_cost(FixpipeOp)
def fixpipe(op: FixpipeOp, hw: HardwareModel) -> int:
    """The whole accumulator (a ragged block's instances: :func:`fixpipe_cycles`)."""
    return fixpipe_cycles(op, hw, None)


def fixpipe_cycles(op: FixpipeOp, hw: HardwareModel, valid: FixValid) -> int:
    """CANN's GEMM tiling cycle model (``GemmCycleModelL0c2out``, docs/hardware.md): two
    stages added, reading L0C (accumulator bytes) then writing out (output bytes; a GM
    destination in runs that are not 512 B multiples at the misaligned share), after the
    head of a DMA (into GM the write latency follows, :func:`gm_latency_cycles`). The same
    figures serve L0C -> L1, and L0C -> UB on a coupled core without a figure of its own
    (:attr:`HardwareModel.l0c_to_ub_bytes_per_cycle`: one stage). ``valid``: a ragged
    instance's rows and column fractals (:func:`fixpipe_elements`)."""
    dst = scope_of(op.dst)
    read = fixpipe_read_bytes(op, valid)
    if dst == "UB" and hw.l0c_to_ub_bytes_per_cycle is not None:
        return hw.dma_issue_cycles + ceil(read / hw.l0c_to_ub_bytes_per_cycle)
    write_rate = hw.fix_write_bytes_per_cycle
    if str(memref_element(op.dst)) == "i8":  # requantised: as many elements as fp16
        write_rate = hw.fix_int8_write_bytes_per_cycle
    if dst == "GM":
        write_rate *= hw.gm_efficiency(fixpipe_gm_burst_bytes(op, valid))
    return (
        dma_head_cycles(hw, f"L0C->{dst}")
        + ceil(read / hw.fix_l0c_read_bytes_per_cycle)
        + ceil(fixpipe_out_bytes(op, valid) / write_rate)
    )


@tile_cost(MmadOp)
def mmad(op: MmadOp, hw: HardwareModel) -> int:
    """The whole buffers' fractals (a ragged ``mmad``'s instances: :func:`mmad_cycles`)."""
    return mmad_cycles(op, hw, *op.valid_fractals())


def mmad_cycles(
    op: MmadOp, hw: HardwareModel, m_fractals: int, n_fractals: int, k_fractals: int | None = None
) -> int:
    """An ``mmad`` multiplying ``m_fractals`` x ``n_fractals`` of its fractals over
    ``k_fractals`` of its K fractals (fewer than its buffers hold on a ragged last block
    or K step, :meth:`MmadOp.valid_fractals`, :meth:`MmadOp.k_fractals`; None: all): the
    head, then one cycle per 16 x K0 x 16 fractal product (MACs per cycle = 16 x 16 x K0)."""
    k = op.dims()[1] if k_fractals is None else k_fractals * memref_shape(op.a)[-1]
    dtype = {"f16": "float16", "bf16": "bfloat16", "i8": "int8"}.get(
        str(memref_element(op.a)), "float32"
    )
    macs = hw.cube_macs_per_cycle.get(dtype, 1024)
    k0 = macs // 256
    return hw.mmad_head_cycles + m_fractals * ceil(k / k0) * n_fractals
