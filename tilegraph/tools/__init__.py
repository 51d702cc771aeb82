"""The command-line programs, one package each, and what they share.

- :mod:`tilegraph.tools.opt`: ``tilegraph-opt`` (xdsl-opt with tilegraph's passes; its
  diagnostics and the pass explorer page);
- :mod:`tilegraph.tools.run`: ``tilegraph-run`` (compile and run a model through
  :func:`tilegraph.compile`; inputs, shape sets, progress display, report);
- :mod:`tilegraph.tools.viz`: ``tilegraph-viz`` (the graph as Mermaid, DOT, SVG, PNG);
- shared: :mod:`.tables` (terminal tables), :mod:`.model_files` (reading a model file),
  :mod:`.random_inputs` (seeded inputs a model can run on).

Only programs live here (tests/tools/test_tools_layout.py checks that every module is
reached from a console script): libraries belong to the layer they serve (ONNX export and
the onnxruntime oracle in :mod:`tilegraph.frontend`, the doc generators in
``docs/generators``).
"""
