"""The fast executor's batching, piece by piece: each batched form against the op's own
kernel run once per item (or per step, in order) on the same data.

* ``nest_product``: ``tile.mmad`` over a batch whose accumulation axis it sums — the result
  of the K loop run step by step (init on the first step, on none, on a later one; one
  product of the whole K or step after step), with left and right operands varying along
  different axes;
* ``tile.copy`` / ``tile.fixpipe`` batched: items whose windows are whole go in one gather /
  scatter, cut ones (ragged tails, halos) item by item — together equal to one by one;
* ``plan_nest`` on a lowered convolution: the output-row loop and the K loop inside it are
  axes, the ``mmad`` sums along the K axis.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import DenseArrayBase, IndexType, StringAttr, f32, i64
from xdsl.ir import SSAValue
from xdsl.utils.test_value import create_ssa_value

import tilegraph
from tilegraph.builder import GraphBuilder
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.dialects.tile import (
    CopyFlatOp,
    CopyOp,
    FixpipeOp,
    Load3dOp,
    Load5hdOp,
    MmadOp,
    Nd2NzOp,
    ReduceOp,
    Store5hdOp,
    TransposeOp,
    scoped_memref,
)
from tilegraph.runtime.fast_executor import compile_module
from tilegraph.runtime.fast_executor.batching import flattened, one_by_one, plan_nest
from tilegraph.runtime.fast_executor.cube import nest_product
from tilegraph.runtime.fast_executor.forms import batched_kernel_of, nest_kernel_of
from tilegraph.runtime.fast_executor.windows import copy_whole_windows
from tilegraph.runtime.tile_interpreter.dma import window
from tilegraph.runtime.tile_interpreter.kernels import kernel_of

rng = np.random.default_rng(7)


def buf(shape, scope: str) -> SSAValue:
    return create_ssa_value(scoped_memref(list(shape), f32, scope))


def idx(n: int) -> list[SSAValue]:
    return [create_ssa_value(IndexType()) for _ in range(n)]


def mmad_op(m1: int, k1: int, n1: int) -> MmadOp:
    from xdsl.dialects.builtin import i1

    return MmadOp(
        buf((m1, k1, 16, 16), "L0A"),
        buf((k1, n1, 16, 16), "L0B"),
        buf((n1, m1, 16, 16), "L0C"),
        create_ssa_value(i1),
    )


@pytest.mark.parametrize(("a_steps", "b_steps"), [(4, 4), (4, 1), (1, 1)])
@pytest.mark.parametrize("start", [0, None, 2])
def test_nest_product_sums_the_steps_as_the_loop(start, a_steps, b_steps):
    """Axes (rows T=3, steps S=4); a varies along the rows and the steps (or the rows
    only), b along the steps only (or along neither): the same operand every step when it
    does not vary. Step by step with the op's kernel: init where the step is ``start``
    (None: never). Start 0 or None with both varying is one product of the whole K; the
    others are summed step after step."""
    rows, steps, m1, k1, n1 = 3, 4, 2, 2, 3
    single = kernel_of(mmad_op(m1, k1, n1))
    a = rng.standard_normal((rows, a_steps, m1, k1, 16, 16)).astype(np.float32)
    b = rng.standard_normal((1, b_steps, k1, n1, 16, 16)).astype(np.float32)
    c0 = rng.standard_normal((rows, 1, n1, m1, 16, 16)).astype(np.float32)
    init = (np.arange(steps) == start).reshape(1, steps)
    expected = c0.copy()
    for t in range(rows):
        for s in range(steps):
            single(a[t, s % a_steps], b[0, s % b_steps], expected[t, 0], bool(init[0, s]))
    c = c0.copy()
    nest_product(2, 1)(a, b, c, init)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)


def test_nest_product_with_operands_varying_along_different_parallel_axes():
    """a varies along axis 1 (rows), b along axis 0 (channel blocks): c gets both."""
    m1, k1, n1 = 2, 3, 2
    single = kernel_of(mmad_op(m1, k1, n1))
    a = rng.standard_normal((1, 5, m1, k1, 16, 16)).astype(np.float32)
    b = rng.standard_normal((2, 1, k1, n1, 16, 16)).astype(np.float32)
    c = np.zeros((2, 5, n1, m1, 16, 16), np.float32)
    expected = c.copy()
    for i in range(2):
        for j in range(5):
            single(a[0, j], b[i, 0], expected[i, j], True)
    nest_product(2, None)(a, b, c, True)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)


def test_nest_product_of_tall_tiles_sharing_one_right_operand():
    """Many row tiles, one weight tile per step (one GEMM per step)."""
    rows, steps, m1, k1, n1 = 40, 3, 4, 2, 2
    single = kernel_of(mmad_op(m1, k1, n1))
    a = rng.standard_normal((rows, steps, m1, k1, 16, 16)).astype(np.float32)
    b = rng.standard_normal((1, steps, k1, n1, 16, 16)).astype(np.float32)
    c = np.full((rows, 1, n1, m1, 16, 16), np.nan, np.float32)
    expected = c.copy()
    for t in range(rows):
        for s in range(steps):
            single(a[t, s], b[0, s], expected[t, 0], s == 0)
    nest_product(2, 1)(a, b, c, (np.arange(steps) == 0).reshape(1, steps))
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("width", [5, 4096])  # one gather; large windows item by item
def test_copy_whole_windows_copies_the_whole_and_returns_the_cut(width):
    src = rng.standard_normal((10, width + 2)).astype(np.float32)
    dst = np.full((4, 3, width), np.nan, np.float32)
    rows = np.array([0, 4, 8, 9])  # windows of 3 rows: the last two leave the source
    cut = copy_whole_windows(4, (3, width), src, (rows, 2), False, dst, (0, 0), True)
    assert list(cut) == [2, 3]
    for t in (0, 1):
        np.testing.assert_array_equal(dst[t], src[rows[t] : rows[t] + 3, 2 : 2 + width])
    assert np.isnan(dst[2:]).all()


@pytest.mark.parametrize("count", [3, 8, 9, 30])  # item by item up to 8, then one gather
@pytest.mark.parametrize("into_batch", [True, False])
def test_copy_whole_windows_equals_the_window_cut_item_by_item(count, into_batch):
    """Per-item offsets on one dim of the shared buffer, int offsets on the others (one of
    them 1: a dim the windows do not span whole); the items past the edge are left to the
    caller, the others copied as :func:`window` places them."""
    shared = rng.standard_normal((2, 3 * count, 4, 8)).astype(np.float32)
    items = np.full((count, 1, 3, 4, 7), np.nan, np.float32)
    rows = np.arange(count) * 3
    rows[-1] += 2  # the last window crosses the bottom edge
    offsets = (1, rows, 0, 1)
    zeros = (0, 0, 0, 0)
    expected_shared, expected_items = shared.copy(), items.copy()
    if into_batch:
        cut = copy_whole_windows(count, (1, 3, 4, 7), shared, offsets, False, items, zeros, True)
    else:
        cut = copy_whole_windows(count, (1, 3, 4, 7), items, zeros, True, shared, offsets, False)
    assert list(cut) == [count - 1]
    for t in range(count - 1):
        at = (1, rows[t], 0, 1)
        if into_batch:
            found = window((1, 3, 4, 7), (1, 3, 4, 7), shared.shape, (0, 0, 0, 0), at)
            assert found is not None
            expected_items[t][found[0]] = shared[found[1]]
        else:
            found = window((1, 3, 4, 7), shared.shape, (1, 3, 4, 7), at, (0, 0, 0, 0))
            assert found is not None
            expected_shared[found[0]] = items[t][found[1]]
    np.testing.assert_array_equal(items, expected_items)
    np.testing.assert_array_equal(shared, expected_shared)


def test_copy_whole_windows_with_an_int_offset_past_the_edge_copies_nothing():
    src = rng.standard_normal((4, 6)).astype(np.float32)
    dst = np.full((3, 2, 6), np.nan, np.float32)
    cut = copy_whole_windows(3, (2, 6), src, (np.array([0, 1, 2]), 1), False, dst, (0, 0), True)
    assert list(cut) == [0, 1, 2]
    assert np.isnan(dst).all()


def check_batched(op, args, mask, written: int) -> None:
    """The op's batched kernel on ``args`` writes what its kernel writes item by item."""
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    one_by_one(kernel_of(op), mask)(*expected)
    kernel = batched_kernel_of(op, mask)
    assert kernel is not None
    kernel(*args)
    np.testing.assert_array_equal(args[written], expected[written])


