"""``split-cores``: which loop is shared out, and that the blocks together compute every
tile exactly once (both executors, against the unsplit kernel)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.ir import Block

from tilegraph.dialects.tile import CopyOp, LaunchOp, scoped_memref
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import light_model
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.split_cores import choose_split_loop, loop_trips
from tilegraph.lowering.tiling.builder import KernelBuilder
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime.tile_interpreter import TileCounters
from tilegraph.runtime.tiles import run_tiles
from tilegraph.tools.context import make_context


def _nest(outer: int, inner: int) -> func.FuncOp:
    """A kernel with a parallel loop of ``outer`` trips around one of ``inner`` trips."""
    fn = func.FuncOp("k", ((), ()))
    src = fn.body.block.insert_arg(scoped_memref((outer, inner, 16), f32, "GM"), 0)
    dst = fn.body.block.insert_arg(scoped_memref((outer, inner, 16), f32, "GM"), 1)
    b = KernelBuilder(fn.body.block, hardware_preset("test"))
    ub = b.buffer((1, 1, 16), f32, "UB", "tile")
    with b.loop(outer, parallel=True, name="i") as i, b.loop(inner, parallel=True) as j:
        zero = b.index(0)
        b.add(CopyOp(src, [i, j, zero], ub, [zero, zero, zero]))
        b.add(CopyOp(ub, [zero, zero, zero], dst, [i, j, zero]))
    b.finish()
    fn.body.block.add_op(func.ReturnOp())
    return fn


@pytest.mark.parametrize(
    ("outer", "inner", "cores", "chosen_trips"),
    [
        (4, 8, 2, 4),  # the outer loop has enough trips
        (2, 8, 4, 8),  # it has not: the inner one does
        (2, 3, 8, 3),  # neither: the one with more trips
    ],
)
def test_the_split_loop_is_the_outermost_with_enough_trips(outer, inner, cores, chosen_trips):
    chosen = choose_split_loop(_nest(outer, inner), cores)
    assert chosen is not None
    loop, trips = chosen
    assert trips == chosen_trips == loop_trips(loop)


def test_a_kernel_without_parallel_loops_is_not_split():
    fn = func.FuncOp("k", ((), ()), Block())
    assert choose_split_loop(fn, 4) is None


def _input(model) -> np.ndarray:
    inits = {i.name for i in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in inits]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def squeezenet() -> tuple[ModuleOp, np.ndarray]:
    model = light_model("squeezenet")
    module = load_onnx(model)
    run_pipeline("O2,lower-graph-to-kernels,tile-kernels", make_context(), module)
    return module, _input(model)


def test_blocks_compute_every_tile_once(squeezenet):
    module, x = squeezenet
    split = module.clone()
    run_pipeline("split-cores", make_context(), split)
    blocks = [op.block_count for op in split.walk() if isinstance(op, LaunchOp)]
    assert max(blocks) == hardware_preset("ascend910b").cube_cores
    assert sum(b > 1 for b in blocks) > len(blocks) // 2

    counted = {}
    outputs = {}
    for name, m in (("whole", module), ("split", split)):
        counters = TileCounters()
        outputs[name] = run_tiles(m, [x], executor="interpret", counters=counters)[0]
        counted[name] = counters.ops
    # Each block runs its share of the iterations: the products and the stores of output
    # tiles ran as often as without the split (none twice, none skipped). Loads in a loop
    # around the split one are repeated by every block that needs them.
    for op in ("tile.mmad", "tile.fixpipe"):
        assert counted["split"][op] == counted["whole"][op], op
    assert counted["split"]["tile.copy"] >= counted["whole"]["tile.copy"]
    np.testing.assert_allclose(outputs["split"], outputs["whole"], rtol=1e-6, atol=1e-7)
    fast = run_tiles(split, [x], executor="fast")[0]
    np.testing.assert_allclose(fast, outputs["whole"], rtol=1e-5, atol=1e-6)


def test_cores_option_overrides_the_preset(squeezenet):
    module, _ = squeezenet
    split = module.clone()
    run_pipeline("split-cores{cores=3}", make_context(), split)
    blocks = {op.block_count for op in split.walk() if isinstance(op, LaunchOp)}
    assert blocks <= {1, 2, 3} and 3 in blocks
