"""``tilegraph-sweep``: hardware what-if sweeps over models, presets, overrides and storage
strategies (:mod:`.cli`; the logic is :mod:`tilegraph.search.sweep`)."""
