"""``python -m tilegraph.tools.viz``: ``tilegraph-viz``."""

from tilegraph.tools.viz.cli import main

main()
