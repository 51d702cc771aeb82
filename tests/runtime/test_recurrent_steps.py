"""The fast executor on a recurrent step's small tiles (issue 25: piper_nakdimon's LSTM
steps): the batched forms take the cut windows of a state of fewer rows than a fractal
in one batch instead of item by item, bit for bit what the op's kernel writes item by
item. Each test also makes the item-by-item path fail, so that it fails if the batched
path for those items is removed."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import IndexType, f32
from xdsl.ir import SSAValue
from xdsl.utils.test_value import create_ssa_value

import tilegraph
from tilegraph.dialects.tile import Nd2NzOp, scoped_memref
from tilegraph.runtime.fast_executor import fractal
from tilegraph.runtime.fast_executor.batching import one_by_one
from tilegraph.runtime.fast_executor.forms import batched_kernel_of
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.runtime.tiles import fast_module

rng = np.random.default_rng(2025)


def buf(shape: tuple[int, ...], scope: str) -> SSAValue:
    return create_ssa_value(scoped_memref(list(shape), f32, scope))


def index() -> SSAValue:
    return create_ssa_value(IndexType())


def no_item_by_item(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batched forms built from here on fail if they run a cut item by itself."""

    def refuse(*args: object) -> None:
        raise AssertionError("a cut window ran item by item")

    monkeypatch.setattr(fractal, "copy_cut_items", refuse)


def test_nd2nz_of_a_one_row_state_pads_every_window_in_one_batch(monkeypatch):
    """h (1 x 100) into 16-row fractals at column offsets 0, 16, .., 96 (32 columns, the
    last past the end, a valid-column count per item): every window is cut below row 1.
    The tiles are the kernel's (zero padded), called twice with new values and stale
    destinations (NaN: a lane the form leaves shows up)."""
    op = Nd2NzOp(buf((1, 100), "GM"), [index(), index()], buf((2, 1, 16, 16), "L1"), None, index())
    op.verify()
    starts = np.arange(0, 100, 16)
    valid = np.minimum(32, 100 - starts)
    mask = [False, False, True, True, True]
    no_item_by_item(monkeypatch)
    kernel = batched_kernel_of(op, mask)
    assert kernel is not None
    for _ in range(2):
        src = rng.standard_normal((1, 100)).astype(np.float32)
        dst = np.full((len(starts), 2, 1, 16, 16), np.nan, np.float32)
        expected = dst.copy()
        one_by_one(kernel_of(op), mask)(src, 0, starts, expected, valid)
        kernel(src, 0, starts, dst, valid)
        np.testing.assert_array_equal(dst, expected)
        assert not dst[:, :, :, 1:].any()  # the padding rows are zero


def test_fixpipe_runs_the_items_before_a_ragged_one_as_a_batch(monkeypatch):
    """Gates (16 x 100) leaving L0C in 32-column N blocks into a workspace slot per item
    (rows of one fractal); the last block is 4 columns wide (its ``n``): the three before
    it go in one batch, only it by the kernel — bit for bit what item by item writes."""
    from tilegraph.dialects.tile import FixpipeOp

    op = FixpipeOp(buf((2, 1, 16, 16), "L0C"), buf((16, 32), "GM"), [index(), index()],
                   n=index(), layout="nd")  # fmt: skip
    op.verify()
    alone: list[int] = []
    items_alone = fractal.copy_cut_items

    def count_alone(single, args, batched, items) -> None:
        alone.extend(int(t) for t in items)
        items_alone(single, args, batched, items)

    monkeypatch.setattr(fractal, "copy_cut_items", count_alone)
    n = np.array([32, 32, 32, 4])
    mask = [True, True, False, False, True]
    kernel = batched_kernel_of(op, mask)
    assert kernel is not None
    acc = rng.standard_normal((4, 2, 1, 16, 16)).astype(np.float32)
    dst = np.full((4, 16, 32), np.nan, np.float32)
    expected = dst.copy()
    one_by_one(kernel_of(op), mask)(acc, expected, 0, 0, n)
    alone.clear()
    kernel(acc, dst, 0, 0, n)
    np.testing.assert_array_equal(dst, expected)
    assert alone == [3]


def _add_tanh_model() -> onnx.ModelProto:
    """``tanh(x + y)`` over (64, 4096): one vector kernel whose tile loop runs batched."""
    shape = [64, 4096]
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "xyz"]
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Tanh", ["s"], ["z"])]
    graph = helper.make_graph(nodes, "add_tanh", io[:2], io[2:])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_buffers_that_only_shape_a_nests_slots_are_bound_once_not_allocated():
    """A kernel's tile loop run batched: the ``tile.alloc`` buffers that nothing outside
    the nest uses only give its slots their shape, and are bound once as read-only arrays
    — no allocation call defines them (none is made in a run), and the results are the
    interpreter's, bit for bit."""
    inputs = {n: rng.standard_normal((64, 4096)).astype(np.float32) for n in "xy"}
    compiled = tilegraph.compile(_add_tanh_model(), platform="ascend910b")
    outputs = compiled(**inputs)
    fast = fast_module(compiled.module)
    assert len(fast.slot_templates) == 4  # x, y, the sum, the tanh in UB
    calls: list[str] = []
    for handle, kernel in list(fast.namespace.items()):
        if getattr(kernel, "__qualname__", "") == "alloc.<locals>.run":
            fast.namespace[handle] = lambda _k=kernel, _h=handle: (calls.append(_h), _k())[1]
    for function, name in fast.slot_templates:
        source = fast.source(function)
        defined = re.findall(rf"^\s*{name} = (k\d+)$", source, re.MULTILINE)
        assert len(defined) == 1, (name, source)
        template = fast.namespace[defined[0]]
        assert isinstance(template, np.ndarray) and not template.flags.writeable
    again = compiled(**inputs)
    assert len(calls) == 1, calls  # the host's output buffer (GM) only
    interpreted = tilegraph.compile(_add_tanh_model(), platform="ascend910b", executor="interpret")
    for a, b, c in zip(outputs, again, interpreted(**inputs), strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, c)


