"""Cube results on a preset without an L0C -> GM path (``ascend310p``: its CANN platform
configuration lacks ``fix_pipe_l0c2out``): fixpipe L0C -> UB, then ``tile.copy`` UB -> GM.

Each case is lowered through the whole pipeline (tiling, split-cores, inject-sync, memory
planning, verify-sync) and run by both executors against the graph level, with its NCHW
inputs held as NC1HWC0 and NaN in the padding lanes. The shapes leave ragged tails on the
310P's tiles (rows off the tile height, M / N off the base block, channels off C0). No
fixpipe writes GM; the planned module passes verify-target and the pipe-queue checker.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.traits import SymbolTable

import tests.lowering.test_tile_differential as differential
from tests.lowering.test_tile_differential import CUBE, Graph
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.dialects.tile import CopyOp, FixpipeOp, scope_of
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.sync_check import check_sync
from tilegraph.lowering.analysis.target_rules import target_violations
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.runtime.tiles import run_tiles

NAN = float("nan")
PLATFORM = "ascend310p"


def conv_plain(g: Graph) -> list:
    """No epilogue (a max pool reads the NC1HWC0 result): 37 output rows of 40 pixels
    (ragged row tiles), 40 channels (the last C1 with 8 valid lanes)."""
    x = g.input([1, 20, 37, 40], "NCHW")
    y = g.op("conv2d", x, g.const([40, 20, 3, 3], "NCHW"), pads=[1, 1, 1, 1])
    return [g.op("max_pool", y, kernel_shape=[2, 2], strides=[2, 2])]


def conv_bias_relu(g: Graph) -> list:
    """Bias and ReLU, both on fixpipe's way into UB."""
    x = g.input([1, 20, 29, 33], "NCHW")
    w, bias = g.const([24, 20, 3, 3], "NCHW"), g.const([24])
    y = g.op("relu", g.op("conv2d", x, w, bias, strides=[2, 2], pads=[1, 1, 1, 1]))
    return [g.op("max_pool", y, kernel_shape=[2, 2], strides=[2, 2])]


def matmul_ragged(g: Graph) -> list:
    """M = 150 (8 + 2 fractals, the last 6 rows of 16), N = 300 (16 + 3 fractals)."""
    return [g.op("matmul", g.input([150, 45]), g.const([45, 300]))]


def gemm_bias(g: Graph) -> list:
    """A per-column bias, added by fixpipe."""
    return [g.op("gemm", g.input([150, 33]), g.const([270, 33]), g.const([270]), transB=1)]


def matmul_nz(g: Graph) -> list:
    """Two matmuls: the first result stays FRACTAL_NZ (fixpipe writes whole fractals into
    UB, the copy takes them out), the second ends in ND. Small weights: the 300-term sums
    of the second would otherwise differ between accumulation orders by more than the
    tolerance."""
    w1, w2 = (0.1 * g.rng.standard_normal(s).astype(np.float32) for s in ([45, 300], [300, 70]))
    y = g.op("matmul", g.input([150, 45]), g.b.constant(w1))
    return [g.op("matmul", y, g.b.constant(w2))]


CASES = {
    "conv": (conv_plain, "graph.conv2d"),
    "conv_bias_relu": (conv_bias_relu, "graph.conv2d"),
    "matmul": (matmul_ragged, "graph.matmul"),
    "gemm_bias": (gemm_bias, "graph.gemm"),
    "matmul_nz": (matmul_nz, "graph.matmul"),
}


def _lowered(build) -> tuple[ModuleOp, list[np.ndarray], list[np.ndarray]]:
    g = Graph(padded=True)
    module = g.b.build(*build(g))
    run_pipeline(f"set-target{{platform={PLATFORM}}},O2", make_context(), module)
    reference = run_reference(module, g.arrays, pad_value=NAN)
    run_pipeline(lowering_pipeline(), make_context(), module)
    module.verify()
    return module, g.arrays, reference


@pytest.fixture(scope="module", params=list(CASES))
def case(request) -> tuple[str, ModuleOp, list[np.ndarray], list[np.ndarray]]:
    build, anchor = CASES[request.param]
    return (anchor, *_lowered(build))


def test_results_leave_l0c_through_ub(case):
    """Every cube kernel: its fixpipe (bias, ReLU on the way) into UB, then the same tile
    UB -> GM by ``tile.copy``, synchronised FIX -> MTE3 (and MTE3 -> FIX for the next)."""
    anchor, module, _, _ = case
    kernels = [k for k in kernel_report(module) if k.unit == CUBE]
    assert any(anchor in k.ops and k.tiles > 1 for k in kernels)
    for kernel in kernels:
        fn = SymbolTable.lookup_symbol(module, kernel.name)
        assert isinstance(fn, func.FuncOp)
        (fixpipe,) = [op for op in fn.walk() if isinstance(op, FixpipeOp)]
        assert scope_of(fixpipe.dst) == "UB"
        (store,) = [op for op in fn.walk() if isinstance(op, CopyOp) and scope_of(op.dst) == "GM"]
        assert store.src is fixpipe.dst
        text = str(fn)
        assert 'src = "FIX", dst = "MTE3"' in text and 'src = "MTE3", dst = "FIX"' in text
    assert target_violations(module) == []
    assert check_sync(module) >= len(kernels)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("executor", ["interpret", "fast"])
def test_matches_the_graph_level(case, executor):
    _, module, inputs, reference = case
    outputs = run_tiles(module, inputs, executor=executor, pad_value=NAN)
    for got, want in zip(outputs, reference, strict=True):
        assert not np.isnan(got).any(), "NaN from the padding lanes"
        np.testing.assert_allclose(got, want, rtol=differential.RTOL, atol=differential.ATOL)


def test_presets_state_their_way_out_of_l0c():
    """Only the 310P lacks L0C -> GM; a decoupled preset cannot (its AIC has no UB)."""
    assert not hardware_preset("ascend310p").l0c_to_gm
    for name in ("ascend910b", "ascend950", "test"):
        assert hardware_preset(name).l0c_to_gm
    with pytest.raises(ValueError, match="no way out of L0C"):
        replace(hardware_preset("ascend910b"), l0c_to_gm=False)