def test_batched_copy_load_equals_one_by_one_with_cut_windows():
    """GM -> UB row windows at per-item offsets; items at the bottom edge are cut (the rest
    of their tile filled with the pad)."""
    op = CopyOp(buf((1, 2, 9, 7, 16), "GM"), idx(5), buf((1, 2, 3, 7, 16), "UB"), idx(5), 0.5)
    op.verify()
    src = rng.standard_normal((1, 2, 9, 7, 16)).astype(np.float32)
    rows = np.array([0, 3, 6, 8])
    dst = np.full((4, 1, 2, 3, 7, 16), np.nan, np.float32)
    args = [src, 0, 0, rows, 0, 0, dst, 0, 0, 0, 0, 0]
    mask = [False, False, False, True, False, False, True, False, False, False, False, False]
    check_batched(op, args, mask, written=6)


def test_batched_copy_store_equals_one_by_one():
    """UB tiles -> GM at per-item row offsets; the last tile hangs over the end."""
    op = CopyOp(buf((2, 5), "UB"), idx(2), buf((7, 5), "GM"), idx(2))
    op.verify()
    tiles = rng.standard_normal((4, 2, 5)).astype(np.float32)
    rows = np.array([0, 2, 4, 6])
    gm = np.full((7, 5), np.nan, np.float32)
    args = [tiles, 0, 0, gm, rows, 0]
    mask = [True, False, False, False, True, False]
    check_batched(op, args, mask, written=3)


