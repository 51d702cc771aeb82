"""``python -m tilegraph.tools.tune``: ``tilegraph-tune``."""

from tilegraph.tools.tune.cli import main

main()
