"""Cycles each ``tile`` op occupies its pipe on one core of a :class:`HardwareModel`.

A cost function ``cost(op, hw) -> int`` is registered for op classes with
:func:`tile_cost`, xDSL ``@impl`` style; :func:`cost_of` finds it through the op's class
hierarchy (the most derived registered class wins). ``TileOp`` itself is registered with
:func:`one_cycle`: the cost of the ops that are bookkeeping on the scalar unit or on the
host (allocation, constants, views, flags, barriers, block queries, launches) — an op
that moves or computes data registers its own (tests/test_tile_registries.py lists
the ops allowed the default).

The formulas follow docs/tile-level.md (the presets' rates in :mod:`tilegraph.hardware`);
tests/runtime/test_cycle_model.py holds them to the figures of docs/hardware.md.
"""

from __future__ import annotations

from collections.abc import Callable
from math import ceil, log, log2, prod
from typing import Any

from xdsl.dialects.builtin import IntegerType

from tilegraph.dialects.tile.barrier import SyncAllOp
from tilegraph.dialects.tile.base import (
    TileOp,
    buffer_bytes,
    element_bytes,
    memref_element,
    memref_shape,
    scope_of,
)
from tilegraph.dialects.tile.cross_core import CrossCoreOp
from tilegraph.dialects.tile.cube import MmadOp
from tilegraph.dialects.tile.dma import Load5hdOp, PathCopyOp, Store5hdOp, int_values
from tilegraph.dialects.tile.fixpipe import FixpipeOp
from tilegraph.dialects.tile.fractal import Load2dOp, Load3dOp, Nd2NzOp, Nz2NdOp, NzWindowFacts
from tilegraph.dialects.tile.registry import OpClassRegistry
from tilegraph.dialects.tile.scalar import GatherRowsOp, GetValueOp, ScatterRowsOp
from tilegraph.dialects.tile.vector import CastOp, VectorOp
from tilegraph.dialects.tile.vector_axis import (
    ArangeOp,
    ArgOp,
    OneHotOp,
    PutOp,
    ScanOp,
    TakeOp,
    TapsOp,
    TopKOp,
)
from tilegraph.dialects.tile.vector_layout import PickOp, PoolOp, ReduceOp
from tilegraph.hardware import HardwareModel

CostFunction = Callable[[Any, HardwareModel], int]
"""Cycles of one op on one core of ``hw``."""

_COSTS: OpClassRegistry[CostFunction] = OpClassRegistry("a cost")

tile_cost = _COSTS.register
"""``@tile_cost(*op_classes)``: register the decorated function as the cost of
``op_classes`` (and of their subclasses that have none of their own)."""


def cost_function(op_class: type[TileOp]) -> CostFunction:
    """The cost registered for ``op_class`` or its nearest base (at worst :func:`one_cycle`)."""
    found = _COSTS.lookup(op_class)
    if found is None:
        raise TypeError(f"{op_class.__name__} is not a tile op")
    return found


def cost_of(op: TileOp, hw: HardwareModel) -> int:
    """Cycles ``op`` occupies its pipe on one core of ``hw``."""
    return cost_function(type(op))(op, hw)


@tile_cost(TileOp)
def one_cycle(op: TileOp, hw: HardwareModel) -> int:
    """The default: one cycle (see the module docstring)."""
    return 1


@tile_cost(CrossCoreOp)
def cross_core_flag(op: CrossCoreOp, hw: HardwareModel) -> int:
    """Issuing a cross-core set or wait: one cycle on its pipe (the wait's stall and the
    flag's trip between the cores are the scheduling's, not the op's)."""
    return 1


