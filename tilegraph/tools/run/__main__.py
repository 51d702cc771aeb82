"""``python -m tilegraph.tools.run``: ``tilegraph-run``."""

from tilegraph.tools.run.cli import main

main()
