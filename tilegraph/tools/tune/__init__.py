"""``tilegraph-tune``: searches over a model's compilation.

- :mod:`.accuracy`: ``--objective accuracy``, the keep-list search
  (:mod:`tilegraph.search.accuracy`); standalone as ``python -m tilegraph.tools.tune.accuracy``.
"""
