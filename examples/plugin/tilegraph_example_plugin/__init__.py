"""An example tilegraph plugin, installed with ``pip install -e examples/plugin``.

It adds, through entry points (see ``pyproject.toml``) and without touching tilegraph:

* the pass ``div-to-mul`` (:mod:`.div_to_mul`), usable as ``tilegraph-opt -p div-to-mul``;
* the dialect ``example`` with the op ``example.fake_quant`` (:mod:`.fake_quant`);
* interpreter functions that run that op (:mod:`.interpreter`).

``docs/tutorial-writing-a-pass.md`` in tilegraph's repository walks through every file.
"""
