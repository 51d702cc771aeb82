"""Start-up time of the tools: ``tilegraph-opt --help`` against ``xdsl-opt --help``.

    python benchmarks/startup.py [--runs 10]

Runs each command as a whole process (the console scripts beside this Python), alternating
them so that a drift of the machine's speed hits both alike, after one warm-up run each;
prints the median and the range of the wall time, and the median ratio. The issue's target:
``tilegraph-opt --help`` within 2x of ``xdsl-opt --help``. A second row times
``tilegraph-opt --help-pass O1`` (imports one pass module).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def wall(command: list[str]) -> float:
    """Seconds one run of ``command`` takes (its output discarded; it must exit 0)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    baseline = [str(BIN / "xdsl-opt"), "--help"]
    commands = {
        "tilegraph-opt --help": [str(BIN / "tilegraph-opt"), "--help"],
        "tilegraph-opt --help-pass O1": [str(BIN / "tilegraph-opt"), "--help-pass", "O1"],
    }
    base_times: list[float] = []
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command in (baseline, *commands.values()):
        wall(command)  # warm-up: file caches, .pyc
    for _ in range(args.runs):
        base_times.append(wall(baseline))
        for name, command in commands.items():
            times[name].append(wall(command))
    base = statistics.median(base_times)
    print(f"{'command':<30} {'median s':>9} {'min s':>7} {'max s':>7} {'/ xdsl-opt':>10}")
    print(f"{'xdsl-opt --help':<30} {base:>9.3f} {min(base_times):>7.3f} {max(base_times):>7.3f}")
    for name, values in times.items():
        ratios = [t / b for t, b in zip(values, base_times, strict=True)]
        print(
            f"{name:<30} {statistics.median(values):>9.3f} {min(values):>7.3f} "
            f"{max(values):>7.3f} {statistics.median(ratios):>9.2f}x"
        )


if __name__ == "__main__":
    main()
