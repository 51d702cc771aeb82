"""benchmarks/kernel_validation.py: its measured figures, the graphs it builds for them and
how it counts ratios (no estimate is timed here)."""

from __future__ import annotations

import onnx
import pytest
from onnx import shape_inference

from tests.validation.benchmark_scripts import load_script

kernels = load_script("kernel_validation")


def test_seen_and_kept_back_figures_are_apart():
    seen = {(f.shape, f.b_layout, f.platform, f.kernel) for f in kernels.SEEN}
    kept = {(f.shape, f.b_layout, f.platform, f.kernel) for f in kernels.KEPT_BACK}
    assert len(seen) == len(kernels.SEEN) and len(kept) == len(kernels.KEPT_BACK)
    # no shape is in both sets: the kept-back shapes check the model on kernels not looked at
    assert not {s[0] for s in seen} & {k[0] for k in kept}
    # the split-K page: a BasicMatmul and a split-K time for each of its four shapes
    assert len(kernels.KEPT_BACK) == 8
    assert all(f.platform == "ascend910b" and f.dtype == "float16" for f in kernels.KEPT_BACK)


@pytest.mark.parametrize("fig", kernels.SEEN + kernels.KEPT_BACK, ids=lambda f: f.shape)
def test_every_figure_builds_a_valid_graph(fig):
    model = kernels.matmul_graph(fig)
    onnx.checker.check_model(model, full_check=True)
    inferred = shape_inference.infer_shapes(model, strict_mode=True)
    (out,) = inferred.graph.output
    dims = [d.dim_value for d in out.type.tensor_type.shape.dim]
    assert dims == [fig.m, fig.n]
    ops = [n.op_type for n in model.graph.node]
    # B column-major is a transposed input; B in NZ a constant weight
    assert ops == (["Transpose", "MatMul"] if fig.b_layout == "col" else ["MatMul"])
    assert bool(model.graph.initializer) == (fig.b_layout == "nz")


def test_an_unknown_layout_is_refused():
    fig = kernels.Measured(16, 16, 16, "float16", "zz", "ascend910b", 1.0, "k", "s")
    with pytest.raises(ValueError, match="B layout must be one of row, col, nz"):
        kernels.matmul_graph(fig)


def _row(shape: str, measured: float, estimated: float) -> dict[str, object]:
    return {
        "shape": shape,
        "b_layout": "row",
        "platform": "ascend910b",
        "measured_us": measured,
        "ratio": estimated / measured,
    }


def test_the_summary_counts_unrounded_ratios_and_the_fastest_kernel_per_shape():
    # 0.696 prints as 0.70 and is outside ±30%; 1.30 is inside
    assert kernels.within([0.696, 0.7, 1.3, 1.31]) == 2
    rows = [_row("a", 10.0, 6.0), _row("a", 8.0, 6.0), _row("b", 100.0, 140.0)]
    # ratios 0.60, 0.75, 1.40: one within; the fastest kernel of "a" (8 µs, 0.75) is
    text = kernels.summary(rows)
    assert text.startswith("1 of 3 within ±30% (ratios 0.60-1.40)")
    assert text.endswith("against the fastest kernel of each shape 1 of 2")
    # with a same-tiles estimate on one row, its count follows
    rows[2]["same_tiles_ratio"] = 1.2
    assert kernels.summary(rows).endswith(
        "with the measured kernel's block 1 of 1 (ratios 1.20-1.20)"
    )


def test_the_pipeline_compiles_with_the_measured_kernels_block_when_asked():
    fig = kernels.SEEN[0]
    plain = kernels.pipeline(fig)
    assert plain.startswith('set-target{platform="ascend910b:cube_cores=20,vector_cores=40"')
    assert (
        ",O2,lower-graph-to-kernels,alias-reshapes,place-concat{strided=false},tile-kernels,"
        in plain
    )
    blocked = kernels.pipeline(fig, (128, 256, 64))
    assert 'tile-kernels{base-block="128,256,64"}' in blocked
    # only the tiling differs
    assert blocked.replace('{base-block="128,256,64"}', "") == plain


def test_every_measured_block_fits_the_cube_buffers():
    # the blocks are in elements, multiples of 16, and a tile-kernels option accepts them
    from tilegraph.lowering.conversion.tiling.matmul_block import parse_base_block

    for fig in kernels.SEEN + kernels.KEPT_BACK:
        if fig.block is not None:
            assert parse_base_block(",".join(map(str, fig.block))) == fig.block
    # the split-K kernel has no counterpart in tilegraph: no same-tiles estimate
    assert {f.kernel for f in kernels.KEPT_BACK if f.block is None} == {"34_single_core_splitk"}


def test_the_smallest_figure_estimates_with_either_tiling():
    fig = kernels.SEEN[-1]  # 256 x 1024 x 512, the tuner's best kernel: 64 x 128 blocks
    assert (fig.m, fig.n, fig.block) == (256, 512, (64, 128, 64))
    own = kernels.estimate(fig)
    same = kernels.estimate(fig, fig.block)
    (k_own,) = own.kernels
    (k_same,) = same.kernels
    # tilegraph's default block is 128 x 128 here (2 x 4 output blocks); the kernel's
    # 64 x 128 gives 4 x 4, each on a core of its own
    assert (k_own.blocks, k_same.blocks) == (8, 16)
    assert k_own.unit == k_same.unit == "cube" and own.kernel_us > 0 and same.kernel_us > 0
