"""``split-cores``: which loop is shared out, and that the blocks together compute every
tile exactly once (both executors, against the unsplit kernel)."""

from __future__ import annotations

from math import prod

import numpy as np
import onnx.helper as oh
import onnx.numpy_helper as onh
import pytest
from onnx import TensorProto
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32

from tilegraph.dialects.tile import CopyOp, LaunchOp, scoped_memref
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import light_model
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.analysis.kernel_attrs import kernel_unit
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.transforms.split_cores import choose_split_loop, collapse_nest, loop_trips
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.tile_interpreter import TileCounters
from tilegraph.runtime.tiles import run_tiles


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
    ("outer", "inner", "cores", "chosen_loops", "chosen_trips"),
    [
        (4, 8, 2, 1, 4),  # the outer loop shares out evenly: it alone
        (2, 8, 4, 1, 8),  # it does not, the inner one does: the inner one
        (2, 3, 8, 2, 6),  # neither: the collapsed 2 x 3 grid (the busiest core gets 1/6)
        (32, 20, 20, 1, 20),  # N alone is as even as the grid: fewer loops win the tie
        (32, 20, 24, 2, 640),  # on 24 cores only the M x N grid is (27 of 640 per core)
        (32, 20, 4, 1, 32),  # on 4 cores the M loop alone is even: the outermost wins
    ],
)
def test_the_work_loop_leaves_the_busiest_core_the_least(
    outer, inner, cores, chosen_loops, chosen_trips
):
    chosen = choose_split_loop(_nest(outer, inner), cores)
    assert chosen is not None
    nest, trips = chosen
    assert len(nest) == chosen_loops
    assert trips == chosen_trips == prod(loop_trips(loop) or 0 for loop in nest)


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
    with collecting_statistics() as stats:
        run_pipeline("split-cores", make_context(), split)
    # some kernels share a collapsed nest (their M x N grid), and still compute every tile once
    assert stats.as_dict()["split-cores"]["collapsed-nests"] >= 1
    hw = hardware_preset("ascend910b")
    units = {op.sym_name.data: kernel_unit(op) for op in split.ops if isinstance(op, func.FuncOp)}
    launches = [op for op in split.walk() if isinstance(op, LaunchOp)]
    cube = [op.block_count for op in launches if units[op.callee.string_value()] == "cube"]
    vector = [op.block_count for op in launches if units[op.callee.string_value()] == "vector"]
    assert max(cube) == hw.cube_cores and hw.cube_cores < max(vector) <= hw.vector_cores
    blocks = cube + vector
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


def _nest_with_shared_load(outer: int, inner: int, store_outside: bool = False) -> func.FuncOp:
    """``_nest`` with a load into L1 between the loops, which every inner iteration reads
    (a convolution's image before its loop over output-channel tiles); optionally a store
    to GM there too."""
    fn = func.FuncOp("k", ((), ()))
    src = fn.body.block.insert_arg(scoped_memref((outer, inner, 16), f32, "GM"), 0)
    dst = fn.body.block.insert_arg(scoped_memref((outer, inner, 16), f32, "GM"), 1)
    b = KernelBuilder(fn.body.block, hardware_preset("test"))
    l1 = b.buffer((1, inner, 16), f32, "L1", "image")
    ub = b.buffer((1, 1, 16), f32, "UB", "tile")
    with b.loop(outer, parallel=True, name="i") as i:
        zero = b.index(0)
        b.add(CopyOp(src, [i, zero, zero], l1, [zero, zero, zero]))
        if store_outside:
            b.add(CopyOp(ub, [zero, zero, zero], dst, [i, zero, zero]))
        with b.loop(inner, parallel=True) as j:
            b.add(CopyOp(l1, [zero, j, zero], ub, [zero, zero, zero]))
            b.add(CopyOp(ub, [zero, zero, zero], dst, [i, j, zero]))
    b.finish()
    fn.body.block.add_op(func.ReturnOp())
    return fn


def test_work_shared_by_the_inner_loop_is_repeated_per_joint_iteration():
    """2 images x 3 channel tiles on 8 cores: neither loop alone spreads (the busiest core
    gets 1/2 or 1/3), the collapsed 6 do (1/6) — the image load before the inner loop then
    runs in every joint iteration, for its own image."""
    fn = _nest_with_shared_load(2, 3)
    chosen = choose_split_loop(fn, 8)
    assert chosen is not None and len(chosen[0]) == 2 and chosen[1] == 6
    (collapsed,) = [collapse_nest(chosen[0])]
    copies = [op for op in collapsed.body.block.ops if isinstance(op, CopyOp)]
    assert len(copies) == 3  # the image load, then the inner loop's two copies
    assert copies[0].operands[0] is fn.body.block.args[0]


def test_a_gm_store_between_the_loops_keeps_them_apart():
    fn = _nest_with_shared_load(2, 3, store_outside=True)
    chosen = choose_split_loop(fn, 8)
    assert chosen is not None and len(chosen[0]) == 1


def test_a_batch_of_convolutions_spreads_over_images_and_channel_tiles():
    """A batch-2 convolution on the test preset (per image two row tiles, then two
    output-channel tiles) on 4 cores: no loop alone has 4 trips; images x row tiles do, and
    every block computes its tiles (both executors, against the unsplit kernels)."""
    graph = oh.make_graph(
        [oh.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        "conv",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 6, 6])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32, 6, 6])],
        [onh.from_array(np.random.default_rng(1).standard_normal((32, 16, 3, 3), np.float32), "w")],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    module = load_onnx(model)
    pipeline = 'set-target{platform="test"},O2,lower-graph-to-kernels,tile-kernels'
    run_pipeline(pipeline, make_context(), module)
    split = module.clone()
    with collecting_statistics() as stats:
        run_pipeline("split-cores{cores=4}", make_context(), split)
    assert stats.as_dict()["split-cores"]["collapsed-nests"] >= 1
    assert 4 in {op.block_count for op in split.walk() if isinstance(op, LaunchOp)}
    x = np.random.default_rng(0).standard_normal((2, 16, 6, 6)).astype(np.float32)
    whole = run_tiles(module, [x], executor="interpret")[0]
    for executor in ("interpret", "fast"):
        got = run_tiles(split, [x], executor=executor)[0]
        np.testing.assert_allclose(got, whole, rtol=1e-5, atol=1e-5)
