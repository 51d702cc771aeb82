"""L1 panel reuse of the matmul tiling (Ascend C's stepM / stepN): which reuse is chosen,
that the shared operand's panel goes GM -> L1 once per group of output blocks (counted in
the lowered IR), and that the numbers stay right on ragged shapes with both executors."""

from __future__ import annotations

from math import prod

import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

import tilegraph
from tests.lowering.tile_specs import split_target
from tilegraph.dialects.tile import Nd2NzOp
from tilegraph.frontend import load_onnx
from tilegraph.lowering.transforms.split_cores import loop_trips
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline


def _model(m: int, k: int, n: int, gemm: bool = False, dtype: int = TensorProto.FLOAT):
    """``a (m, k) @ b`` as MatMul, or Gemm with ``transB`` and a per-column bias."""
    if gemm:
        node = oh.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1)
        inputs = [("a", [m, k]), ("b", [n, k]), ("c", [n])]
    else:
        node = oh.make_node("MatMul", ["a", "b"], ["y"])
        inputs = [("a", [m, k]), ("b", [k, n])]
    graph = oh.make_graph(
        [node],
        "mm",
        [oh.make_tensor_value_info(name, dtype, shape) for name, shape in inputs],
        [oh.make_tensor_value_info("y", dtype, [m, n])],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def _tiled(model: onnx.ModelProto, options: str) -> func.FuncOp:
    """The one cube kernel of ``model`` after ``tile-kernels{options}`` (not split)."""
    module: ModuleOp = load_onnx(model)
    spec = "{},O1,lower-graph-to-kernels,{}".format(*split_target(options))
    run_pipeline(spec, make_context(), module)
    (kernel,) = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.kernel" in f.attributes
    ]
    return kernel


def _executions(op: Operation) -> int:
    """How often ``op`` runs: the trips of the loops around it."""
    trips = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            trips.append(loop_trips(parent) or 1)
        parent = parent.parent_op()
    return prod(trips)


def _gm_to_l1_loads(kernel: func.FuncOp, source: SSAValue) -> int:
    """Dynamic count of the GM -> L1 ``nd2nz`` loads reading ``source``."""
    return sum(
        _executions(op) for op in kernel.walk() if isinstance(op, Nd2NzOp) and op.src is source
    )


def _loop_names(kernel: func.FuncOp) -> set[str | None]:
    return {op.body.block.args[0].name_hint for op in kernel.walk() if isinstance(op, scf.ForOp)}


def test_a_panel_is_loaded_once_per_group_of_n_blocks():
    # test preset, f32: base block 16 x 16 x 16 here; 16 x 96 @ 96 x 256: 1 M block x 16 N
    # blocks, K = 6 base steps. A's whole-K panel (16 x 96 f32, 6 KiB) fits half of L1 beside
    # a B window: it is loaded once per group of N blocks; B streams for every block.
    kernel = _tiled(_model(16, 96, 256), "platform=test")
    a, b = kernel.args[0], kernel.args[1]
    a_loads, b_loads = _gm_to_l1_loads(kernel, a), _gm_to_l1_loads(kernel, b)
    assert b_loads in (16 * 6, 16 * 3, 16 * 2)  # every block, every K window
    assert 2 <= 16 // a_loads and 16 % a_loads == 0, a_loads
    (a_load,) = [op for op in kernel.walk() if isinstance(op, Nd2NzOp) and op.src is a]
    # the panel load sits in the group loop, outside the loop over the group's N blocks
    loop = a_load.parent_op()
    assert isinstance(loop, scf.ForOp) and loop.body.block.args[0].name_hint == "ng"
    inner = [op for op in loop.body.block.ops if isinstance(op, scf.ForOp)]
    assert [op.body.block.args[0].name_hint for op in inner] == ["nb"]


def test_b_panel_is_loaded_once_per_group_of_m_blocks():
    # 64 x 96 @ 96 x 256 on test: base block 32 x 16 x 16 (4 x 16 blocks): B's 96 x 16
    # panel (6 KiB) is kept over a group of M blocks (stepM) while A streams.
    kernel = _tiled(_model(64, 96, 256), "platform=test")
    a, b = kernel.args[0], kernel.args[1]
    blocks = 2 * 16
    b_loads = _gm_to_l1_loads(kernel, b)
    assert b_loads < blocks and blocks % b_loads == 0, b_loads
    assert _gm_to_l1_loads(kernel, a) == blocks * 6
    assert "mb" in _loop_names(kernel)


def test_ragged_shapes_reuse_only_whole_groups():
    # 300 x 40 @ 40 x 33: 19 M blocks, 3 N blocks (the last one ragged: 33 = 2·16 + 1)
    kernel = _tiled(_model(300, 40, 33), "platform=test")
    a_loads = _gm_to_l1_loads(kernel, kernel.args[0])
    b_loads = _gm_to_l1_loads(kernel, kernel.args[1])
    assert a_loads + b_loads < (19 * 3) * 2 * 3  # fewer than two windows per block step
    assert "nb" in _loop_names(kernel) or "mb" in _loop_names(kernel)


def test_no_reuse_when_the_panel_does_not_fit_or_cores_would_idle():
    # K = 4096 fp16 with the tuned block: a 128 x 4096 panel is 1 MiB, L1 512 KiB.
    tuned = 'platform=ascend910b base-block="128,256,64"'
    kernel = _tiled(_model(512, 4096, 1024, dtype=TensorProto.FLOAT16), tuned)
    blocks = 4 * 4
    assert _gm_to_l1_loads(kernel, kernel.args[0]) == blocks * 16  # 16 windows of 4 K steps
    # the panel would fit (K = 768), but 2 x 4 blocks on 24 cores: groups would idle cores
    kernel = _tiled(_model(256, 768, 1024, dtype=TensorProto.FLOAT16), tuned)
    assert not _loop_names(kernel) & {"nb", "mb"}


def test_tuned_block_keeps_a_panel_when_it_fits_l1():
    # 4096 x 768 @ 768 x 5120 fp16, (128, 256, 64): 32 x 20 blocks; A's panel 192 KiB
    kernel = _tiled(_model(4096, 768, 5120, dtype=TensorProto.FLOAT16),
                    'platform=ascend910b base-block="128,256,64"')  # fmt: skip
    a_loads = _gm_to_l1_loads(kernel, kernel.args[0])
    assert a_loads < 32 * 20 and (32 * 20) % a_loads == 0


@pytest.mark.parametrize("executor", ["fast", "interpret"])
@pytest.mark.parametrize(
    ("m", "k", "n", "gemm"),
    [(64, 96, 256, False), (37, 45, 70, True), (300, 40, 33, False), (45, 50, 190, True)],
)
def test_reused_panels_compute_the_product(m, k, n, gemm, executor):
    model = tilegraph.compile(
        _model(m, k, n, gemm), pipeline="O1", target="tiles", platform="test", executor=executor
    )
    rng = np.random.default_rng(m * k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if gemm else (k, n)).astype(np.float32)
    inputs = {"a": a, "b": b}
    expected = a @ (b.T if gemm else b)
    if gemm:
        inputs["c"] = rng.standard_normal(n).astype(np.float32)
        expected = expected + inputs["c"]
    (y,) = model(**inputs)
    np.testing.assert_allclose(np.asarray(y), expected, rtol=1e-4, atol=1e-4)
