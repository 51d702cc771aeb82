"""DepthToSpace, SpaceToDepth, LpNormalization, Det, Unique, ReduceLogSum and the windows
against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import Const, build_op, check_op, run_onnxruntime
from tilegraph.dialects.graph import rearrange as ra
from tilegraph.dialects.graph.reduction import ReduceLogSumOp

rng = np.random.default_rng(0)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space_and_back(mode):
    x = rng.standard_normal((2, 8, 3, 4)).astype(np.float32)
    check_op(ra.DepthToSpaceOp, [x], {"blocksize": 2, "mode": mode})
    check_op(ra.SpaceToDepthOp, [x], {"blocksize": 1})
    check_op(ra.SpaceToDepthOp, [rng.standard_normal((1, 2, 4, 6)).astype(np.float32)],
             {"blocksize": 2})  # fmt: skip


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization(p):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    x[1] = 0
    check_op(ra.LpNormalizationOp, [x], {"axis": 1, "p": p})


def test_det_unique_reduce_log_sum():
    check_op(ra.DetOp, [rng.standard_normal((2, 3, 3)).astype(np.float32)], rtol=1e-4)
    x = np.array([2, 1, 1, 3, 4, 3], np.float32)
    for attrs in ({"sorted": 0}, {"sorted": 1}):  # data-dependent sizes: no shape check
        _, op = build_op(ra.UniqueOp, [x], attrs)
        ours = op.reference(x)
        theirs = run_onnxruntime("Unique", [x], attrs, n_outputs=4, opset=17)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(a, b)
    pos = rng.uniform(0.5, 2, (3, 4)).astype(np.float32)
    check_op(ReduceLogSumOp, [pos, Const(np.array([1], np.int64))], opset=18)


@pytest.mark.parametrize("op", [ra.HannWindowOp, ra.HammingWindowOp, ra.BlackmanWindowOp])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows(op, periodic):
    check_op(op, [Const(np.array(10, np.int64))], {"periodic": periodic}, opset=17, atol=1e-6)


def test_lp_pool_swish_and_dft():
    from tilegraph.dialects.graph.math_ops import SwishOp
    from tilegraph.dialects.graph.pooling import LpPoolOp
    from tilegraph.dialects.graph.signal import DFTOp

    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    check_op(LpPoolOp, [x], {"kernel_shape": [3, 3], "p": 3, "pads": [1, 1, 1, 1]}, opset=18)
    check_op(SwishOp, [x], {"alpha": 0.7}, opset=24)
    signal = rng.standard_normal((2, 8, 1)).astype(np.float32)
    for onesided in (0, 1):
        check_op(DFTOp, [signal, None, Const(np.array(1, np.int64))], {"onesided": onesided},
                 opset=20, rtol=1e-4, atol=1e-5)  # fmt: skip


def test_center_crop_pad():
    x = rng.standard_normal((5, 4, 3)).astype(np.float32)
    check_op(ra.CenterCropPadOp, [x, Const(np.array([3, 7], np.int64))], {"axes": [0, 1]},
             opset=18)  # fmt: skip
