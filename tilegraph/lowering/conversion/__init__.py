"""Conversion from the graph level to the tile level: passes that change the level of the IR.

* :mod:`.graph_to_kernels`: ``lower-graph-to-kernels`` — each fused group or lone graph op
  becomes a kernel function over GM buffers whose body still states its graph ops, called
  from a host sequence of allocations and launches;
* :mod:`.tiling`: ``tile-kernels`` — each cube or vector kernel's body becomes loops of DMA,
  cube and vector tile ops on on-chip buffers, one strategy module per kind of op;
* :mod:`.kernel_body`: how a kernel's macro body (read, graph ops, write) is read back, for
  the strategies.

What belongs here: code that turns graph ops into tile ops, and helpers only that does.
What a kernel looks like *after* conversion, as read by anyone else, belongs in
:mod:`tilegraph.lowering.analysis`; passes from tiled IR to tiled IR in
:mod:`tilegraph.lowering.transforms`.
"""

PASSES: dict[str, str] = {
    "lower-graph-to-kernels": ".graph_to_kernels:LowerGraphToKernelsPass",
    "tile-kernels": ".tiling:TileKernelsPass",
}
"""This package's passes by ``-p`` name, for :mod:`tilegraph.passes.registry`:
``".module:Class"`` (relative to the package), imported only when the pass is used."""
