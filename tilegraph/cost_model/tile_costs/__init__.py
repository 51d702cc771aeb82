"""Cycles each ``tile`` op occupies its pipe on one core of a :class:`HardwareModel`.

A cost function ``cost(op, hw) -> int`` is registered for op classes with
:func:`tile_cost`, xDSL ``@impl`` style; :func:`cost_of` finds it through the op's class
hierarchy (the most derived registered class wins; :mod:`.registry`, with the one-cycle
default of the bookkeeping ops: tests/test_tile_registries.py lists the ops allowed it).
The costs live by concept, each module registering its op classes':

* :mod:`.registry`: the registry, the default, cross-core flags and the all-core barrier;
* :mod:`.scalar`: the scalar unit (``get_value``, the scatter / gather row loops);
* :mod:`.dma`: DMAs between GM and a core (copies, 5HD, ``nd2nz`` / ``nz2nd``), GM latency;
* :mod:`.cube`: the cube path (``load2d``, ``load3d``, ``mmad``, ``fixpipe``);
* :mod:`.vector`: the vector unit's repeats and result latencies (elementwise, cast,
  reductions, ``vpick``, pooling);
* :mod:`.vector_axis`: vector ops along an axis (scan, arg, top-k, take / put, one-hot,
  arange, taps).

Importing this package imports them all, so every cost is registered; the names are
re-exported here. The formulas follow docs/tile-level.md (the presets' rates in
:mod:`tilegraph.hardware`); tests/runtime/test_cycle_model.py holds them to the figures of
docs/hardware.md.
"""

from __future__ import annotations

from tilegraph.cost_model.tile_costs.cube import (
    FixValid,
    fixpipe,
    fixpipe_cycles,
    fixpipe_elements,
    fixpipe_gm_burst_bytes,
    fixpipe_out_bytes,
    fixpipe_read_bytes,
    img2col_bytes_per_cycle,
    load2d,
    load2d_cycles,
    load3d,
    mmad,
    mmad_cycles,
)
from tilegraph.cost_model.tile_costs.dma import (
    dma_cycles,
    dma_head_cycles,
    gm_latency_cycles,
    load_5hd,
    nd2nz,
    nd2nz_cycles,
    nz2nd,
    path_copy,
    store_5hd,
)
from tilegraph.cost_model.tile_costs.registry import (
    CostFunction,
    cost_function,
    cost_of,
    cross_core_flag,
    one_cycle,
    sync_all,
    tile_cost,
)
from tilegraph.cost_model.tile_costs.scalar import (
    SCALAR_READ_CYCLES,
    SCALAR_WRITE_CYCLES,
    gather_rows,
    get_value,
    scatter_rows,
)
from tilegraph.cost_model.tile_costs.vector import (
    CROSS_LANE_DELAY_CYCLES,
    DEFAULT_DELAY_CYCLES,
    INTEGER_DELAY_CYCLES,
    PICK_OFFSET_BYTES,
    VECTOR_DELAY_CYCLES,
    cast,
    integer_fold_cycles,
    pair_sum_cycles,
    pick,
    pool,
    reduce,
    vector,
    vector_cycles,
    vector_delay_cycles,
    vector_latency_cycles,
)
from tilegraph.cost_model.tile_costs.vector_axis import (
    SORT_RUN,
    arange,
    arg,
    one_hot,
    put,
    scan,
    take,
    taps,
    top_k,
)

__all__ = [
    "CROSS_LANE_DELAY_CYCLES",
    "CostFunction",
    "DEFAULT_DELAY_CYCLES",
    "INTEGER_DELAY_CYCLES",
    "PICK_OFFSET_BYTES",
    "SCALAR_READ_CYCLES",
    "SCALAR_WRITE_CYCLES",
    "SORT_RUN",
    "VECTOR_DELAY_CYCLES",
    "arange",
    "arg",
    "cast",
    "cost_function",
    "cost_of",
    "cross_core_flag",
    "dma_cycles",
    "dma_head_cycles",
    "fixpipe",
    "FixValid",
    "fixpipe_cycles",
    "fixpipe_elements",
    "fixpipe_gm_burst_bytes",
    "fixpipe_read_bytes",
    "fixpipe_out_bytes",
    "gather_rows",
    "get_value",
    "gm_latency_cycles",
    "img2col_bytes_per_cycle",
    "integer_fold_cycles",
    "load2d",
    "load2d_cycles",
    "load3d",
    "load_5hd",
    "mmad",
    "mmad_cycles",
    "nd2nz",
    "nd2nz_cycles",
    "nz2nd",
    "one_cycle",
    "one_hot",
    "pair_sum_cycles",
    "path_copy",
    "pick",
    "pool",
    "put",
    "reduce",
    "scan",
    "scatter_rows",
    "store_5hd",
    "sync_all",
    "take",
    "taps",
    "tile_cost",
    "top_k",
    "vector",
    "vector_cycles",
    "vector_delay_cycles",
    "vector_latency_cycles",
]
