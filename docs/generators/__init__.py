"""The generators of the reference pages under ``docs/`` (``make docs``, i.e. ``python -m
docs.generators.generated_docs``; tests/test_generated_docs.py fails when a page is stale).

They read the code (ops, passes, lowering tables) and write Markdown; they are not part of
the ``tilegraph`` package, which must not depend on them.
"""
