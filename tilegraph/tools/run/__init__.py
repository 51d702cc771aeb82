"""``tilegraph-run``: compile a model with :func:`tilegraph.compile` and run it.

- :mod:`.cli`: the program;
- :mod:`.shapes`: ``--shape``, ``--sweep``, ``--dim``, ``--dynamic``;
- :mod:`.npy_files`: ``.npy`` inputs of any element type;
- :mod:`.progress`: the terminal progress display;
- :mod:`.report`: the printed report.
"""
