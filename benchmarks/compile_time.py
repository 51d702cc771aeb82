"""Compile time of ``tilegraph-run MODEL --estimate`` on zoo models, and a check that two
trees compile them alike.

Timing: each model's ``tilegraph-run --estimate -q --no-format-report`` runs ``--repeat``
times, each in a fresh process (imports, the collector and the caches as a user meets
them), with each of ``--trees`` on PYTHONPATH in turn; prints the process's CPU seconds
(min / median: on a shared machine wall time mostly measures the others), its wall
seconds, the compile stages the run reports (``times_s``, wall, median) and its peak RSS
(median)::

    python benchmarks/compile_time.py [--models bert_dynamo yolov8] [--repeat 3] \
        [--trees /tree/at/main .]

Sameness: ``--dump DIR`` compiles each model in this process and writes ``DIR/MODEL.json``:
a digest of the printed module after every leaf pass of the pipeline and the lowering,
and the estimate's kernels and cycles; ``--compare A B`` lists what differs between two
such directories (a tree at ``main`` against a changed tree: a compile-time change must
leave every IR, kernel and cycle as it was)::

    PYTHONPATH=/tree/at/main python benchmarks/compile_time.py --dump /tmp/before
    PYTHONPATH=. python benchmarks/compile_time.py --dump /tmp/after
    python benchmarks/compile_time.py --compare /tmp/before /tmp/after

These machines are noisy: quote the medians, measured before and after in one session.

Twenty-fifth session, ascend910b, ``--repeat 3``, the tree at the session's start against
the one with the structural kernel key, the shared walk plan, inject-sync's accesses and
aliases read once, ragged records from facts read once and the young-generation
collection (process CPU s; every IR, kernel and cycle the same by ``--compare``)::

    model               cpu min        cpu median     peak MiB
    bert_dynamo         3.81 -> 3.51   4.32 -> 3.88   132 -> 133
    vit                 4.16 -> 3.53   4.28 -> 3.64   133 -> 134
    t5_encoder_dynamo   3.51 -> 3.23   3.52 -> 3.25   130 -> 131
    swin                4.73 -> 4.46   4.99 -> 4.67   136 -> 138
    yolov8              8.18 -> 7.31   8.19 -> 7.44   145 -> 148

Each run's CPU includes ~1.5-2.5 s of compiling tilegraph's bytecode (the machine writes no
``.pyc``); the compile and estimate alone lose a quarter (bert_dynamo ~2.2 -> ~1.8 s).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ZOO = Path(__file__).resolve().parent.parent / "tests" / "zoo" / "models"

MODELS: dict[str, list[str]] = {
    # the shapes of tests/zoo/zoo.py's larger shape set (yolov8: its 64x64 one)
    "bert_dynamo": ["--dim", "s18=3", "--dim", "s41=11"],
    "yolov8": ["--shape", "images=3,3,64,64"],
    "vit": ["--shape", "pixel_values=3,3,32,32"],
    "t5_encoder_dynamo": ["--shape", "input_ids=3,11", "--shape", "attention_mask=3,11"],
    "swin": ["--shape", "pixel_values=2,3,32,32"],
    "unet": ["--shape", "image=2,3,32,64"],
}
COMMON = ["--platform", "ascend910b", "--no-format-report", "--estimate", "-q"]


def command(model: str) -> list[str]:
    """The ``tilegraph-run`` arguments that estimate ``model``."""
    return [str(ZOO / f"{model}.onnx"), *MODELS[model], *COMMON]


def time_once(model: str, env: dict[str, str] | None = None) -> tuple[float, float, dict, int]:
    """Wall and CPU seconds, the report's ``times_s`` and the peak RSS (KiB) of one fresh
    run (``env``: the child's environment, e.g. the tree on its PYTHONPATH)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        argv = [sys.executable, "-m", "tilegraph.tools.run", *command(model), "--json", str(report)]
        start = time.perf_counter()
        # the tree's directory is the child's first import path (``-m`` puts the working
        # directory before PYTHONPATH)
        cwd = env["PYTHONPATH"] if env else None
        proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd
        )
        assert proc.stderr is not None
        error = proc.stderr.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stderr.close()
        if proc.returncode != 0:
            raise SystemExit(f"{model}: tilegraph-run failed:\n{error}")
        times = json.loads(report.read_text())["times_s"]
    return wall, usage.ru_utime + usage.ru_stime, times, usage.ru_maxrss


