"""Kernels per transformer layer on a preset (``ascend910b``), by unit: a table, before -> after.

    python benchmarks/transformer_kernels.py                      # this tree
    python benchmarks/transformer_kernels.py --baseline /work/main  # main's counts -> ours
    python benchmarks/transformer_kernels.py --seq 128 --json counts.json
    python benchmarks/transformer_kernels.py --platform ascend310p

Contract: for each layer kind — the zoo's ``bert`` (post-LN encoder, erf GELU), ``gpt2``
(pre-LN decoder, Conv1D as addmm, tanh GELU, causal ``where``), ``vit`` (pre-LN encoder on
patches), ``llama`` (RMSNorm, rotary, grouped KV heads, SiLU-gated MLP), ``t5_encoder``
(RMSNorm, an unscaled attention with a relative-position bias), their fp16 twins
(``.half()`` exports: LLaMA's and T5's RMSNorm and LLaMA's softmax in fp32 between Casts)
and the calibration BERT-base (``benchmarks/calibration_models.py``: 768 wide,
12 heads, FFN 3072, at ``--seq``) — the model is compiled to tiles with
``tilegraph-run --estimate --platform PRESET`` (nothing runs) and its kernels (one per
launch: a mix kernel's AIC and AIV parts count once) are counted per unit: cube, vector,
mix, host. The layer's estimated time (``us``) is its kernels' cycle-model time, launches
included (a kernel's ``us + launch_us + workspace_us`` of the report's ``cycles.per_kernel``).

Kernels per layer: a zoo model's kernels are attributed by the ONNX node of their last op
(``/layers.1/...``, ``/blocks.1/...``; T5's ``/attn.1/``, ``/ff_in.1/``, ``/ff_out.1/`` and
its norms ``/norms.2/``, ``/norms.3/``, two per layer), and the count is that of its second
layer (the first shares kernels with the embeddings); the calibration BERT has no scoped node names,
so its count (and time: the estimates' totals) is the difference between its 2-layer and
1-layer builds.

``--baseline DIR`` runs the same measurement with ``PYTHONPATH=DIR`` (a checkout of main)
and prints ``before -> after``. GE-class fusion's target is at most 12 kernels per layer
(issue 25). Exit code 0 whatever the counts: this is a report, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calibration_models  # noqa: E402 - a sibling script (run from benchmarks/)

from tests.zoo.zoo import MODELS, make_inputs  # noqa: E402

UNITS = ("cube", "vector", "mix", "host")
ZOO_KINDS = {
    "bert": "BERT (zoo)",
    "gpt2": "GPT-2 (zoo)",
    "vit": "ViT (zoo)",
    "llama": "LLaMA (zoo)",
    "t5_encoder": "T5 encoder (zoo)",
    "bert_fp16": "BERT fp16 (zoo)",
    "gpt2_fp16": "GPT-2 fp16 (zoo)",
    "vit_fp16": "ViT fp16 (zoo)",
    "llama_fp16": "LLaMA fp16 (zoo)",
    "t5_encoder_fp16": "T5 encoder fp16 (zoo)",
}
CALIBRATION_KIND = "BERT-base (calibration)"
TARGET = 12
LAYER_SCOPES = (
    (re.compile(r"/(?:layers|blocks|layer|h|attn|ff_in|ff_out)\.(\d+)/"), 1),
    (re.compile(r"/norms\.(\d+)/"), 2),  # T5: two norms per layer
)
"""A node's layer: the scope's index, divided by the scopes per layer."""
DEFAULT_PLATFORM = "ascend910b"


def _kernels(
    model: Path, inputs: dict[str, np.ndarray], pythonpath: str, platform: str
) -> list[dict]:
    """The ``kernels`` of ``tilegraph-run MODEL --estimate --json`` on ``platform`` under
    ``pythonpath``, each with its estimated ``us`` (launch included)."""
    with tempfile.TemporaryDirectory() as d:
        args: list[str] = []
        for name, array in inputs.items():
            np.save(f"{d}/{name}.npy", array)
            args += ["--input", f"{name}={d}/{name}.npy"]
        command = [sys.executable, "-m", "tilegraph.tools.run", str(model), *args]
        command += ["--platform", platform, "--estimate", "-q", "--no-format-report"]
        command += ["--json", f"{d}/report.json"]
        env = {**os.environ, "PYTHONPATH": pythonpath}
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=pythonpath)
        if done.returncode:
            raise RuntimeError(f"{model.name}: {done.stderr.strip().splitlines()[-1]}")
        report = json.loads(Path(f"{d}/report.json").read_text())
    timed = {k["name"]: k for k in report["cycles"]["per_kernel"]}
    for kernel in report["kernels"]:
        t = timed.get(kernel["name"], {})
        kernel["us"] = t.get("us", 0.0) + t.get("launch_us", 0.0) + t.get("workspace_us", 0.0)
    return report["kernels"]


def _layer_of(kernel: dict) -> int | None:
    """The layer of a kernel's last op (None outside the layers)."""
    for node in reversed(kernel.get("nodes", [])):
        for scope, per_layer in LAYER_SCOPES:
            found = scope.search(node)
            if found:
                return int(found.group(1)) // per_layer
    return None


