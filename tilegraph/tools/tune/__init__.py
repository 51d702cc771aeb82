"""``tilegraph-tune``: search tiling parameters and graph-level choices against the cycle
model, keep what it finds in a tuning database (:mod:`tilegraph.search.tune`).

- :mod:`.cli`: the program.
"""
