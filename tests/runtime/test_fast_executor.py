"""The fast executor against the interpreter, kernel by kernel, with and without batching.

Every kernel of a lowered model is run on random GM buffers (inputs and outputs alike) by
xDSL's interpreter, by the fast executor running each tile one by one, and by the fast
executor running the iterations of parallel loops together; the buffers must end equal.
Random contents of the output buffers catch a kernel that leaves part of its output
unwritten or writes outside its tiles (a ragged group tile spilling into the next group).
The executors add a tile's K steps in the same order, but BLAS may sum within one product
in another order for a batch than for one tile: buffers agree to float32 rounding of the
sums, ~1e-6 of the largest value.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

import tilegraph
from tilegraph.dialects.tile import memref_shape
from tilegraph.dialects.tile.host import numpy_dtype
from tilegraph.frontend.light_models import light_model
from tilegraph.lowering.analysis.kernel_attrs import mix_part
from tilegraph.runtime.fast_executor import compile_module
from tilegraph.runtime.tiles import interpreter_for


def kernels(module):
    return [f for f in module.ops if isinstance(f, func.FuncOp) and "tile.kernel" in f.attributes]


def random_buffers(fn: func.FuncOp, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(memref_shape(t)).astype(numpy_dtype(t))
        for t in fn.function_type.inputs.data
    ]


def assert_close(actual: np.ndarray, expected: np.ndarray, name: str) -> None:
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=2e-6 * scale, err_msg=name)


@pytest.mark.parametrize(
    "name", ["squeezenet", "shufflenet", pytest.param("bvlc_alexnet", marks=pytest.mark.slow)]
)
def test_batched_and_one_by_one_agree_on_every_kernel(name):
    module = tilegraph.compile(light_model(name)).module
    batched, one_by_one = compile_module(module, batch=True), compile_module(module, False)
    checked = 0
    for fn in kernels(module):
        if fn.attributes["tile.kernel"].data == "host" or mix_part(fn) == "aiv":  # type: ignore[attr-defined]
            continue  # a mix kernel's AIV part runs with its AIC part
        a = random_buffers(fn, checked)
        b = [x.copy() for x in a]
        name = fn.sym_name.data
        if mix_part(fn) == "aic":
            aiv = name.removesuffix("_mix_aic") + "_mix_aiv"
            batched.run_mix(name, aiv, a, aiv_blocks=2)  # 910B: 2 AIVs per group
            one_by_one.run_mix(name, aiv, b, aiv_blocks=2)
        else:
            batched.run(name, a)
            one_by_one.run(name, b)
        for x, y in zip(a, b, strict=True):
            assert_close(x, y, fn.sym_name.data)
        checked += 1
    assert checked > 10


def test_fast_executor_matches_the_interpreter_on_every_kernel():
    module = tilegraph.compile(light_model("squeezenet")).module
    fast = compile_module(module)
    interpreter = interpreter_for(module)
    for i, fn in enumerate(kernels(module)):
        a = random_buffers(fn, i)
        b = [x.copy() for x in a]
        fast.run(fn.sym_name.data, a)
        interpreter.call_op(fn, tuple(b))
        for x, y in zip(a, b, strict=True):
            assert_close(x, y, fn.sym_name.data)


def test_generated_source_shows_batched_loops():
    """A conv kernel's parallel output-row loop runs as one batch (np.arange, _b buffers)."""
    module = tilegraph.compile(light_model("squeezenet")).module
    compiled = compile_module(module)
    sources = [compiled.source(fn.sym_name.data) for fn in kernels(module)]
    assert any("np.arange" in s and "_b = _slots(" in s for s in sources)
    assert "np.arange" not in "".join(
        compile_module(module, batch=False).source(fn.sym_name.data) for fn in kernels(module)
    )


def test_a_module_rewritten_after_a_run_is_recompiled():
    """run_tiles caches the fast executor's code per module; a pass that rewrites the module
    (here tile-kernels after a run of the macro kernels) must not run stale code."""
    from tilegraph.builder import GraphBuilder
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline
    from tilegraph.runtime.tiles import fast_module, run_tiles

    b = GraphBuilder()
    x = b.input("x", [1, 20, 9, 9], "float32", "NCHW")
    module = b.build(b.op("relu", x))
    ctx = make_context()
    run_pipeline("set-target{platform=test},O2,lower-graph-to-kernels", ctx, module)
    data = np.random.default_rng(0).standard_normal((1, 20, 9, 9)).astype(np.float32)
    before = fast_module(module)
    run_tiles(module, [data], executor="fast")
    assert fast_module(module) is before  # unchanged module: cached
    run_pipeline("tile-kernels", ctx, module)
    assert fast_module(module) is not before
    assert "np.arange" in "".join(
        fast_module(module).source(f.sym_name.data) for f in kernels(module)
    ) or any("for " in fast_module(module).source(f.sym_name.data) for f in kernels(module))
    np.testing.assert_array_equal(
        run_tiles(module, [data], executor="fast")[0], np.maximum(data, 0)
    )


def test_run_tiles_without_batching_runs_every_tile_by_itself():
    from tilegraph.builder import GraphBuilder
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline
    from tilegraph.runtime.tiles import fast_module, run_tiles

    b = GraphBuilder()
    x = b.input("x", [1, 20, 9, 9], "float32", "NCHW")
    module = b.build(b.op("relu", x))
    run_pipeline(
        "set-target{platform=test},O2,lower-graph-to-kernels,tile-kernels", make_context(), module
    )
    data = np.random.default_rng(0).standard_normal((1, 20, 9, 9)).astype(np.float32)
    (out,) = run_tiles(module, [data], executor="fast", batch=False)
    np.testing.assert_array_equal(out, np.maximum(data, 0))
    one_by_one = "".join(
        fast_module(module, batch=False).source(f.sym_name.data) for f in kernels(module)
    )
    batched = "".join(fast_module(module).source(f.sym_name.data) for f in kernels(module))
    assert "np.arange" not in one_by_one and "for " in one_by_one
    assert "np.arange" in batched


def test_per_tile_ops_name_the_ops_a_batch_runs_tile_by_tile():
    """An arg-max tile has no batched form: its op runs once per tile inside the batch
    and is listed; an elementwise kernel's ops all run batched and list nothing."""
    from tilegraph.builder import GraphBuilder

    def per_tile(op: str, **attrs) -> list[tuple[str, str]]:
        b = GraphBuilder()
        x = b.input("x", [2, 19, 6, 5], "float32", "NCHW")
        module = tilegraph.compile(b.build(b.op(op, x, **attrs)), platform="test").module
        return compile_module(module).per_tile_ops

    assert per_tile("relu") == []
    found = per_tile("arg_max", axis=1)
    assert found and {name for _, name in found} == {"tile.varg"}
    assert (
        compile_module(
            tilegraph.compile(light_model("squeezenet")).module, batch=False
        ).per_tile_ops
        == []
    )  # nothing is batched: no batch to fall out of
