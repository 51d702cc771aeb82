"""``--workers N`` and ``--ray [ADDRESS]``: the options of the programs whose tasks run on
:func:`tilegraph.search.workers.run_tasks` (``tilegraph-tune``, ``tilegraph-sweep``)."""

from __future__ import annotations

import argparse
import os


def add_worker_options(ap: argparse.ArgumentParser, tasks: str) -> None:
    """Add ``--workers`` and ``--ray`` to ``ap``; ``tasks`` names what runs ("candidates")."""
    ap.add_argument(
        "--workers",
        type=int,
        default=None,
        help=f"local worker processes for the {tasks} (1), or a local Ray's CPUs with --ray "
        "(all cores)",
    )
    ap.add_argument(
        "--ray",
        nargs="?",
        const="",
        default=None,
        metavar="ADDRESS",
        help=f"run the {tasks} on Ray: a local Ray without ADDRESS, else that cluster's",
    )


def worker_count(args: argparse.Namespace) -> int:
    """``--workers``, or its default: every core for a local Ray, else 1."""
    if args.workers is not None:
        return args.workers
    return (os.cpu_count() or 1) if args.ray == "" else 1