@tile_cost(SyncAllOp)
def sync_all(op: SyncAllOp, hw: HardwareModel) -> int:
    """The all-core barrier once every block has arrived (the cycle model runs one block of
    a launch whose blocks do equal work, so none waits longer for a slower one): a hard
    barrier is two trips of a message between cores — the arrival and the release, each
    :attr:`~HardwareModel.cross_core_flag_cycles` — a soft one (310P, through a GM
    workspace) adds a GM write of the core's flag and a GM read of the others'. An
    assumption built on the flag's: no barrier latency is published (docs/hardware.md)."""
    trips = 2 * hw.cross_core_flag_cycles
    if op.mode.data == "hard":
        return trips
    return trips + hw.gm_write_latency_cycles + hw.gm_read_latency_cycles


# ---- the scalar unit ------------------------------------------------------------------

SCALAR_READ_CYCLES = 10
"""One ``tile.get_value``: a load of one UB element into a scalar register and the index
arithmetic around it (the wrap of a negative index). Not a figure of our sources — the
Ascend C guide only warns that ``GetValue`` is slow next to vector work; a model
assumption, of the order of a scalar load through the scalar unit's data cache."""


@tile_cost(GetValueOp)
def get_value(op: GetValueOp, hw: HardwareModel) -> int:
    """:data:`SCALAR_READ_CYCLES`; a read of GM waits for the GM round trip of a small
    transfer too (:attr:`~HardwareModel.gm_read_latency_cycles`: the scalar unit's load
    stalls until its data is back, where a DMA's issue does not)."""
    if scope_of(op.buffer) == "GM":
        return SCALAR_READ_CYCLES + hw.gm_read_latency_cycles
    return SCALAR_READ_CYCLES


