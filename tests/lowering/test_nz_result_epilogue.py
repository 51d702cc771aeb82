"""A FRACTAL_NZ matmul result whose elementwise epilogue ends in its NZ -> ND conversion.

BERT-style poolers are ``trans_data, gemm, tanh, trans_data`` groups: the planner keeps the
Gemm's result FRACTAL_NZ, the tanh follows it in NZ and the group converts back to ND. The
cube strategy takes the conversion first (fixpipe's nz2nd writes the ND tile) and runs the
tanh on that tile, so the group is one kernel (a mix kernel on decoupled presets, one cube
kernel on the coupled 310P) instead of cube + tanh + trans_data. Every level must agree,
also for ragged M / N blocks and NaN in an NZ operand's padding.
"""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_nhwc_out import zoo_report
from tests.lowering.test_tile_differential import (
    NAN,
    Graph,
    Levels,
    assert_matches,
    assert_no_nan,
    run_levels,
)
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import FixpipeOp
from tilegraph.lowering.conversion.graph_to_kernels_remarks import SPLIT_KIND, lowering_remarks
from tilegraph.lowering.conversion.tiling import matmul_block
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics

PRESETS = ("ascend910b", "ascend310p")


def _pooler(m: int, k: int, n: int, epilogue: str = "tanh", nz_a: bool = False):
    """``epilogue(x @ w.T + b)`` of an (m, k) x; x held as FRACTAL_NZ when ``nz_a`` (its
    padding can then hold NaN)."""
    g = Graph()
    if nz_a:
        t = TensorType([m, k], element_type_of("float32"), "ND", "FRACTAL_NZ")
        x = g.b.block.insert_arg(t, len(g.b.block.args))
        g.arrays.append(g.rng.standard_normal((m, k)).astype("float32"))
    else:
        x = g.input([m, k])
    y = g.op("gemm", x, g.const([n, k]), g.const([n]), transB=1)
    return g.b.build(g.op(epilogue, y)), g.arrays


def _nz_result_group(module: ModuleOp) -> bool:
    """The O2 module converts an NZ result back to ND (the pattern under test)."""
    return any(
        isinstance(op, TransDataOp) and "FRACTAL_NZ" in str(op.input.type) for op in module.walk()
    )


def _run(platform: str, m: int, k: int, n: int, **kw) -> Levels:
    module, inputs = _pooler(m, k, n, **kw.pop("build", {}))
    return run_levels(module, inputs, platform, **kw)


@pytest.mark.parametrize("platform", PRESETS)
@pytest.mark.parametrize(("m", "k", "n"), [(3, 40, 37), (1, 16, 16), (37, 48, 70)])
def test_pooler_is_one_kernel_and_agrees(platform: str, m: int, k: int, n: int):
    levels = _run(platform, m, k, n)
    assert_matches(levels)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == ("cube" if platform == "ascend310p" else "mix")
    # fixpipe writes the accumulator as ND (nz2nd) onto UB, where the tanh runs
    fixpipes = [op for op in levels.module.walk() if isinstance(op, FixpipeOp)]
    assert fixpipes and all(op.layout.data == "nd" for op in fixpipes)


@pytest.mark.parametrize("platform", PRESETS)
def test_ragged_blocks(platform: str, monkeypatch):
    """37 x 70 in blocks of 2 x 2 fractals: M's and N's last blocks are ragged."""
    monkeypatch.setattr(matmul_block, "_heuristic_block", lambda *args: (2, 2, 1))
    levels = _run(platform, 37, 32, 70)
    assert_matches(levels)
    (kernel,) = levels.tiled_kernels
    assert kernel.tiles > 1


@pytest.mark.parametrize("platform", PRESETS)
def test_nan_padding_does_not_leak(platform: str, monkeypatch):
    """x held as FRACTAL_NZ with NaN in its padding rows; ragged blocks."""
    monkeypatch.setattr(matmul_block, "_heuristic_block", lambda *args: (2, 2, 1))
    levels = _run(platform, 37, 32, 40, build={"nz_a": True}, pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels)
    assert len(levels.tiled_kernels) == 1


def test_relu_goes_to_fixpipe():
    """``gemm, relu, trans_data`` (DLRM's MLP): the ReLU is fixpipe's, no vector work."""
    module, inputs = _pooler(5, 40, 24, "relu")
    levels = run_levels(module, inputs, "ascend910b")
    assert_matches(levels)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "cube"
    (fixpipe,) = [op for op in levels.module.walk() if isinstance(op, FixpipeOp)]
    assert fixpipe.relu is not None and fixpipe.relu.value.data
    assert fixpipe.layout.data == "nd"


def test_the_pattern_is_an_nz_result():
    """The planner does make these groups (else the tests above test nothing new)."""
    module, _ = _pooler(3, 40, 37)
    run_pipeline("set-target{platform=ascend910b},O2", make_context(), module)
    assert _nz_result_group(module)


# hf_t5's Q·Kᵀ + position bias: the bias is held in FRACTAL_NZ, so the add cannot run on the
# ND tile fixpipe writes; the group splits, saying so.
NZ_OPERAND = """
func.func @main(%x: !layout.tensor<20x40xf32>, %w: !layout.tensor<40x37xf32, ND -> FRACTAL_NZ [3, 3, 16, 16]>,
                %p: !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>) -> !layout.tensor<20x37xf32> {
  %y = graph.fused "fused_trans_data_matmul_add_trans_data_0" <out_elemwise_fusable> (%x, %w, %p) : (!layout.tensor<20x40xf32>, !layout.tensor<40x37xf32, ND -> FRACTAL_NZ [3, 3, 16, 16]>, !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>) -> !layout.tensor<20x37xf32> {
  ^bb0(%x1: !layout.tensor<20x40xf32>, %w1: !layout.tensor<40x37xf32, ND -> FRACTAL_NZ [3, 3, 16, 16]>, %p1: !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>):
    %x2 = layout.trans_data %x1 : !layout.tensor<20x40xf32> -> !layout.tensor<20x40xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
    %m = graph.matmul %x2, %w1 {layout.kernel = "cube"} : (!layout.tensor<20x40xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>, !layout.tensor<40x37xf32, ND -> FRACTAL_NZ [3, 3, 16, 16]>) -> !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
    %a = graph.add %m, %p1 {layout.kernel = "any", layout.shared = "FRACTAL_NZ"} : !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]>
    %o = layout.trans_data %a : !layout.tensor<20x37xf32, ND -> FRACTAL_NZ [3, 2, 16, 16]> -> !layout.tensor<20x37xf32>
    graph.yield %o : !layout.tensor<20x37xf32>
  }
  func.return %y : !layout.tensor<20x37xf32>
}
"""


def test_an_nz_epilogue_operand_is_refused_with_its_reason():
    module = parse_mlir(NZ_OPERAND)
    with collecting_statistics() as stats:
        run_pipeline(
            "set-target{platform=ascend910b},lower-graph-to-kernels", make_context(), module
        )
    (split,) = [r for r in lowering_remarks(stats) if r.kind == SPLIT_KIND]
    assert split.details["strategy"] == "cube"
    assert "FRACTAL_NZ operand of graph.add" in split.details["reason"]


def test_zoo_hf_bert_pooler_is_not_split(tmp_path):
    """The zoo's hf_bert (its pooler ``trans_data, gemm, tanh, trans_data``): the lowering
    section lists no cube group split, and the run matches onnxruntime."""
    lowering = zoo_report("hf_bert", tmp_path)["lowering"]
    assert [g for g in lowering["split_groups"] if g["strategy"] == "cube"] == []
    assert lowering["groups_split"] == len(lowering["split_groups"])