@pytest.mark.parametrize("cut", [False, True])
def test_batched_copy_flat_equals_one_by_one(cut):
    """Batched workspace copies -> UB at per-item offsets (two slots, two shares); with
    ``cut`` one run leaves its source and is cut (the rest of its tile zero)."""
    op = CopyFlatOp(buf((2, 3, 16), "GM"), idx(1)[0], buf((2, 8), "UB"), idx(1)[0], 16)
    op.verify()
    src = rng.standard_normal((5, 2, 3, 16)).astype(np.float32)
    starts = np.array([0, 48, 16, 64, 88 if cut else 80])
    dst = np.full((5, 2, 8), np.nan, np.float32)
    check_batched(op, [src, starts, dst, 0], [True, True, True, False], written=2)


def test_batched_copy_flat_from_one_source_equals_one_by_one():
    """One GM workspace, each item's run at its own start (a lockstep launch's groups,
    each reading its region), into each item's tile at one target."""
    op = CopyFlatOp(buf((4, 16), "GM"), idx(1)[0], buf((2, 8), "UB"), idx(1)[0], 16)
    op.verify()
    src = rng.standard_normal((4, 16)).astype(np.float32)
    dst = np.full((3, 2, 8), np.nan, np.float32)
    check_batched(op, [src, np.array([32, 0, 16]), dst, 0], [False, True, True, False], written=2)


@pytest.mark.parametrize("pad", [None, -1.5])
def test_batched_load_5hd_equals_one_by_one(pad):
    """NCHW windows -> 5HD tiles at per-item (channel, row, column) offsets: halos above,
    below and left of the source read as the pad, channels past C (5 of 16) as 0."""
    op = Load5hdOp(buf((1, 5, 9, 7), "GM"), idx(4), buf((1, 1, 4, 5, 16), "L1"), pad)
    op.verify()
    src = rng.standard_normal((1, 5, 9, 7)).astype(np.float32)
    rows, cols = np.array([-1, 2, 5, 8]), np.array([0, -2, 3, 4])
    dst = np.full((4, 1, 1, 4, 5, 16), np.nan, np.float32)
    args = [src, 0, np.array([0, 0, -1, 0]), rows, cols, dst]
    check_batched(op, args, [False, False, True, True, True, True], written=5)