@tile_cost(ScatterRowsOp)
def scatter_rows(op: ScatterRowsOp, hw: HardwareModel) -> int:
    """Per tuple its ``K`` components read (:data:`SCALAR_READ_CYCLES` each, with the wrap
    and the block test); per element written the update read and the element stored, the
    destination read too with a reduction — the scalar loop ``tile.vput`` runs on a core
    without a vector scatter. Which tuples fall in the block is known only when it runs:
    the block's share of the output's rows is charged (tuples spread evenly, an
    assumption; exact for a mask's ``index_put``, whose tuples name each row once)."""
    tuples, width = memref_shape(op.indices)
    block, inner = memref_shape(op.dst)
    # ScatterElements' form: every element a tuple of one component, a row of one element
    lines, length = (tuples * width, 1) if op.per_element else (tuples, inner)
    written = -(-lines * min(block, prod(op.depth_sizes)) // prod(op.depth_sizes))
    per_move = (2 if op.reduce is not None else 1) * SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES
    return tuples * width * SCALAR_READ_CYCLES + written * length * per_move


@tile_cost(GatherRowsOp)
def gather_rows(op: GatherRowsOp, hw: HardwareModel) -> int:
    """Per element its index read (:data:`SCALAR_READ_CYCLES`, with the wrap and the block
    test); per element in the block the block's element read and the result's written, as
    :func:`scatter_rows` charges a move. Which indices fall in the block is known only when
    it runs: the block's share of the axis is charged (indices spread evenly, an
    assumption)."""
    elements = prod(memref_shape(op.indices))
    block = memref_shape(op.src)[0]
    taken = -(-elements * min(block, op.bound_value) // op.bound_value)
    return elements * SCALAR_READ_CYCLES + taken * (SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)


# ---- data movement -------------------------------------------------------------------


def dma_head_cycles(hw: HardwareModel, path: str) -> int:
    """Cycles one DMA on ``path`` ("GM->UB", "L1->L0A", ...) holds its pipe before its
    bytes flow: the MTE1 start of an L1 -> L0A / L0B load, else the DMA issue cycles. The GM
    round trip is not part of it (:func:`gm_latency_cycles`)."""
    src, _, dst = path.partition("->")
    if src == "L1" and dst in ("L0A", "L0B"):
        return hw.mte1_start_cycles
    return hw.dma_issue_cycles


def gm_latency_cycles(hw: HardwareModel, path: str, nbytes: int) -> int:
    """The GM round trip of one DMA of ``nbytes`` on ``path``: how long after its pipe is
    done with it the data has arrived (a read) or landed (a write) —
    :attr:`~HardwareModel.gm_read_latency_cycles` / ``gm_write_latency_cycles`` for a
    transfer from / to GM below :attr:`~HardwareModel.gm_latency_below_bytes`, else 0.

    A latency, not pipe time: the next DMA on the pipe issues without waiting for it, and
    what waits for the data (a consumer ordered by data or by a flag, a barrier) waits for
    it (the cycle model, :mod:`tilegraph.cost_model.cycles.core`). Charged as pipe time, it
    would cap a blocked GEMM's cube utilisation far below the published ~90%
    (docs/cycle-model.md)."""
    src, _, dst = path.partition("->")
    if "GM" not in (src, dst):
        return 0
    below = hw.gm_latency_below_bytes
    if below is not None and nbytes >= below:
        return 0
    return hw.gm_read_latency_cycles if src == "GM" else hw.gm_write_latency_cycles


def dma_cycles(hw: HardwareModel, path: str, nbytes: int, burst: int | None = None) -> int:
    """Cycles of one DMA of ``nbytes`` on ``path``: its head (:func:`dma_head_cycles`) and
    its bytes at the path rate; a GM side made of ``burst``-byte runs that are not 512 B
    multiples moves at :attr:`HardwareModel.gm_misaligned_efficiency`."""
    rate = hw.dma_bytes_per_cycle.get(path, 64.0)
    if "GM" in path:
        rate *= hw.gm_efficiency(burst)
    return dma_head_cycles(hw, path) + ceil(nbytes / rate)


@tile_cost(PathCopyOp)
def path_copy(op: PathCopyOp, hw: HardwareModel) -> int:
    a, b = op.path()
    return dma_cycles(hw, f"{a}->{b}", op.moved_bytes(), op.gm_burst_bytes())


@tile_cost(Load5hdOp)
def load_5hd(op: Load5hdOp, hw: HardwareModel) -> int:
    # Channel-strided reads: at most C0 contiguous elements per burst.
    return dma_cycles(hw, f"GM->{scope_of(op.dst)}", 2 * op.moved_bytes())


@tile_cost(Store5hdOp)
def store_5hd(op: Store5hdOp, hw: HardwareModel) -> int:
    return dma_cycles(hw, f"{scope_of(op.src)}->GM", 2 * op.moved_bytes())


@tile_cost(Nd2NzOp)
def nd2nz(op: Nd2NzOp, hw: HardwareModel) -> int:
    """The whole destination (a ragged window's instances: :func:`nd2nz_cycles`)."""
    return nd2nz_cycles(op.window_facts(), hw, None)


def nd2nz_cycles(window: NzWindowFacts, hw: HardwareModel, valid: tuple[int, int] | None) -> int:
    """An ``nd2nz`` (its :meth:`~Nd2NzOp.window_facts`) moving ``valid`` (rows, column
    fractals) of its destination (all of it, None, but on a matmul's ragged last block:
    :class:`Nd2NzOp`'s rows / cols), in GM runs as long as those columns."""
    path = f"GM->{window.dst_scope}"
    return dma_cycles(hw, path, window.moved_bytes(valid), window.gm_burst_bytes(valid))


@tile_cost(Nz2NdOp)
def nz2nd(op: Nz2NdOp, hw: HardwareModel) -> int:
    return dma_cycles(hw, f"{scope_of(op.src)}->GM", op.moved_bytes())


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


def fixpipe_out_bytes(op: FixpipeOp, fractals: tuple[int, int] | None = None) -> int:
    """Bytes FIX writes for ``op``: the accumulator's elements (or those of ``fractals``
    (M, N) of its fractals: a ragged instance) in the destination's element type (the
    accumulator itself is fp32 or int32: :meth:`FixpipeOp.moved_bytes`)."""
    elements = prod(memref_shape(op.src))
    if fractals is not None:
        elements = fractals[0] * fractals[1] * 256
    return elements * element_bytes(memref_element(op.dst))


@tile_cost(FixpipeOp)
def fixpipe(op: FixpipeOp, hw: HardwareModel) -> int:
    """The whole accumulator (a ragged block's instances: :func:`fixpipe_cycles`)."""
    return fixpipe_cycles(op, hw, None)


def fixpipe_cycles(op: FixpipeOp, hw: HardwareModel, fractals: tuple[int, int] | None) -> int:
    """CANN's GEMM tiling cycle model (``GemmCycleModelL0c2out``, docs/hardware.md): two
    stages added, reading L0C (accumulator bytes) then writing out (output bytes; a GM
    destination in runs that are not 512 B multiples at the misaligned share), after the
    head of a DMA (into GM the write latency follows, :func:`gm_latency_cycles`). The same
    figures serve L0C -> L1, and L0C -> UB on a coupled core without a figure of its own
    (:attr:`HardwareModel.l0c_to_ub_bytes_per_cycle`: one stage)."""
    dst = scope_of(op.dst)
    read = op.moved_bytes(fractals)
    if dst == "UB" and hw.l0c_to_ub_bytes_per_cycle is not None:
        return hw.dma_issue_cycles + ceil(read / hw.l0c_to_ub_bytes_per_cycle)
    write_rate = hw.fix_write_bytes_per_cycle
    if str(memref_element(op.dst)) == "i8":  # requantised: as many elements as fp16
        write_rate = hw.fix_int8_write_bytes_per_cycle
    if dst == "GM":
        write_rate *= hw.gm_efficiency(op.gm_burst_bytes(fractals))
    return (
        dma_head_cycles(hw, f"L0C->{dst}")
        + ceil(read / hw.fix_l0c_read_bytes_per_cycle)
        + ceil(fixpipe_out_bytes(op, fractals) / write_rate)
    )


# ---- the cube ------------------------------------------------------------------------


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


# ---- the vector unit: repeats, then a result latency ----------------------------------


def vector_cycles(hw: HardwareModel, nbytes: int, elements: int, transcendental: bool) -> int:
    """Pipe time of a vector instruction: its repeats, 256 bytes (arithmetic) or 32
    elements (transcendental) a cycle per the hardware model. The instruction's result
    arrives later (:func:`vector_latency_cycles`): pypto's A2/A3 pipe model issues the next
    vector instruction once the repeats are done (``CalcVecOp``: ``popTime`` at the
    previous ``exeTime``)."""
    if transcendental:
        repeats = ceil(elements / hw.vector_transcendental_elems_per_cycle)
    else:
        repeats = ceil(nbytes / hw.vector_bytes_per_cycle)
    return max(1, repeats)


VECTOR_DELAY_CYCLES: dict[str, int] = {
    "vadd": 6,
    "vsub": 6,
    "vsel": 6,
    "vadds": 6,
    "vmul": 7,
    "vmuls": 7,
    "vdiv": 13,
    "vexp": 12,
    "vln": 14,
    "vsqrt": 13,
    "vrsqrt": 5,
    "vrec": 5,
    "vabs": 4,
    "vmax": 4,
    "vmin": 4,
    "vmaxs": 4,
    "vmins": 4,
    "vcopy": 4,
    "vcast": 4,
}
"""Each vector instruction's own pipeline delay on floating-point data, before the common
:attr:`~HardwareModel.vector_result_latency_cycles`: the delay column of pypto's
cycle-accurate A2/A3 vector table (``model/def.h``, ``VEC_VALU_TAB``; ``vcast`` is its
``CalcVconv``), the same for fp16 and fp32. Integer add / sub / select take 4 and
multiplies 5 there (:data:`INTEGER_DELAY_CYCLES`)."""

INTEGER_DELAY_CYCLES: dict[str, int] = {"vadd": 4, "vsub": 4, "vsel": 4, "vadds": 4}
INTEGER_DELAY_CYCLES |= {"vmul": 5, "vmuls": 5}

CROSS_LANE_DELAY_CYCLES: dict[tuple[str, bool], int] = {
    ("sum", True): 23,
    ("sum", False): 20,
    ("max", True): 9,
    ("max", False): 8,
    ("min", True): 9,
    ("min", False): 8,
}
"""The delay of a row reduction's last instruction, by (kind, 16-bit data): ``vcadd``
23 (fp16) / 20 (fp32), ``vcmax`` / ``vcmin`` 9 / 8 (pypto's table, as above). Other kinds
end in a ``vcadd``."""

DEFAULT_DELAY_CYCLES = 4
"""The delay of an instruction pypto's table lacks: its least entry (``vmax``, ``vabs``,
``vcopy``, ``vconv``...) — an assumption, the optimistic end; a transcendental op the
table lacks (``vtanh``, ``verf``, ``vpow``...) takes ``vexp``'s 12 instead."""


def _is_16bit(value: Any) -> bool:
    return element_bytes(memref_element(value)) == 2


def vector_delay_cycles(op: TileOp) -> int:
    """The pipeline delay of ``op``'s last vector instruction (see
    :data:`VECTOR_DELAY_CYCLES`)."""
    if isinstance(op, ReduceOp):
        src = memref_shape(op.src)
        innermost = len(src) - 1
        if isinstance(memref_element(op.src), IntegerType):  # halving vadds / vmax / vmin
            return INTEGER_DELAY_CYCLES["vadd"]
        if innermost in op.reduced_axes() and src[innermost] > 1:
            kind = op.kind.data if op.kind.data in ("max", "min") else "sum"
            return CROSS_LANE_DELAY_CYCLES[(kind, _is_16bit(op.src))]
        return VECTOR_DELAY_CYCLES["vmax" if op.kind.data in ("max", "min") else "vadd"]
    name = op.name.removeprefix("tile.")
    if isinstance(op, VectorOp) and not isinstance(op, CastOp):
        if (
            isinstance(memref_element(op.destination()), IntegerType)
            and name in INTEGER_DELAY_CYCLES
        ):
            return INTEGER_DELAY_CYCLES[name]
        if name not in VECTOR_DELAY_CYCLES and op.TRANSCENDENTAL:
            return VECTOR_DELAY_CYCLES["vexp"]
    return VECTOR_DELAY_CYCLES.get(name, DEFAULT_DELAY_CYCLES)


def vector_latency_cycles(op: TileOp, hw: HardwareModel) -> int:
    """How long after its pipe time a vector op's result is in UB:
    :attr:`~HardwareModel.vector_result_latency_cycles` and the op's own delay
    (:func:`vector_delay_cycles`). What reads it waits (a dependent vector op behind its
    ``pipe_barrier`` V, a flag to another pipe); the next independent op does not. 0 on a
    preset without the figure."""
    if not hw.vector_result_latency_cycles:
        return 0
    return hw.vector_result_latency_cycles + vector_delay_cycles(op)


@tile_cost(VectorOp)
def vector(op: VectorOp, hw: HardwareModel) -> int:
    dst = op.destination()
    return vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), op.TRANSCENDENTAL)