def _units(kernels: list[dict]) -> Counter[str]:
    return Counter(k["unit"] for k in kernels)


def _summary(kernels: list[dict]) -> dict[str, float]:
    """Kernels per unit, their total and their estimated µs."""
    units = _units(kernels)
    found: dict[str, float] = {u: units[u] for u in UNITS}
    found["total"] = sum(units[u] for u in UNITS)
    found["us"] = round(sum(k["us"] for k in kernels), 1)
    return found


def zoo_layer(name: str, pythonpath: str, platform: str) -> dict[str, float]:
    """Kernels per unit (and µs) of the second layer of zoo model ``name``."""
    model = MODELS[name]
    kernels = _kernels(model.path(), make_inputs(model, 0), pythonpath, platform)
    return _summary([k for k in kernels if _layer_of(k) == 1])


def calibration_layer(seq: int, pythonpath: str, platform: str) -> dict[str, float]:
    """Kernels per unit (and µs) of one BERT-base layer: the 2-layer build's minus the
    1-layer's."""
    base = calibration_models.BERT_SIZES["bert_base"]
    counts: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as d:
        for layers in (1, 2):
            name = f"bert_base_{layers}_layers"
            calibration_models.BERT_SIZES[name] = replace(base, layers=layers)
            try:
                model = calibration_models.bert(name, 1, seq, "random", 0, "float32")
            finally:
                del calibration_models.BERT_SIZES[name]
            path = Path(d) / f"{name}.onnx"
            onnx.save(model, str(path))
            counts.append(_summary(_kernels(path, {}, pythonpath, platform)))
    return {key: round(counts[1][key] - counts[0][key], 1) for key in counts[0]}


def measure(seq: int, pythonpath: str, platform: str) -> dict[str, dict[str, float]]:
    """Per layer kind: kernels per unit of one layer, their total and estimated µs."""
    found = {kind: zoo_layer(n, pythonpath, platform) for n, kind in ZOO_KINDS.items()}
    found[CALIBRATION_KIND] = calibration_layer(seq, pythonpath, platform)
    return found


def table(after: dict[str, dict[str, float]], before: dict[str, dict[str, float]] | None) -> str:
    def cell(kind: str, key: str) -> str:
        def show(v: float) -> str:
            return f"{v:g}"

        now = show(after[kind][key])
        return now if before is None else f"{show(before[kind][key])} -> {now}"

    header = ("layer kind", *UNITS, "total", "µs", f"<= {TARGET}")
    rows = [
        (
            kind,
            *(cell(kind, u) for u in (*UNITS, "total", "us")),
            "yes" if c["total"] <= TARGET else "no",
        )
        for kind, c in after.items()
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in (header, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seq", type=int, default=128, help="calibration BERT's sequence length")
    ap.add_argument("--baseline", help="a checkout to measure 'before' with (PYTHONPATH)")
    ap.add_argument("--json", help="write the counts here")
    ap.add_argument("--platform", default=DEFAULT_PLATFORM, help="the preset compiled for")
    args = ap.parse_args(argv)
    after = measure(args.seq, str(ROOT), args.platform)
    before = None if args.baseline is None else measure(args.seq, args.baseline, args.platform)
    print(f"kernels per transformer layer on {args.platform} (calibration BERT at seq {args.seq})")
    print(table(after, before))
    if args.json:
        Path(args.json).write_text(json.dumps({"after": after, "before": before}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