@pytest.mark.parametrize("channel_end", [None, 20])
def test_batched_store_5hd_equals_one_by_one(channel_end):
    """5HD tiles -> NCHW at per-item row offsets; the last tile hangs over the end (cut)."""
    op = Store5hdOp(buf((1, 2, 3, 5, 16), "UB"), buf((1, 24, 8, 5), "GM"), idx(4), channel_end)
    op.verify()
    tiles = rng.standard_normal((3, 1, 2, 3, 5, 16)).astype(np.float32)
    gm = np.full((1, 24, 8, 5), np.nan, np.float32)
    args = [tiles, gm, 0, 0, np.array([0, 3, 6]), 0]
    check_batched(op, args, [True, False, False, False, True, False], written=1)


@pytest.mark.parametrize("src_varies", [False, True])
@pytest.mark.parametrize("valid", [None, 5])
def test_nest_load3d_with_varying_k_start_equals_step_by_step(src_varies, valid):
    """A nest of (tiles T=3, K steps S=4): each step's load3d starts at its own K1 (and
    with ``valid`` channels per step, 5 of 16 on even steps); the one gather of the nest
    form writes the bytes of the kernel run point by point (pad, halo and invalid lanes
    included)."""
    fmap_shape = (1, 2, 6, 7, 16)
    valid_channels = None if valid is None else idx(1)[0]
    op = Load3dOp(buf(fmap_shape, "L1"), idx(1)[0], buf((2, 2, 16, 16), "L0A"),
                  kernel_shape=(3, 3), strides=(1, 1), dilations=(1, 1), pad_left=1,
                  out_width=7, channels=20, pad_value=0, valid_channels=valid_channels)  # fmt: skip
    op.verify()
    src = rng.standard_normal(((3 if src_varies else 1), 1, *fmap_shape)).astype(np.float32)
    starts = (np.arange(4) * 2).reshape(1, 4)
    dst = np.full((3, 4, 2, 2, 16, 16), np.nan, np.float32)
    args = [src, starts, dst]
    mask = [True, True, True]
    if valid is not None:
        args.append(np.where(np.arange(4) % 2 == 0, valid, 20).reshape(1, 4))
        mask.append(True)
    expected = [a.copy() for a in args]
    single = kernel_of(op)
    for t in range(3):
        for s in range(4):
            rest = [int(a[0, s]) for a in expected[3:]]
            single(
                expected[0][t if src_varies else 0, 0], int(starts[0, s]), expected[2][t, s], *rest
            )
    # not taken where no index varies (the flattened batched form does that) nor into
    # one destination for the whole batch (the points must run in order)
    if valid is None:
        assert nest_kernel_of(op, [True, False, True], 2, None) is None
    assert nest_kernel_of(op, [True, True, False, *mask[3:]], 2, 1) is None
    kernel = nest_kernel_of(op, mask, 2, 1)
    assert kernel is not None
    kernel(*args)
    kernel(*args)  # the second call reuses the call site's gather
    np.testing.assert_array_equal(dst, expected[2])