def timing(models: list[str], repeat: int, trees: list[str]) -> None:
    """Per model and tree (a PYTHONPATH; "" this process's), runs taken in turn, tree by
    tree, so that the machine's drift falls on all of them alike."""
    print(
        f"{'model':<18} {'tree':<22} {'cpu min':>8} {'median':>7} {'wall med':>8} "
        f"{'peak MiB':>8}  stages (median wall s)"
    )
    for model in models:
        runs: dict[str, list[tuple[float, float, dict, int]]] = {t: [] for t in trees}
        for _ in range(repeat):
            for tree in trees:
                env = dict(os.environ, PYTHONPATH=tree) if tree else None
                runs[tree].append(time_once(model, env))
        for tree, found in runs.items():
            cpu = [c for _, c, _, _ in found]
            wall = statistics.median(w for w, _, _, _ in found)
            stages = {k: statistics.median(t[k] for _, _, t, _ in found) for k in found[0][2]}
            rss = statistics.median(r for *_, r in found) / 1024
            shown = ", ".join(f"{k} {v:.2f}" for k, v in stages.items())
            print(
                f"{model:<18} {tree[-22:] or '.':<22} {min(cpu):>8.2f} "
                f"{statistics.median(cpu):>7.2f} {wall:>8.2f} {rss:>8.0f}  {shown}",
                flush=True,
            )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _digesting(digests: list[tuple[str, str]]) -> Callable[[Any, Any], None]:
    """A pass observer appending (pass, digest of the printed module) to ``digests``."""

    def after(p: Any, module: Any) -> None:
        digests.append((p.name, _digest(str(module))))

    return after


def dump(models: list[str], out: Path) -> None:
    """Compile each model in this process; write its per-pass IR digests and estimate."""
    from tilegraph.passes.pipelines import observing_passes
    from tilegraph.tools.run.arguments import parse_arguments
    from tilegraph.tools.run.estimate import check_estimate_arguments, estimate

    out.mkdir(parents=True, exist_ok=True)
    for model in models:
        digests: list[tuple[str, str]] = []
        args = parse_arguments(command(model))
        check_estimate_arguments(args, [])
        with observing_passes(_digesting(digests)):
            report = estimate(args)
        report.pop("profile", None)
        found = {
            "passes": digests,
            "kernels": report.get("kernels"),
            "cycles": report.get("cycles"),
        }
        (out / f"{model}.json").write_text(json.dumps(found, indent=1, default=str))
        print(f"{model}: {len(digests)} passes", flush=True)


def compare(a: Path, b: Path) -> int:
    """Print what differs between two ``--dump`` directories; 1 if anything does."""
    differ = 0
    for path in sorted(a.glob("*.json")):
        other = b / path.name
        if not other.exists():
            print(f"{path.stem}: only in {a}")
            differ = 1
            continue
        left, right = json.loads(path.read_text()), json.loads(other.read_text())
        fields = [f for f in ("passes", "kernels", "cycles") if left[f] != right[f]]
        if fields:
            print(f"{path.stem}: {', '.join(fields)} differ")
            differ = 1
        else:
            print(f"{path.stem}: same ({len(left['passes'])} passes)")
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description="compile time of tilegraph-run --estimate")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dump", type=Path, help="write per-pass IR digests and estimates")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"))
    parser.add_argument(
        "--trees", nargs="+", default=[""], help="time with each of these on PYTHONPATH"
    )
    args = parser.parse_args()
    if args.compare:
        sys.exit(compare(*args.compare))
    if args.dump:
        dump(args.models, args.dump)
    else:
        timing(args.models, args.repeat, args.trees)


if __name__ == "__main__":
    main()