@tile_cost(CastOp)
def cast(op: CastOp, hw: HardwareModel) -> int:
    elements = prod(memref_shape(op.destination()))
    return max(1, ceil(elements / hw.vector_cast_elems_per_cycle))


@tile_cost(ReduceOp)
def reduce(op: ReduceOp, hw: HardwareModel) -> int:
    """One elementwise pass over the source (a halving tree of adds or maxima along the
    reduced axes), and, when the innermost axis is reduced, one cross-lane repeat per
    result element (``vcadd`` / ``vcmax`` across the lanes of the last repeat, as CANN's
    row reductions end) at :attr:`~HardwareModel.vector_cross_lane_cycles` — unless the
    sum of a short innermost axis is cheaper as pair passes (:func:`pair_sum_cycles`).
    Integers have no cross-lane instruction: their rows end by halving passes
    (:func:`integer_fold_cycles`)."""
    src = memref_shape(op.src)
    cycles = vector_cycles(hw, buffer_bytes(op.src), prod(src), False)
    innermost = len(src) - 1
    if innermost in op.reduced_axes() and src[innermost] > 1:
        if isinstance(memref_element(op.src), IntegerType):
            rows = prod(memref_shape(op.dst))
            return cycles + integer_fold_cycles(
                hw, src[innermost], rows, element_bytes(memref_element(op.src))
            )
        cycles += prod(memref_shape(op.dst)) * hw.vector_cross_lane_cycles
        if op.reduced_axes() == (innermost,) and op.kind.data == "sum":
            pairs = pair_sum_cycles(hw, src[innermost], buffer_bytes(op.src))
            cycles = min(cycles, pairs) if pairs is not None else cycles
    return cycles


