"""Each core group of a mix launch has its own region of the GM workspace.

``split-cores`` grows a mix kernel's workspace to one region per core group and offsets
every access of it by the group's region (:mod:`tilegraph.lowering.transforms.
mix_workspace`). The interpreter runs the groups of a mix launch interleaved, so a
workspace shared between groups gives a wrong number: with the offset removed (every group
in region 0) the interpreter's result differs from the reference, while the kernel as
lowered matches it.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp

from tests.lowering.test_flash_attention import CASES, _attention
from tests.lowering.test_mix_kernels import _mix_launches, lowered
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.dialects.tile import BlockIdxOp, StridedViewOp, memref_shape
from tilegraph.dialects.tile.workspace import container_bytes, strided_memref
from tilegraph.lowering.analysis.mix_workspace import MixWorkspaceError, workspace_per_group
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.runtime.tiles import run_tiles

Lowered = tuple[ModuleOp, Any, list[np.ndarray]]


def _parts(module: ModuleOp) -> list[func.FuncOp]:
    functions = {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}
    return [functions[name] for launch in _mix_launches(module) for name in launch.callees()]


def _region_offsets(fn: func.FuncOp) -> list[arith.AddiOp]:
    """The additions that move each workspace access into the running group's region."""
    workspace = fn.body.block.args[-1]
    found = []
    for use in workspace.uses:
        offset = use.operation.operands[use.index + 1].owner
        assert isinstance(offset, arith.AddiOp), use.operation.name
        found.append(offset)
    return found


def _one_region_for_all(module: ModuleOp) -> None:
    """The mutation: every group's accesses at region 0 (the offset inside the region
    kept), as if the workspace were shared by the groups."""
    for fn in _parts(module):
        for add in _region_offsets(fn):
            add.result.replace_all_uses_with(add.rhs)


@pytest.fixture(scope="module")
def conv_mix() -> Lowered:
    return lowered("test")


def _attention_mix() -> Lowered:
    module, inputs = _attention(*CASES["cross"])
    run_pipeline("set-target{platform=test},O2", make_context(), module)
    reference = run_reference(module, inputs)
    run_pipeline(lowering_pipeline(), make_context(), module)
    return module, inputs, reference


def test_each_group_has_a_region_of_its_own(conv_mix):
    module, _, _ = conv_mix
    (launch,) = _mix_launches(module)
    groups = launch.block_count
    assert groups > 1
    workspace = launch.args[-1].type
    assert memref_shape(workspace)[0] == 2 * groups  # two slots per group
    (entry,) = [k for k in kernel_report(module) if k.unit == "mix"]
    assert entry.workspace_bytes == container_bytes(workspace)  # what plan-memory placed
    for fn in _parts(module):
        assert fn.function_type.inputs.data[-1] == workspace
        bases = {a.lhs.owner for a in _region_offsets(fn)}
        (base,) = bases  # one region base per kernel, from the block index
        assert isinstance(base, arith.MuliOp) and isinstance(base.lhs.owner, BlockIdxOp)


@pytest.mark.parametrize("case", ["conv", "attention"])
def test_a_workspace_shared_by_the_groups_gives_wrong_numbers(conv_mix, case):
    module, inputs, reference = conv_mix if case == "conv" else _attention_mix()
    (launch,) = _mix_launches(module)
    assert launch.block_count > 1
    (got,) = run_tiles(module, inputs, executor="interpret")
    np.testing.assert_allclose(got, reference[0], rtol=1e-4, atol=1e-5)
    if case == "conv":  # the fixture is shared: mutate a copy
        module, inputs, reference = lowered("test")
    _one_region_for_all(module)
    (mutated,) = run_tiles(module, inputs, executor="interpret")
    assert not np.allclose(mutated, reference[0], rtol=1e-4, atol=1e-5)


def test_an_access_the_rewrite_does_not_know_is_an_error():
    module, _, _ = lowered("test")
    (launch,) = _mix_launches(module)
    aic, aiv = _parts(module)
    workspace = aiv.body.block.args[-1]
    shape = memref_shape(workspace)
    strides = [prod(shape[i + 1 :]) for i in range(len(shape))]
    view = StridedViewOp(workspace, strided_memref(workspace.type, shape, strides))
    aiv.body.block.insert_op_before(view, aiv.body.block.first_op)  # type: ignore[arg-type]
    with pytest.raises(MixWorkspaceError, match="'tile.strided_view' uses the mix kernel's"):
        workspace_per_group(aic, aiv, [launch], 2)
