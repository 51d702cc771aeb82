"""``tilegraph-tune``: search tiling parameters and graph-level choices against the cycle
model, keep what it finds in a tuning database (:mod:`tilegraph.search.tune`), or (``--objective
accuracy``) the ops that must keep float32 under a reduced precision.

- :mod:`.cli`: the program;
- :mod:`.accuracy`: ``--objective accuracy``, the keep-list search
  (:mod:`tilegraph.search.accuracy`); standalone as ``python -m tilegraph.tools.tune.accuracy``.
"""
