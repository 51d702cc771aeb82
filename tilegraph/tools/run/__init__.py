"""``tilegraph-run``: compile a model with :func:`tilegraph.compile` and run it.

- :mod:`.cli`: the program (a run, a sweep of shape sets);
- :mod:`.arguments`: its command line;
- :mod:`.model_inputs`: the model imported for the run, and its inputs;
- :mod:`.estimate`: ``--estimate``, the cycle model without a run;
- :mod:`.messages`: the one message printed for an error;
- :mod:`.shapes`: ``--shape``, ``--sweep``, ``--dim``, ``--dynamic``;
- :mod:`.npy_files`: ``.npy`` inputs of any element type;
- :mod:`.progress`: the terminal progress display;
- :mod:`.report`: the printed report.
"""
