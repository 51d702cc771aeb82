"""GroupNormalization (-18 per-group and -21 per-channel scale, stash_type) and
MeanVarianceNormalization against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dialects.op_harness import build_op, check_op
from tilegraph.dialects.graph import ShapeError
from tilegraph.dialects.graph.normalization import GroupNormOp, MeanVarianceNormOp

rng = np.random.default_rng(0)
X = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_group_norm_21_per_channel(groups):
    scale, bias = (rng.standard_normal(6).astype(np.float32) for _ in range(2))
    attrs = {"num_groups": groups, "epsilon": 1e-3}
    check_op(GroupNormOp, [X, scale, bias], attrs, opset=21, rtol=1e-4, atol=1e-5)


def test_group_norm_18_per_group_and_float16():
    scale, bias = (rng.standard_normal(3).astype(np.float32) for _ in range(2))
    check_op(GroupNormOp, [X, scale, bias], {"num_groups": 3}, opset=18, rtol=1e-4, atol=1e-5)
    half = [a.astype(np.float16) for a in (X[:, :, 0], *(rng.standard_normal(6) for _ in "sb"))]
    check_op(GroupNormOp, half, {"num_groups": 2}, opset=21, rtol=2e-3, atol=2e-3)


def test_group_norm_checks():
    scale = np.ones(4, np.float32)
    with pytest.raises(ShapeError, match="per channel"):
        build_op(GroupNormOp, [X, scale, scale], {"num_groups": 2})
    six = np.ones(6, np.float32)
    with pytest.raises(ShapeError, match="does not divide"):
        build_op(GroupNormOp, [X, six, six], {"num_groups": 4})
    with pytest.raises(ShapeError, match="stash_type 16"):
        build_op(GroupNormOp, [X, six, six], {"num_groups": 2, "stash_type": 16})


@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3], [-1, -2]])
def test_mean_variance_normalization(axes):
    attrs = {} if axes is None else {"axes": axes}
    check_op(MeanVarianceNormOp, [X], attrs, opset=13, rtol=1e-4, atol=1e-5)
