"""``tilegraph-opt``: xdsl-opt with tilegraph's dialects, passes and pipelines.

- :mod:`.cli`: the program;
- :mod:`.diagnostics`: one located line per error;
- :mod:`.explorer`: the ``--explore`` page.
"""
