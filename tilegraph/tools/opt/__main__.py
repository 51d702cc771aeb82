"""``python -m tilegraph.tools.opt``: ``tilegraph-opt``."""

from tilegraph.tools.opt.cli import main

main()
