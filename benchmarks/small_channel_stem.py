"""ResNet-50's stem with and without ATC's small-channel mode (C04), on the cycle model.

Builds ResNet-50 (benchmarks/calibration_models.py, splat weights, float16 as ATC runs it)
at batch 8, compiles it for ascend310p at precision fp16 with ``small_channel`` off and on,
and prints the stem kernel (the one convolution of 3 input channels) and the model total:

    PYTHONPATH=. python benchmarks/small_channel_stem.py [--batch 8] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hardware_validation import DTYPE, calibration_models  # a sibling script (its loader)

import tilegraph
from tilegraph.cost_model.cycles import KernelCycles, ModelCycles, simulate_module

PLATFORM, PRECISION = "ascend310p", "fp16"


def stem_kernel(cycles: ModelCycles) -> KernelCycles:
    """The first cube kernel to launch: the 7x7 stem convolution."""
    by_name = {k.name: k for k in cycles.kernels}
    for name in cycles.launch_order:
        if by_name[name].unit in ("cube", "mix") and "graph.conv2d" in by_name[name].ops:
            return by_name[name]
    raise LookupError("no convolution kernel")


def measure(batch: int, small_channel: bool) -> dict[str, Any]:
    proto = calibration_models.build("resnet50", batch=batch, weights="splat", dtype=DTYPE)
    compiled = tilegraph.compile(
        proto, platform=PLATFORM, precision=PRECISION, small_channel=small_channel
    )
    cycles = simulate_module(compiled.module)
    stem = stem_kernel(cycles)
    return {
        "small_channel": small_channel,
        "stem_kernel": stem.name,
        "stem_us": round(stem.us, 2),
        "stem_bound": stem.bound,
        "stem_cube_utilisation": round(stem.cube_utilisation, 3),
        "stem_l1_l0a_mb": round(stem.bytes_per_path.get("L1->L0A", 0) / 1e6, 1),
        "total_us": round(cycles.total_us, 1),
        "kernel_us": round(cycles.kernel_us, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--json", help="write the numbers to this file")
    args = ap.parse_args()
    rows = [measure(args.batch, small) for small in (False, True)]
    for row in rows:
        print(
            f"small_channel={row['small_channel']!s:5}  stem @{row['stem_kernel']}: "
            f"{row['stem_us']} µs ({row['stem_bound']}, cube {row['stem_cube_utilisation']}, "
            f"L1->L0A {row['stem_l1_l0a_mb']} MB)  model {row['total_us']} µs "
            f"(kernels {row['kernel_us']})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
