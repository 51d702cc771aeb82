"""The ``tile`` dialect: Ascend-style kernels on scoped buffers (DESIGN.md §6).

Modules: :mod:`~tilegraph.dialects.tile.base` (scopes, pipes, the facts ops declare),
:mod:`~tilegraph.dialects.tile.host` (allocation, constants, launches, the kernel boundary),
:mod:`~tilegraph.dialects.tile.loop` (a device loop of launches: a lowered ``graph.loop``),
:mod:`~tilegraph.dialects.tile.dma` (window copies, NCHW <-> NC1HWC0 on the way),
:mod:`~tilegraph.dialects.tile.fractal` (the cube path's fractal moves),
:mod:`~tilegraph.dialects.tile.fixpipe` (the accumulator out),
:mod:`~tilegraph.dialects.tile.cube` (``mmad``),
:mod:`~tilegraph.dialects.tile.cross_core` (flags between a mix kernel's AIC and AIV),
:mod:`~tilegraph.dialects.tile.scalar` (the scalar unit reading a UB element: ``get_value``; its
``scatter_rows`` of ScatterND / ScatterElements on a UB-resident block, ``gather_rows`` of
GatherElements on one),
:mod:`~tilegraph.dialects.tile.vector`
(the vector unit's elementwise families), :mod:`~tilegraph.dialects.tile.vector_layout`
(reduce, pool, transpose), :mod:`~tilegraph.dialects.tile.vector_axis` (scan, arg, top-k,
one-hot, taps along an axis, arange); :mod:`~tilegraph.dialects.tile.registry` the per-op-class
registries through which the interpreter, the fast executor and the cost model give ops
their semantics and costs. ``Tile`` is the xDSL dialect object.
"""

from xdsl.ir import Dialect

from tilegraph.dialects.tile.barrier import BARRIER_OPS, SyncAllOp
from tilegraph.dialects.tile.base import (
    ON_CHIP,
    SCOPES,
    TileOp,
    memref_shape,
    scope_of,
    scoped_memref,
)
from tilegraph.dialects.tile.cores import CORE_OPS, BlockIdxOp, BlockNumOp, SubBlockIdxOp
from tilegraph.dialects.tile.cross_core import CROSS_CORE_OPS, SyncBlockSetOp, SyncBlockWaitOp
from tilegraph.dialects.tile.cube import CUBE_OPS, MmadOp
from tilegraph.dialects.tile.dma import DMA_OPS, CopyFlatOp, CopyOp, Load5hdOp, Store5hdOp
from tilegraph.dialects.tile.fixpipe import FIXPIPE_OPS, FixpipeOp
from tilegraph.dialects.tile.fractal import (
    FRACTAL_OPS,
    Load2dOp,
    Load3dOp,
    Nd2NzOp,
    Nz2NdOp,
)
from tilegraph.dialects.tile.host import (
    HOST_OPS,
    AllocOp,
    ConstantOp,
    LaunchOp,
    ReadOp,
    WriteOp,
    tensor_buffer_type,
)
from tilegraph.dialects.tile.loop import LOOP_OPS, LoopLaunchesOp
from tilegraph.dialects.tile.scalar import (
    SCALAR_UNIT_OPS,
    GatherRowsOp,
    GetValueOp,
    ScatterRowsOp,
)
from tilegraph.dialects.tile.sync import (
    EVENTS_PER_PAIR,
    PIPES,
    SYNC_OPS,
    PipeBarrierOp,
    SetFlagOp,
    WaitFlagOp,
)
from tilegraph.dialects.tile.vector import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    VECTOR_OPS,
    BroadcastOp,
    CastOp,
    CmpOp,
    DupOp,
    SelectOp,
    VectorOp,
)
from tilegraph.dialects.tile.vector_axis import (
    AXIS_VECTOR_OPS,
    ArangeOp,
    ArgOp,
    OneHotOp,
    PutOp,
    ScanOp,
    TakeOp,
    TapsOp,
    TopKOp,
)
from tilegraph.dialects.tile.vector_layout import (
    LAYOUT_VECTOR_OPS,
    PickOp,
    PoolOp,
    ReduceOp,
    StrideOp,
    TransposeOp,
)
from tilegraph.dialects.tile.workspace import (
    WORKSPACE_OPS,
    ReshapeViewOp,
    SliceViewOp,
    StridedViewOp,
    ViewOp,
)

TILE_OPS: tuple[type[TileOp], ...] = (
    *HOST_OPS,
    *LOOP_OPS,
    *DMA_OPS,
    *SCALAR_UNIT_OPS,
    *FRACTAL_OPS,
    *FIXPIPE_OPS,
    *CUBE_OPS,
    *VECTOR_OPS,
    *LAYOUT_VECTOR_OPS,
    *AXIS_VECTOR_OPS,
    *SYNC_OPS,
    *CROSS_CORE_OPS,
    *BARRIER_OPS,
    *CORE_OPS,
    *WORKSPACE_OPS,
)

Tile = Dialect("tile", list(TILE_OPS), [])

__all__ = [
    "BINARY_OPS",
    "EVENTS_PER_PAIR",
    "ON_CHIP",
    "PIPES",
    "SCALAR_OPS",
    "SCOPES",
    "TILE_OPS",
    "UNARY_OPS",
    "AllocOp",
    "ArgOp",
    "BlockIdxOp",
    "BlockNumOp",
    "SubBlockIdxOp",
    "SyncAllOp",
    "BroadcastOp",
    "CastOp",
    "CmpOp",
    "ConstantOp",
    "CopyFlatOp",
    "CopyOp",
    "DupOp",
    "FixpipeOp",
    "GatherRowsOp",
    "GetValueOp",
    "ScatterRowsOp",
    "LaunchOp",
    "LoopLaunchesOp",
    "Load2dOp",
    "Load3dOp",
    "Load5hdOp",
    "MmadOp",
    "PipeBarrierOp",
    "PoolOp",
    "Nd2NzOp",
    "ArangeOp",
    "OneHotOp",
    "PutOp",
    "Nz2NdOp",
    "ReadOp",
    "ReduceOp",
    "ReshapeViewOp",
    "ScanOp",
    "PickOp",
    "SelectOp",
    "SetFlagOp",
    "SliceViewOp",
    "Store5hdOp",
    "StrideOp",
    "StridedViewOp",
    "SyncBlockSetOp",
    "SyncBlockWaitOp",
    "TakeOp",
    "TapsOp",
    "Tile",
    "TileOp",
    "TopKOp",
    "TransposeOp",
    "VectorOp",
    "ViewOp",
    "WaitFlagOp",
    "WriteOp",
    "memref_shape",
    "scope_of",
    "scoped_memref",
    "tensor_buffer_type",
]
