"""``inject-sync`` and the pipe-queue checker (:mod:`tilegraph.lowering.analysis.sync_check`).

The checker must accept every synchronised kernel of the light models and reject a kernel
from which one ``wait_flag`` (or a barrier, or a drain) was removed; the injected sync is
minimal where the rule says so; the executors still compute the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.dialects.tile import PipeBarrierOp, SetFlagOp, WaitFlagOp
from tilegraph.frontend import load_onnx
from tilegraph.frontend.light_models import light_model
from tilegraph.lowering.analysis.buffers import mark_multi_buffer
from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
from tilegraph.lowering.analysis.sync_check import SyncError, check_kernel, check_sync
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.runtime.tiles import run_tiles


def _lowered(name: str, platform: str = "ascend910b") -> ModuleOp:
    """The model's tiled kernels, before split-cores and inject-sync."""
    module = load_onnx(light_model(name))
    pipeline = f"set-target{{platform={platform}}},O2,lower-graph-to-kernels,tile-kernels"
    run_pipeline(pipeline, make_context(), module)
    return module


def _kernels(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.ops if isinstance(f, func.FuncOp) and TILES_ATTR in f.attributes]


def _input(name: str) -> np.ndarray:
    model = light_model(name)
    inits = {i.name for i in model.graph.initializer}
    (inp,) = [i for i in model.graph.input if i.name not in inits]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def squeezenet_synced() -> ModuleOp:
    module = _lowered("squeezenet")
    run_pipeline("split-cores,inject-sync", make_context(), module)
    return module


def test_unsynchronised_kernels_fail_the_check():
    module = _lowered("squeezenet")
    with pytest.raises(SyncError, match="without waiting|may still read"):
        check_sync(module)


@pytest.mark.parametrize(
    ("name", "platform"),
    [
        ("squeezenet", "ascend910b"),
        ("squeezenet", "test"),
        ("resnet50", "ascend910b"),
        ("inception_v2", "ascend910b"),
        ("shufflenet", "ascend910b"),
    ],
)
def test_injected_sync_passes_the_checker(name, platform):
    module = _lowered(name, platform)
    run_pipeline("split-cores,inject-sync", make_context(), module)
    assert check_sync(module) == len(_kernels(module)) > 0


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["bvlc_alexnet", "densenet121", "inception_v1", "vgg19", "zfnet512"]
)
def test_injected_sync_passes_the_checker_on_the_other_light_models(name):
    module = _lowered(name)
    run_pipeline("split-cores,inject-sync", make_context(), module)
    assert check_sync(module) == len(_kernels(module))


def _drop(module: ModuleOp, op_type: type, which: int) -> func.FuncOp:
    """Remove the ``which``-th op of ``op_type`` of the first cube kernel that has one."""
    for fn in _kernels(module):
        found = [op for op in fn.walk() if isinstance(op, op_type)]
        if fn.attributes["tile.kernel"].data == "cube" and len(found) > which:
            found[which].detach()
            found[which].erase()
            return fn
    raise AssertionError(f"no cube kernel with {op_type.__name__}")


@pytest.mark.parametrize("which", [0, 1, 2, 3, 4, 5])
def test_removing_one_wait_is_caught(squeezenet_synced, which):
    module = squeezenet_synced.clone()
    fn = _drop(module, WaitFlagOp, which)
    with pytest.raises(SyncError, match=rf"@{fn.sym_name.data}:"):
        check_kernel(fn, blocks=2)


def _forward_pairs(fn: func.FuncOp) -> list[tuple[SetFlagOp, WaitFlagOp]]:
    """(set, wait) pairs of forward dependences: the set earlier in the wait's block."""
    pairs = []
    for op in fn.walk():
        if isinstance(op, WaitFlagOp):
            prev = op.prev_op
            while prev is not None:
                if isinstance(prev, SetFlagOp) and (prev.pair, prev.event_id) == (
                    op.pair,
                    op.event_id,
                ):
                    pairs.append((prev, op))
                    break
                prev = prev.prev_op
    return pairs


def test_every_flag_pair_is_needed(squeezenet_synced):
    """Minimal and checked: removing any one set/wait pair of a kernel is caught — a
    consumer reading data whose producer on another pipe it did not wait for, a producer
    running ahead and raising an event twice, or a deadlock (a prime or drain removed)."""
    kinds = set()
    cube = [f for f in _kernels(squeezenet_synced) if f.attributes["tile.kernel"].data == "cube"]
    for fn in cube[:3]:
        for which in range(len(_forward_pairs(fn))):
            broken = fn.clone()
            for op in _forward_pairs(broken)[which]:
                op.detach()
                op.erase()
            with pytest.raises(SyncError) as caught:
                check_kernel(broken, blocks=2)
            message = str(caught.value)
            kinds.add(
                "race"
                if "without waiting for it" in message
                else "twice"
                if "raised again" in message
                else "deadlock"
                if "deadlock" in message
                else message
            )
    assert kinds <= {"race", "twice", "deadlock"} and {"race", "deadlock"} <= kinds


