"""``python -m tilegraph.tools.sweep``: ``tilegraph-sweep``."""

from tilegraph.tools.sweep.cli import main

main()
