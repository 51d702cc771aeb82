"""Lowering from the graph level to the tile level (DESIGN.md §6), in three parts (MLIR's
``Conversion/`` vs ``Dialect/*/Transforms`` and ``Analysis/`` split):

* :mod:`~tilegraph.lowering.conversion`: graph -> tile — ``lower-graph-to-kernels`` (kernels
  over GM buffers and a host sequence of launches) and ``tile-kernels`` (their bodies as
  loops of tile ops);
* :mod:`~tilegraph.lowering.transforms`: tile -> tile — ``multi-buffer``,
  ``plan-local-memory``, ``split-cores``, ``inject-sync``, ``plan-memory``;
* :mod:`~tilegraph.lowering.analysis`: what the IR of a lowered module says, read without
  changing it — by the passes above, the executors and the cycle model.

Imports run one way: ``conversion`` and ``transforms`` may use ``analysis``; ``analysis``
uses neither, and neither of them uses the other (``tests/test_layering.py``). The pipeline
that chains them is :func:`tilegraph.passes.pipelines.lowering_pipeline`.
"""