def test_an_overwrite_before_the_read_is_awaited_is_caught(squeezenet_synced):
    """WAR: with every flag kept but the one the next load waits on (its set stays, so no
    event is left hanging — the set moves before the reader), the load overwrites a
    buffer the cube may still read."""
    fn = next(f for f in _kernels(squeezenet_synced) if f.attributes["tile.kernel"].data == "cube")
    broken = fn.clone()
    for op in broken.walk():
        if isinstance(op, SetFlagOp) and op.pair == ("M", "MTE1") and op.prev_op is not None:
            reader = op.prev_op
            if reader.name == "tile.mmad":
                op.detach()
                reader.parent_block().insert_op_before(op, reader)  # type: ignore[union-attr]
                break
    else:
        raise AssertionError("no M -> MTE1 flag after an mmad")
    with pytest.raises(SyncError, match="may still read it"):
        check_kernel(broken, blocks=2)


def test_removing_a_set_deadlocks(squeezenet_synced):
    module = squeezenet_synced.clone()
    fn = _drop(module, SetFlagOp, 0)
    with pytest.raises(SyncError, match="deadlock"):
        check_kernel(fn)


def test_vector_results_need_a_barrier(squeezenet_synced):
    module = squeezenet_synced.clone()
    kernels = [f for f in _kernels(module) if any(isinstance(o, PipeBarrierOp) for o in f.walk())]
    assert kernels, "a chain of vector ops reads results of vector ops"
    fn = kernels[0]
    barrier = next(o for o in fn.walk() if isinstance(o, PipeBarrierOp))
    barrier.detach()
    barrier.erase()
    with pytest.raises(SyncError, match="reads|overwrites"):
        check_kernel(fn)


def test_no_sync_is_implied_by_another(squeezenet_synced):
    """Within one block, no two waits of one pipe pair sit with nothing of their consumer
    pipe between them (the later one would be implied by the earlier)."""
    for fn in _kernels(squeezenet_synced):
        for op in fn.walk():
            nxt = op.next_op
            if isinstance(op, WaitFlagOp) and isinstance(nxt, WaitFlagOp):
                assert (op.pair, op.event_id) != (nxt.pair, nxt.event_id)


def test_multi_buffered_loads_use_one_event_per_slot():
    module = _lowered("squeezenet")
    conv = next(f for f in _kernels(module) if f.attributes["tile.kernel"].data == "cube")
    loads = [
        op.written()
        for op in conv.walk()
        if getattr(op, "pipe", None) and op.pipe() == "MTE1" and op.written() is not None
    ]
    for buffer in {id(b): b for b in loads}.values():
        mark_multi_buffer(buffer.owner, 2)  # type: ignore[arg-type]
    run_pipeline("inject-sync", make_context(), module)
    slotted = [op for op in conv.walk() if isinstance(op, SetFlagOp) and op.slot is not None]
    assert slotted
    check_kernel(conv)


def test_executors_run_synchronised_kernels(squeezenet_synced):
    x = _input("squeezenet")
    plain = run_tiles(_lowered("squeezenet"), [x], executor="fast")[0]
    for executor in ("fast", "interpret"):
        out = run_tiles(squeezenet_synced, [x], executor=executor)[0]
        np.testing.assert_allclose(out, plain, rtol=1e-5, atol=1e-6)


def _nine_nests() -> func.FuncOp:
    """Nine loop nests in a row, each copying its own input through a UB buffer; the
    buffers were planned at one address (as plan-local-memory shares a scope between
    buffers whose lifetimes do not meet), so every nest waits for the one before it."""
    from xdsl.dialects.builtin import IntegerAttr, f32, i64

    from tilegraph.dialects.tile import CopyOp, scoped_memref
    from tilegraph.hardware import hardware_preset
    from tilegraph.lowering.analysis.buffers import ADDRESS_ATTR
    from tilegraph.lowering.analysis.kernel_attrs import TILES_ATTR
    from tilegraph.lowering.conversion.tiling.builder import KernelBuilder

    fn = func.FuncOp("nests", ((), ()))
    block = fn.body.block
    sources = [block.insert_arg(scoped_memref((4, 16), f32, "GM"), i) for i in range(9)]
    out = block.insert_arg(scoped_memref((36, 16), f32, "GM"), 9)
    b = KernelBuilder(block, hardware_preset("test"))
    for k, src in enumerate(sources):
        ub = b.buffer((1, 16), f32, "UB", f"ub{k}")
        ub.owner.attributes[ADDRESS_ATTR] = IntegerAttr(0, i64)  # type: ignore[union-attr]
        with b.loop(4, parallel=True) as i:
            zero = b.index(0)
            b.add(CopyOp(src, [i, zero], ub, [zero, zero]))
            b.add(CopyOp(ub, [zero, zero], out, [b.affine(i, 1, 4 * k), zero]))
    b.finish()
    block.add_op(func.ReturnOp())
    fn.attributes[TILES_ATTR] = IntegerAttr(36, i64)
    return fn


def test_loop_nests_beyond_eight_events_get_barriers_across_all_pipes():
    from tilegraph.lowering.transforms.inject_sync import inject_sync

    fn = _nine_nests()
    with pytest.raises(SyncError):
        check_kernel(fn)
    inject_sync(fn)
    fences = [op for op in fn.walk() if isinstance(op, PipeBarrierOp) and op.all_pipes]
    assert len(fences) == 8  # between the nine nests
    assert max(op.event_id for op in fn.walk() if isinstance(op, SetFlagOp)) < 8
    check_kernel(fn)
    fences[3].detach()
    fences[3].erase()
    with pytest.raises(SyncError):
        check_kernel(fn)
