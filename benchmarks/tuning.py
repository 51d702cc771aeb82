"""tilegraph-tune on light ResNet-50 and the zoo's transformer block (masked attention) on
``ascend910b``: the estimate default -> tuned, candidates evaluated, wall time on 1 and 2
workers and on a local Ray, the speed-up from 1 to 2 workers, and a rerun on the same
database (nothing evaluated). Each configuration tunes into a fresh database.

    python benchmarks/tuning.py                  # budget 32 per kernel
    python benchmarks/tuning.py --budget 16 --models attention
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESNET = ROOT / "build" / "light_resnet50.onnx"
MODELS: dict[str, tuple[Path, tuple[str, ...]]] = {
    "resnet50": (RESNET, ()),
    "attention": (
        ROOT / "tests" / "zoo" / "models" / "masked_attention.onnx",
        ("--shape", "x=1,32,64", "--shape", "mask=1,32"),
    ),
}
CONFIGS = {"1 worker": ("--workers", "1"), "2 workers": ("--workers", "2"), "ray": ("--ray",)}


def _light_resnet() -> None:
    if RESNET.exists():
        return
    import onnx

    from tilegraph.frontend.light_models import light_model

    RESNET.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(light_model("resnet50", 0), str(RESNET))


def tune(model: Path, extra: tuple[str, ...], db: Path, budget: int, where: tuple[str, ...]):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tune.json"
        done = subprocess.run(
            [sys.executable, "-m", "tilegraph.tools.tune", str(model), *extra,
             "--platform", "ascend910b", "--db", str(db), "--budget", str(budget),
             "--json", str(out), "-q", *where],
            capture_output=True, text=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        if done.returncode:
            raise SystemExit(f"tilegraph-tune failed on {model.name}:\n{done.stderr}")
        return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--budget", type=int, default=32)
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    args = ap.parse_args()
    if "resnet50" in args.models:
        _light_resnet()
    rows = []
    for name in args.models:
        model, extra = MODELS[name]
        with tempfile.TemporaryDirectory() as tmp:
            walls = {}
            for label, where in CONFIGS.items():
                db = Path(tmp) / f"{label.replace(' ', '_')}.sqlite"
                report = tune(model, extra, db, args.budget, where)
                walls[label] = report["wall_s"]
                if label == "1 worker":
                    first = report
                    rerun = tune(model, extra, db, args.budget, where)
                elif report["kernels"] != first["kernels"]:
                    raise SystemExit(f"{name}: {label} found other points than 1 worker")
        tuned_kernels = sum(1 for k in first["kernels"] if k["tuned_us"] < k["default_us"])
        rows.append(
            (
                name,
                f"{first['default_us']:.1f} -> {first['tuned_us']:.1f}",
                f"{first['kernels_default_us']:.1f} -> {first['kernels_tuned_us']:.1f}",
                f"{tuned_kernels}/{len(first['kernels'])}",
                str(first["evaluated"]),
                f"{walls['1 worker']:.1f}",
                f"{walls['2 workers']:.1f}",
                f"{walls['ray']:.1f}",
                f"{walls['1 worker'] / walls['2 workers']:.2f}x",
                f"{rerun['evaluated']} / {rerun['reused']}",
                first["pipeline"],
            )
        )
    head = (
        "model", "model µs default -> tuned", "kernels alone µs", "kernels improved",
        "evaluated", "wall 1w s", "wall 2w s", "wall Ray s", "1->2w", "rerun eval/reused",
        "pipeline",
    )  # fmt: skip
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"tilegraph-tune on ascend910b, budget {args.budget} per kernel")
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
