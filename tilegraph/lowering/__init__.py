"""Lowering from the graph level to the tile level (DESIGN.md §6).

* :mod:`~tilegraph.lowering.graph_to_kernels`: ``lower-graph-to-kernels`` — kernels over GM
  buffers and a host sequence of allocations and launches;
* :mod:`~tilegraph.lowering.kernel_body`: how a kernel's macro body is read back;
* :mod:`~tilegraph.lowering.tiling`: ``tile-kernels`` and its strategies (cube, vector).
"""