def integer_fold_cycles(hw: HardwareModel, extent: int, rows: int, eb: int) -> int:
    """The last lanes of ``rows`` integer rows of ``extent`` elements (``eb`` bytes each)
    folded to one: no cross-lane instruction takes integers (``vcadd`` / ``WholeReduceSum``
    / ``vcmax``: half and float only), so each row's lanes of one repeat halve by ``vadd``
    (or ``vmax`` / ``vmin``) of its upper half onto its lower half, ``ceil(log2(lanes))``
    passes over all rows at once, each pass's repeats over the bytes left."""
    lanes = min(extent, max(1, hw.vector_bytes_per_cycle // eb))
    cycles = 0
    while lanes > 1:
        lanes = -(-lanes // 2)
        cycles += vector_cycles(hw, rows * lanes * eb, rows * lanes, False)
    return cycles


def pair_sum_cycles(hw: HardwareModel, extent: int, nbytes: int) -> int | None:
    """A sum over an innermost axis of ``extent`` elements (a power of two) as
    ``log2(extent)`` passes of Ascend C's ``PairReduceSum`` (``vcpadd``: adjacent pairs
    summed within each 256-byte repeat, on A2 / A3 and the 310P's AI core), each pass over
    half the bytes of the one before; a pass's repeats are charged as the cross-lane
    reduction's (:attr:`~HardwareModel.vector_cross_lane_cycles` each — an assumption: no
    figure of its own is published). None for an extent that is not a power of two."""
    if extent < 2 or extent & (extent - 1):
        return None
    cycles, remaining = 0, nbytes
    while extent > 1:
        cycles += ceil(remaining / hw.vector_bytes_per_cycle) * hw.vector_cross_lane_cycles
        remaining, extent = remaining // 2, extent // 2
    return cycles


PICK_OFFSET_BYTES = 4
"""Bytes of one entry of a gather's offset table (Ascend C ``Gather``: a u32 byte offset
per element), read by the vector unit alongside the data."""


@tile_cost(PickOp)
def pick(op: PickOp | TakeOp, hw: HardwareModel) -> int:
    """A gather by offset table: repeats over the result's bytes and its offsets."""
    dst = op.destination()
    elements = prod(memref_shape(dst))
    return vector_cycles(hw, buffer_bytes(dst) + PICK_OFFSET_BYTES * elements, elements, False)


@tile_cost(PoolOp)
def pool(op: PoolOp, hw: HardwareModel) -> int:
    kh, kw = int_values(op.kernel_shape)
    dst = op.destination()
    return kh * kw * vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), False)


# ---- the vector unit along an axis (scan, arg, top-k, one-hot, taps) ------------------


@tile_cost(ScanOp)
def scan(op: ScanOp, hw: HardwareModel) -> int:
    """A log-step (Hillis-Steele) scan: ``ceil(log2 n)`` shifted adds over the tile, ``n``
    its extent along the axis (Ascend C ``CumSum`` on a UB tile)."""
    src = op.src
    n = memref_shape(src)[int(op.axis.value.data)]
    steps = max(1, ceil(log2(n))) if n > 1 else 1
    return steps * vector_cycles(hw, buffer_bytes(src), prod(memref_shape(src)), False)


@tile_cost(ArgOp)
def arg(op: ArgOp, hw: HardwareModel) -> int:
    """A reduce that keeps the index beside the value (``ReduceMax`` with ``calIndex``):
    its repeats read the source and the index of each element."""
    src = op.src
    elements = prod(memref_shape(src))
    return vector_cycles(hw, buffer_bytes(src) + PICK_OFFSET_BYTES * elements, elements, False)


SORT_RUN = 32
"""Elements one sort instruction orders (Ascend ``Sort32``); longer axes merge runs four at
a time (``MrgSort``)."""


@tile_cost(TopKOp)
def top_k(op: TopKOp, hw: HardwareModel) -> int:
    """Sort the (value, index) pairs along the axis: one pass of 32-element sorts, then
    ``ceil(log4(n / 32))`` merge passes, each over the whole tile of pairs."""
    src = op.src
    n = memref_shape(src)[int(op.axis.value.data)]
    elements = prod(memref_shape(src))
    merges = ceil(log(max(n, 1) / SORT_RUN, 4)) if n > SORT_RUN else 0
    pair_bytes = buffer_bytes(src) + PICK_OFFSET_BYTES * elements
    return (1 + merges) * vector_cycles(hw, pair_bytes, elements, False)


@tile_cost(TakeOp)
def take(op: TakeOp, hw: HardwareModel) -> int:
    """A gather by an offset tensor: repeats over the result and its offsets (as vpick)."""
    return pick(op, hw)


SCALAR_WRITE_CYCLES = SCALAR_READ_CYCLES
"""One element stored from a scalar register into UB: taken as a scalar read's cost (a model
assumption like :data:`SCALAR_READ_CYCLES`)."""


@tile_cost(PutOp)
def put(op: PutOp, hw: HardwareModel) -> int:
    """A scatter by an offset tensor: as a gather's repeats (over the source's bytes and
    its offsets) where the vector unit scatters (:attr:`HardwareModel.vector_scatter`),
    else per element on the scalar unit — its position and its value read, the element
    written (Ascend C's advice for A2 / A3: a scalar scatter). With a ``reduction`` on
    every core per element on the scalar unit, the destination's element read too (Ascend
    C's ``Scatter`` only writes)."""
    src = op.src
    elements = prod(memref_shape(src))
    if op.reduce is not None:  # Scatter writes, it does not combine: the scalar unit does
        return elements * (3 * SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)
    if hw.vector_scatter:
        return vector_cycles(hw, buffer_bytes(src) + PICK_OFFSET_BYTES * elements, elements, False)
    return elements * (2 * SCALAR_READ_CYCLES + SCALAR_WRITE_CYCLES)


@tile_cost(OneHotOp)
def one_hot(op: OneHotOp, hw: HardwareModel) -> int:
    """A compare against an index vector and a select, each over the result."""
    dst = op.dst
    return 2 * vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), False)


@tile_cost(ArangeOp)
def arange(op: ArangeOp, hw: HardwareModel) -> int:
    """CANN's ``Arange`` operator: ``Duplicate``, ``Mul`` and ``Add``, each over the
    result."""
    dst = op.dst
    return 3 * vector_cycles(hw, buffer_bytes(dst), prod(memref_shape(dst)), False)


@tile_cost(TapsOp)
def taps(op: TapsOp, hw: HardwareModel) -> int:
    """Per tap a multiply-add over the result; along the innermost axis each tap first
    gathers its columns by an offset table (as ``vpick``), along an outer one a tap is a
    row address and its weight a scalar (``Axpy``)."""
    dst = op.dst
    elements = prod(memref_shape(dst))
    nbytes = buffer_bytes(dst)
    per_tap = 2 * vector_cycles(hw, nbytes, elements, False)
    if int(op.axis.value.data) == len(memref_shape(dst)) - 1:
        per_tap += vector_cycles(hw, nbytes + PICK_OFFSET_BYTES * elements, elements, False)
    return op.taps() * per_tap
