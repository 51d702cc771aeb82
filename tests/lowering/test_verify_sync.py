"""``verify-sync``: the pipe-queue checker as a pass, run last by ``tilegraph.compile`` and
``tilegraph-run`` unless turned off, and a located, pass-named error on a missing flag."""

from __future__ import annotations

import pytest
from xdsl.dialects import func

import tilegraph
from tests.tools.test_run import small_model
from tilegraph.dialects.tile import WaitFlagOp
from tilegraph.lowering.transforms.verify_sync import SyncVerificationError, VerifySyncPass
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import (
    failing_pass,
    lowering_pipeline,
    observing_passes,
    run_pipeline,
)
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.tools.run.cli import run


@pytest.fixture
def relu_model(tmp_path) -> str:
    """A one-op ONNX model (Relu): one vector kernel, with flags between its pipes."""
    return small_model(tmp_path / "m.onnx")


def test_the_lowering_pipeline_ends_with_verify_sync_unless_told_not_to():
    assert lowering_pipeline().endswith(",plan-memory,verify-sync")
    assert lowering_pipeline(verify_sync=False).endswith(",plan-memory")


@pytest.mark.parametrize("verify", [True, False])
def test_compile_runs_verify_sync_by_default(relu_model, verify):
    with collecting_statistics() as stats:
        tilegraph.compile(relu_model, platform="test", verify_sync=verify)
    checked = stats.as_dict().get("verify-sync", {}).get("kernels", 0)
    assert (checked > 0) is verify


def test_a_missing_flag_is_a_located_error_naming_the_pass(relu_model):
    module = tilegraph.compile(relu_model, platform="test", verify_sync=False).module
    kernel = next(
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.tiles" in f.attributes
    )
    wait = next(op for op in kernel.walk() if isinstance(op, WaitFlagOp))
    wait.detach()
    wait.erase()
    name = kernel.sym_name.data
    # the kernel and the ONNX node it computes (small_model's Relu is node 'n1')
    with pytest.raises(SyncVerificationError, match=rf"^verify-sync: @{name} \(node 'n1'\): ") as e:
        run_pipeline("verify-sync", make_context(), module)
    assert failing_pass(e.value) == ("verify-sync",)


@pytest.mark.parametrize(("flags", "expected"), [([], True), (["--no-verify-sync"], False)])
def test_tilegraph_run_verifies_sync_unless_no_verify_sync(relu_model, flags, expected):
    ran: list[str] = []
    with observing_passes(lambda p, _module: ran.append(p.name)):
        assert run([relu_model, "--no-format-report", *flags]) == 0
    assert "inject-sync" in ran
    assert ("verify-sync" in ran) is expected


def test_a_negative_walk_length_is_refused():
    with pytest.raises(ValueError, match="max-trips must be 0"):
        VerifySyncPass(max_trips=-1)
    assert VerifySyncPass(max_trips=0).max_trips == 0
