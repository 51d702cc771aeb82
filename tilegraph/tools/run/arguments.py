"""The command line of ``tilegraph-run`` (:mod:`tilegraph.tools.run.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tilegraph.cost_model.cycles.simulate import LAUNCH_MODES
from tilegraph.passes.pipelines import with_small_channel
from tilegraph.target import PRECISIONS
from tilegraph.tools.arg_types import non_negative_float, non_negative_int, positive_int
from tilegraph.tools.run.shapes import add_shape_arguments


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """``argv`` parsed (the process's arguments when None). The pipeline is O2 unless given
    or ``--reference``; ``--small-channel`` rewrites it (:func:`with_small_channel`). A bad
    option or value exits 2 with argparse's usage message."""
    ap = argparse.ArgumentParser(
        prog="tilegraph-run", description="compile and run a model with the reference interpreter"
    )
    ap.add_argument("model", help=".onnx or .mlir file")
    ap.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="an input from a .npy or ONNX .pb file (repeatable)",
    )
    add_shape_arguments(ap)
    ap.add_argument("--seed", type=non_negative_int, default=0, help="seed of random inputs")
    ap.add_argument("-p", "--pipeline", default="", help="pass pipeline (e.g. O1)")
    ap.add_argument(
        "--entry",
        metavar="NAME",
        help="the function to run in a module of several (default: main, else the one "
        "function no other function calls)",
    )
    ap.add_argument("--compare", action="store_true", help="compare with onnxruntime")
    ap.add_argument(
        "--check-each-pass",
        action="store_true",
        help="run the reference interpreter after every pass of the pipeline and name the "
        "first pass that changes the outputs beyond --check-rtol/--check-atol",
    )
    ap.add_argument("--check-rtol", type=non_negative_float, default=1e-4)
    ap.add_argument("--check-atol", type=non_negative_float, default=1e-5)
    ap.add_argument(
        "--rtol",
        type=non_negative_float,
        default=None,
        help="--compare's relative tolerance (default: by output type, 1e-3 for float32, "
        "2^-7 for float16)",
    )
    ap.add_argument(
        "--atol",
        type=non_negative_float,
        default=None,
        help="--compare's absolute tolerance (default: by output type, 1e-4 for float32, "
        "2^-8 of the largest |value| for float16)",
    )
    ap.add_argument("--save-outputs", metavar="DIR", help="write <output>.npy files")
    ap.add_argument("--json", metavar="FILE", help="write the report as JSON")
    ap.add_argument(
        "--profile",
        nargs="?",
        const=15,
        type=positive_int,
        metavar="N",
        help="print the cycle model's estimate on --platform: the N slowest kernels (15)",
    )
    ap.add_argument("--trace", metavar="FILE", help="write the cycle model's Chrome/Perfetto trace")
    ap.add_argument(
        "--trace-kernel",
        metavar="NAME",
        help="the kernel whose pipes --trace shows (default: the slowest)",
    )
    ap.add_argument(
        "--no-format-report",
        action="store_true",
        help="skip the TransData report of the naive, ge and optimal strategies",
    )
    ap.add_argument(
        "--platform",
        default="",
        help="hardware preset of the passes, the tiles and the report, set as the module's "
        "target (default: the model's tilegraph.target, else the default preset)",
    )
    ap.add_argument(
        "--reference",
        action="store_true",
        help="run the graph level with the reference interpreter (no tile lowering)",
    )
    ap.add_argument(
        "--executor",
        choices=("fast", "interpret"),
        default="fast",
        help="how the tiled kernels run: compiled to Python (fast) or interpreted op by op",
    )
    ap.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="list every fused group the lowering split (default: the first three)",
    )
    ap.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress display (it shows only when stderr is a terminal)",
    )
    ap.add_argument(
        "--no-verify-sync",
        dest="verify_sync",
        action="store_false",
        help="skip verify-sync, the pipe-queue check of every kernel's flags after lowering",
    )
    ap.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="",
        help="origin, fp16/bf16 (the cube's inputs rounded), ATC's --precision_mode values "
        "(force_fp16, allow_mix_precision*, ...: docs/precision.md) or int8 (a QDQ model's "
        "quantised convolutions and matmuls on the int8 cube); default: the module's target's",
    )
    ap.add_argument(
        "--keep-dtype",
        metavar="FILE",
        help="ATC's --keep_dtype: ops (node names, OpType::T) that keep float32 under "
        "force_fp16 / allow_mix_precision*",
    )
    ap.add_argument(
        "--launch",
        choices=LAUNCH_MODES,
        default="sunk",
        help="how the cycle model schedules the kernels: sunk (a compiled model's tasks on "
        "the device, the default) or host (launched one by one from the host)",
    )
    ap.add_argument(
        "--estimate",
        action="store_true",
        help="compile and print the cycle model's estimate without running anything "
        "(dynamic dims need --shape or --dim)",
    )
    ap.add_argument(
        "--small-channel",
        action="store_true",
        help="ATC's --enable_small_channel=1: convolutions of at most 4 input channels (an "
        "image stem) take the C04 layouts (NC1HWC0_C04 data, FRACTAL_Z_C04 weights)",
    )
    ap.add_argument(
        "--tune-db",
        metavar="FILE",
        help="apply a tuning database (tilegraph-tune): its best tiling parameters on the "
        "kernels it knows, and its graph-level choice when the pipeline is O2 (every compile "
        "of --shape / --sweep too)",
    )
    args = ap.parse_args(argv)
    if not args.reference and not args.pipeline:
        args.pipeline = "O2"
    if args.small_channel:
        try:
            args.pipeline = with_small_channel(args.pipeline or "O2")
        except ValueError as e:
            ap.error(str(e))
    return args