@pytest.mark.parametrize("layout", ["nd", "nc1hwc0"])
def test_batched_fixpipe_equals_one_by_one(layout):
    n1, m1 = 2, 3
    if layout == "nd":
        dst_shape, offsets = (70, 40), 2
        op = FixpipeOp(buf((n1, m1, 16, 16), "L0C"), buf(dst_shape, "GM"), idx(2),
                       buf((32,), "L1"), layout="nd", relu=True)  # fmt: skip
        offs = [np.array([0, 48, 60]), 0]
    else:
        dst_shape, offsets = (1, 3, 11, 8, 16), 5
        op = FixpipeOp(buf((n1, m1, 16, 16), "L0C"), buf(dst_shape, "GM"), idx(5),
                       buf((32,), "L1"), layout="nc1hwc0", rows=6, relu=True)  # fmt: skip
        offs = [0, 1, np.array([0, 6, 9]), 0, 0]
    op.verify()
    acc = rng.standard_normal((3, n1, m1, 16, 16)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    gm = np.full(dst_shape, np.nan, np.float32)
    args = [acc, gm, *offs, bias]
    mask = [True, False, *(isinstance(o, np.ndarray) for o in offs), False]
    assert len(args) == 2 + offsets + 1
    check_batched(op, args, mask, written=1)


def test_flattened_broadcasts_the_batch_and_writes_the_destination_in_place():
    def kernel(src, dst):
        dst[...] = src * 2

    src = rng.standard_normal((3, 1, 4)).astype(np.float32)  # varies along axis 0 only
    dst = np.zeros((3, 2, 4), np.float32)
    flattened(kernel, [True, True], 2)(src, dst)
    np.testing.assert_array_equal(dst, np.broadcast_to(src * 2, (3, 2, 4)))
    assert window((2,), (4,), (4,), (0,), (3,)) == ((slice(0, 1),), (slice(3, 4),))


def _conv_module():
    """Two convolutions: the first writes its NC1HWC0 result with fixpipe (a cube kernel),
    the second's NCHW output needs the vector unit (a mix kernel on the decoupled test
    preset)."""
    b = GraphBuilder()
    x = b.input("x", [1, 20, 11, 11], "float32", "NCHW")
    w = b.constant(rng.standard_normal((40, 20, 3, 3)).astype(np.float32))
    y = b.op("conv2d", x, w, pads=[1, 1, 1, 1])
    w2 = b.constant(rng.standard_normal((8, 40, 1, 1)).astype(np.float32))
    return tilegraph.compile(b.build(b.op("conv2d", y, w2)), platform="test").module


def test_plan_nest_batches_rows_and_sums_along_k():
    module = _conv_module()
    report = kernel_report(module)
    assert [k.unit for k in report] == ["cube", "mix"]
    kernels = [
        f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == report[0].name
    ]
    plans = [
        plan
        for f in kernels
        for loop in f.walk()
        if isinstance(loop, scf.ForOp) and (plan := plan_nest(loop)) is not None
    ]
    assert plans
    summing = [p for p in plans if p.summed]
    assert summing, "the K loop of the convolution is an accumulation axis"
    plan = summing[0]
    assert any(a.accumulation for a in plan.axes) and not plan.axes[0].accumulation
    for mmad, axis in plan.summed.items():
        assert plan.axes[axis].accumulation
        assert axis not in plan.batched.get(mmad.c, frozenset())  # one accumulator per tile
    source = "".join(compile_module(module).source(f.sym_name.data) for f in kernels)
    assert "_slots(" in source


def test_conv_with_ragged_tiles_runs_the_same_batched_and_one_by_one():
    module = _conv_module()
    data = rng.standard_normal((1, 20, 11, 11)).astype(np.float32)
    from tilegraph.runtime.tiles import run_tiles

    # the img2col tiles of the K loops run as one are laid out row-major (.row_slots)
    compiled = compile_module(module)
    assert any("_row_slots(" in compiled.source(name) for name in compiled._sources)
    batched = run_tiles(module, [data], executor="fast")[0]
    interpreted = run_tiles(module, [data], executor="interpret")[0]
    np.testing.assert_allclose(batched, interpreted, rtol=1e-5, atol=1e-4)


def test_row_major_slots_are_zz_tiles_over_the_gemm_order():
    """Slots (T=2, S=3) of a (M1=2, K1=4, 16, K0=16) tile: the view reads as ZZ tiles, its
    bytes as each tile's (M, S * K1 * K0) matrix, and the load3d nest form writes through
    the view what it writes into contiguous slots."""
    from tilegraph.runtime.fast_executor.row_slots import row_major_slots

    slots = row_major_slots(1, 0, np.empty((2, 4, 16, 16), np.float32), (2, 3))
    assert slots.shape == (2, 3, 2, 4, 16, 16) and not slots.flags.c_contiguous
    values = rng.standard_normal(slots.shape).astype(np.float32)
    slots[...] = values
    in_storage = slots.transpose(0, 2, 4, 1, 3, 5)  # (T, M1, 16, S, K1, K0)
    assert in_storage.flags.c_contiguous
    np.testing.assert_array_equal(in_storage, values.transpose(0, 2, 4, 1, 3, 5))
    op = Load3dOp(buf((1, 2, 6, 7, 16), "L1"), idx(1)[0], buf((2, 4, 16, 16), "L0A"),
                  kernel_shape=(3, 3), strides=(1, 1), dilations=(1, 1), pad_left=1,
                  out_width=7, channels=20, pad_value=0)  # fmt: skip
    src = rng.standard_normal((2, 1, 1, 2, 6, 7, 16)).astype(np.float32)
    starts = (np.arange(3) * 4).reshape(1, 3)
    expected = np.full(slots.shape, np.nan, np.float32)
    kernel = nest_kernel_of(op, [True, True, True], 2, 1)
    assert kernel is not None
    kernel(src, starts, expected)
    slots[...] = np.nan
    kernel(src, starts, slots)
    np.testing.assert_array_equal(slots, expected)


@pytest.mark.parametrize("cut", [False, True])
def test_batched_nd2nz_equals_one_by_one(cut):
    """ND row windows of a (batch, rows, cols) GM tensor at per-item (batch, row) offsets
    into NZ tiles; with ``cut`` the last item's window hangs over the bottom (its tile zero
    padded by the kernel)."""
    op = Nd2NzOp(buf((2, 40, 48), "GM"), idx(3), buf((3, 2, 16, 16), "L1"))
    op.verify()
    src = rng.standard_normal((2, 40, 48)).astype(np.float32)
    rows = np.array([0, 8, 0, 30 if cut else 8])
    dst = np.full((4, 3, 2, 16, 16), np.nan, np.float32)
    args = [src, np.array([0, 0, 1, 1]), rows, 0, dst]
    check_batched(op, args, [False, True, True, False, True], written=4)


def test_batched_nd2nz_declines_items_writing_one_buffer():
    """Items that write the same (unbatched) destination: their order matters, no form."""
    op = Nd2NzOp(buf((40, 48), "GM"), idx(2), buf((3, 2, 16, 16), "L1"))
    assert batched_kernel_of(op, [False, True, False, False]) is None


def ints(values) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


@pytest.mark.parametrize("kind", ["sum", "max", "prod"])
@pytest.mark.parametrize(("axes", "keep"), [((2,), True), ((1,), False), ((0, 2), True)])
def test_batched_reduce_equals_one_by_one(kind, axes, keep):
    """A batch of (2, 5, 300) tiles reduced over ``axes`` (kept as dims of 1 or dropped):
    bit for bit the kernel's result per tile (the same order of additions)."""
    shape = (2, 5, 300)  # longer than numpy's pairwise block
    out = tuple(1 if i in axes else d for i, d in enumerate(shape) if keep or i not in axes)
    op = ReduceOp(operands=[buf(shape, "UB"), buf(out, "UB")],
                  properties={"kind": StringAttr(kind), "axes": ints(axes)})  # fmt: skip
    op.verify()
    src = rng.uniform(0.5, 1.5, (6, *shape)).astype(np.float32)
    dst = np.full((6, *out), np.nan, np.float32)
    check_batched(op, [src, dst], [True, True], written=1)


def test_batched_transpose_equals_one_by_one():
    op = TransposeOp(operands=[buf((2, 3, 4), "UB"), buf((4, 2, 3), "UB")],
                     properties={"perm": ints((2, 0, 1))})  # fmt: skip
    op.verify()
    src = rng.standard_normal((5, 2, 3, 4)).astype(np.float32)
    dst = np.full((5, 4, 2, 3), np.nan, np.float32)
    check_batched(op, [src, dst], [True, True], written=1)


def test_batched_reduce_and_transpose_decline_one_shared_destination():
    """Tiles reduced into one buffer (the last one's result stays): in order, no form."""
    reduce = ReduceOp(operands=[buf((2, 3), "UB"), buf((2,), "UB")],
                      properties={"kind": StringAttr("sum"), "axes": ints((1,))})  # fmt: skip
    transpose = TransposeOp(operands=[buf((2, 3), "UB"), buf((3, 2), "UB")],
                            properties={"perm": ints((1, 0))})  # fmt: skip
    for op in (reduce, transpose):
        assert batched_kernel_of(op, [True, False]) is None


def test_nest_product_of_int8_steps_past_float32s_exact_range_equals_the_loop():
    """int8 x int8 into int32 over 6 K steps of K = 512 (K = 3072 in all: one product would
    need float64): products of as many steps as float32 holds exactly, added into the
    accumulator — bit for bit the K loop step by step."""
    from xdsl.dialects.builtin import i1, i8, i32

    m1, k1, n1, steps = 2, 16, 2, 6
    op = MmadOp(
        create_ssa_value(scoped_memref([m1, k1, 16, 32], i8, "L0A")),
        create_ssa_value(scoped_memref([k1, n1, 16, 32], i8, "L0B")),
        create_ssa_value(scoped_memref([n1, m1, 16, 16], i32, "L0C")),
        create_ssa_value(i1),
    )
    single = kernel_of(op)
    a = rng.integers(-128, 128, (3, steps, m1, k1, 16, 32), dtype=np.int8)
    b = rng.integers(-128, 128, (1, steps, k1, n1, 16, 32), dtype=np.int8)
    expected = np.zeros((3, 1, n1, m1, 16, 16), np.int32)
    for t in range(3):
        for s in range(steps):
            single(a[t, s], b[0, s], expected[t, 0], s == 0)
    c = np.full_like(expected, 7)
    nest_product(2, 1)(a, b, c, (np.arange(steps) == 0).reshape(1, steps))
    np.testing.assert_array_equal(c, expected)


def _loop_of(*ops) -> scf.ForOp:
    """An scf.for (bounds from outside) with ``ops`` as its body."""
    from xdsl.dialects import arith
    from xdsl.ir import Block

    bounds = [arith.ConstantOp.from_int_and_width(v, IndexType()) for v in (0, 4, 1)]
    body = Block(arg_types=[IndexType()])
    body.add_ops([*ops, scf.YieldOp()])
    return scf.ForOp(bounds[0].result, bounds[1].result, bounds[2].result, [], body)


def test_fresh_iterations_load_then_hand_over_but_not_read_before_written():
    """A loop whose iterations load a UB tile (whole: the window and its fill) and write it
    to the hand-over workspace starts afresh each iteration; writing any other GM, or
    storing the tile before loading it (the store reads the previous iteration's), does
    not."""
    from tilegraph.runtime.fast_executor.fresh_loops import fresh_iterations

    gm, workspace, tile = buf((8, 16), "GM"), buf((4, 16), "GM"), buf((1, 16), "UB")

    def load() -> CopyOp:
        return CopyOp(gm, idx(2), tile, idx(2))

    def store() -> CopyOp:
        return CopyOp(tile, idx(2), workspace, idx(2))

    loop = _loop_of(load(), store())
    assert fresh_iterations(loop, (workspace, [loop]))
    assert not fresh_iterations(loop, None)  # GM the iterations may share
    assert not fresh_iterations(loop, (workspace, []))  # one workspace copy for all
    stale = _loop_of(store(), load())
    assert not fresh_iterations(stale, (workspace, [stale]))


def test_window_is_the_same_from_lists_tuples_and_unhashable_offsets():
    """:func:`window` remembers its answers per arguments; an offset it cannot hash (a
    0-d array) is worked out afresh, to the same slices."""
    expected = ((slice(3, 5),), (slice(0, 2),))
    assert window((4,), (5,), (6,), (3,), (0,)) == expected
    assert window([4], [5], [6], [3], [0]) == expected
    assert window((4,), (5,), (6,), (np.array(3),), (0,)) == expected  # pyright: ignore[reportArgumentType]
    assert window((4,), (5,), (6,), (5,), (0,)) is None