@pytest.mark.parametrize("batched_source", [True, False])
def test_copy_flat_from_per_item_starts_gathers_a_view_of_the_runs(monkeypatch, batched_source):
    """A mix part's hand-over reads (13 items: the workspace slot alternating between two
    starts, plus the sub-block's share) gather through a view of every run of the source,
    not an index array per element (``take_along_axis`` fails here): bit for bit the
    kernel's tiles, item by item."""
    from tilegraph.dialects.tile import CopyFlatOp

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an index per element")

    op = CopyFlatOp(buf((4, 16, 32), "GM"), index(), buf((8, 32), "UB"), index(), 256)
    op.verify()
    items = 13
    starts = (np.arange(items) % 2) * 1024 + 256
    shape = (items, 4, 16, 32) if batched_source else (4, 16, 32)
    src = rng.standard_normal(shape).astype(np.float32)
    dst = np.full((items, 8, 32), np.nan, np.float32)
    expected = dst.copy()
    mask = [batched_source, True, True, False]
    one_by_one(kernel_of(op), mask)(src, starts, expected, 0)
    kernel = batched_kernel_of(op, mask)
    assert kernel is not None
    monkeypatch.setattr(np, "take_along_axis", refuse)
    kernel(src, starts, dst, 0)
    np.testing.assert_array_equal(dst, expected)


@pytest.mark.parametrize("batched", [False, True])
def test_load2d_reads_its_ops_facts_once_not_on_every_call(monkeypatch, batched):
    """A recurrent step loads its state's fractals L1 -> L0B with ragged ``valid`` / ``k``
    extents every step: the kernel (and its batched form) read the op's axes when made,
    not when called (the IR's properties fail once the kernel exists), and zero the
    fractals past the extents as before."""
    from tilegraph.dialects.tile import Load2dOp

    op = Load2dOp(buf((2, 8, 16, 16), "L1"), index(), index(), buf((2, 8, 16, 16), "L0B"),
                  "copy", index(), index())  # fmt: skip
    op.verify()
    mask = [False, False, False, True, False, False]
    kernel = batched_kernel_of(op, mask) if batched else kernel_of(op)
    assert kernel is not None

    def refuse(self: object) -> int:
        raise AssertionError("the IR read on a call")

    monkeypatch.setattr(Load2dOp, "ragged_axis", property(refuse))
    monkeypatch.setattr(Load2dOp, "k_axis", property(refuse))
    src = rng.standard_normal((2, 8, 16, 16)).astype(np.float32)
    dst = np.full((3, 2, 8, 16, 16) if batched else (2, 8, 16, 16), np.nan, np.float32)
    kernel(src, 0, 0, dst, 100, 20)  # 7 of 8 N fractals, 2 of 2 K fractals
    assert not np.isnan(dst).any()
    assert not dst[..., :, 7:, :, :].any() and dst[..., :, :7, :, :].all()


def test_slots_are_kept_per_key_and_moved_axes_are_moveaxis():
    """A nest's slot array is worked out once per (ordinal, batch, shape, type), the same
    array on every later request (a recurrent step asks for the same ones every step);
    another key gets its own shape. The products' axis moves are ``np.moveaxis``'s."""
    from itertools import product

    from tilegraph.runtime.fast_executor.cube import _moved
    from tilegraph.runtime.fast_executor.scratch import slots

    like = np.empty((8, 128), np.float32)
    first = slots(3, like, (13,))
    assert first.shape == (13, 8, 128) and first.dtype == np.float32
    assert slots(3, like, (13,)) is first
    assert slots(3, like, (7,)).shape == (7, 8, 128)
    array = np.empty((2, 3, 4, 5, 6))
    for source, destination in product(range(-5, 5), repeat=2):
        moved, expected = (
            _moved(array, source, destination),
            np.moveaxis(array, source, destination),
        )
        assert (moved.shape, moved.strides) == (expected.shape, expected.strides)


def test_which_buffers_a_step_holds_is_worked_out_once_per_pattern():
    """An RNN loop's step kernels ask on every step which of their loads' buffers are held
    (every argument they read frozen): answered once per (reads, frozen arguments), the
    later steps' answers remembered; the results are those of loading every step."""
    from tests.lowering.test_loop_launches import T, _inputs, _rnn_loop_model
    from tilegraph.runtime.fast_executor import invariants

    compiled = tilegraph.compile(_rnn_loop_model(counted=False), platform="test")
    first = compiled(**_inputs())
    invariants.held_buffers.cache_clear()
    again = compiled(**_inputs())
    info = invariants.held_buffers.cache_info()
    assert info.misses and info.hits >= (T - 1) * info.misses, info
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
