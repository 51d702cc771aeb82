"""The interpreter runs a planned module on the planned memory: every on-chip buffer is a
view into one byte arena per scope of the running block, at the address
``plan-local-memory`` gave it (each multi-buffer slot at its own), so an overlapping plan
gives wrong numbers; an unplanned module keeps one array per buffer."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, i64
from xdsl.ir import SSAValue

import tilegraph
from tilegraph.builder import GraphBuilder
from tilegraph.dialects.tile import AllocOp
from tilegraph.lowering.analysis.buffers import (
    ADDRESS_ATTR,
    ADDRESSES_ATTR,
    buffer_slots,
    live_ranges,
    placement,
    tiled_kernels,
)
from tilegraph.lowering.transforms.plan_local_memory import LocalMemoryError, check_local_plan
from tilegraph.runtime.tile_interpreter.arena import arena_sizes
from tilegraph.runtime.tiles import run_tiles

rng = np.random.default_rng(11)


def _graph():
    b = GraphBuilder()
    x = b.input("x", [1, 16, 16, 16], "float32", "NCHW")
    w = b.constant(rng.standard_normal((32, 16, 3, 3)).astype(np.float32))
    y = b.op("sigmoid", b.op("relu", b.op("conv2d", x, w, pads=[1, 1, 1, 1])))
    return b.build(y)


def _planned(platform: str) -> tuple[ModuleOp, np.ndarray, np.ndarray]:
    graph = _graph()
    data = rng.standard_normal((1, 16, 16, 16)).astype(np.float32)
    reference = np.asarray(tilegraph.compile(graph, target="reference").run({"x": data})[0])
    module = tilegraph.compile(graph, platform=platform).module
    assert check_local_plan(module) > 0
    return module, data, reference


@pytest.fixture(scope="module")
def planned() -> tuple[ModuleOp, np.ndarray, np.ndarray]:
    """On the test preset (decoupled: the epilogue runs in the mix kernel's AIV part)."""
    return _planned("test")


@pytest.fixture(scope="module")
def planned_coupled() -> tuple[ModuleOp, np.ndarray, np.ndarray]:
    """On ascend310p (coupled: fixpipe writes the accumulator into UB, FIX before V)."""
    return _planned("ascend310p")


def _set_addresses(buffer: SSAValue, starts: tuple[int, ...]) -> None:
    alloc = buffer.owner
    assert isinstance(alloc, AllocOp)
    alloc.attributes[ADDRESS_ATTR] = IntegerAttr(starts[0], i64)
    if len(starts) > 1:
        alloc.attributes[ADDRESSES_ATTR] = DenseArrayBase.from_list(i64, starts)


def _buffer(module: ModuleOp, name: str) -> SSAValue:
    (found,) = [b for fn in tiled_kernels(module) for b in live_ranges(fn) if b.name_hint == name]
    return found


def _starts(buffer: SSAValue) -> tuple[int, ...]:
    found = placement(buffer)
    assert found is not None
    return found[1]


def test_the_planned_module_matches_on_the_arena(planned):
    module, data, reference = planned
    sizes = [arena_sizes(fn) for fn in tiled_kernels(module)]
    assert {scope for s in sizes for scope in s} == {"L1", "L0A", "L0B", "L0C", "UB"}
    out = run_tiles(module, [data], executor="interpret")[0]
    np.testing.assert_allclose(out, reference, rtol=1e-4, atol=1e-4)


def test_an_overlapping_plan_gives_wrong_numbers_in_the_interpreter(planned):
    """The convolution's weights placed on its feature map in L1 (slot by slot): the checker
    rejects the plan, and the interpreter, running it anyway, reads weights as features."""
    module, data, reference = planned
    mutated = module.clone()
    weights, fmap = _buffer(mutated, "w_l1"), _buffer(mutated, "fmap_l1")
    assert buffer_slots(weights) == buffer_slots(fmap) == 2
    _set_addresses(weights, _starts(fmap))
    with pytest.raises(LocalMemoryError, match="overlap"):
        check_local_plan(mutated)
    out = run_tiles(mutated, [data], executor="interpret")[0]
    assert not np.allclose(out, reference, rtol=1e-3, atol=1e-3)


def test_a_multi_buffer_slot_moved_onto_a_live_buffer_gives_wrong_numbers(planned):
    """Only the second slot of the feature map moved onto the weights' first: only the odd
    iterations of its loop use that slot, so this shows the slots rotate with the loop."""
    module, data, reference = planned
    mutated = module.clone()
    weights, fmap = _buffer(mutated, "w_l1"), _buffer(mutated, "fmap_l1")
    _set_addresses(fmap, (_starts(fmap)[0], _starts(weights)[0]))
    out = run_tiles(mutated, [data], executor="interpret")[0]
    assert not np.allclose(out, reference, rtol=1e-3, atol=1e-3)


def test_in_place_elementwise_overlaps_are_harmless_one_op_at_a_time(planned_coupled):
    """Not every overlap changes a number: the epilogue's ReLU written over its own input
    (``v2_ub`` on ``acc_ub``, which fixpipe wrote) is what an in-place vector op computes.
    The checker still rejects the plan, since on the chip the pipes run ahead of one another."""
    module, data, reference = planned_coupled
    mutated = module.clone()
    _set_addresses(_buffer(mutated, "v2_ub"), _starts(_buffer(mutated, "acc_ub")))
    with pytest.raises(LocalMemoryError, match="overlap"):
        check_local_plan(mutated)
    out = run_tiles(mutated, [data], executor="interpret")[0]
    np.testing.assert_allclose(out, reference, rtol=1e-4, atol=1e-4)


def test_an_unplanned_module_keeps_one_array_per_buffer():
    graph = _graph()
    data = rng.standard_normal((1, 16, 16, 16)).astype(np.float32)
    module = tilegraph.compile(graph, platform="test").module
    for op in module.walk():  # the plan taken away: buffers without addresses
        if isinstance(op, AllocOp):
            op.attributes.pop(ADDRESS_ATTR, None)
            op.attributes.pop(ADDRESSES_ATTR, None)
    assert all(placement(b) is None for fn in tiled_kernels(module) for b in live_ranges(fn))
    reference = tilegraph.compile(graph, target="reference").run({"x": data})[0]
    out = run_tiles(module, [data], executor="interpret")[0]
    np.testing.assert_allclose(out, np.asarray(reference), rtol=1e-4, atol=1e-4)
