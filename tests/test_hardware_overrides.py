"""What-if presets: a platform name with overrides (``ascend910b:ub=256KiB,l1=1MiB``) — its
units, its canonical spelling, its errors, and that a module compiled for it carries it
and is tiled and estimated with the overridden figures."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tilegraph
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.cost_model.kernel_report import kernel_report
from tilegraph.formats import get_platform
from tilegraph.hardware import (
    OVERRIDE_KEYS,
    PRESETS,
    KiB,
    MiB,
    base_platform,
    canonical_platform,
    hardware_preset,
)
from tilegraph.passes.pipelines import lowering_pipeline, option_value
from tilegraph.target import target_of


def test_overrides_replace_the_fields_and_keep_the_rest():
    base = hardware_preset("ascend910b")
    hw = hardware_preset("ascend910b:ub=256KiB,l1=1MiB,cube_cores=30,gm_bandwidth=2000")
    assert (hw.ub_bytes, hw.capacity("L1"), hw.cube_cores) == (256 * KiB, MiB, 30)
    assert hw.gm_bandwidth_gbps == 2000.0
    assert hw.capacity("L0C") == base.capacity("L0C") and hw.vector_cores == base.vector_cores
    assert hw.dma_bytes_per_cycle == base.dma_bytes_per_cycle
    assert PRESETS["ascend910b"].ub_bytes == 192 * KiB  # the preset itself is untouched


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("ascend910b:ub=256KiB,l1=1MiB", "ascend910b:l1=1MiB,ub=256KiB"),
        ("ASCEND910B: L1 = 1mib , UB=262144", "ascend910b:l1=1MiB,ub=256KiB"),
        ("ascend910b:ub=1.5KiB", "ascend910b:ub=1536B"),
        ("ascend910b:gm_bandwidth=2TB/s,clock=1800MHz", "ascend910b:gm_bandwidth=2000GB/s"),
        ("ascend910b:clock=2", "ascend910b:clock=2GHz"),
        ("ascend310p:l2=0", "ascend310p:l2=0B"),
        ("ascend910b:ub=192KiB", "ascend910b"),  # the preset's own value changes nothing
    ],
)
def test_canonical_spelling(name, canonical):
    assert canonical_platform(name) == canonical
    assert canonical_platform(canonical) == canonical  # a round trip
    assert hardware_preset(name) is hardware_preset(name)  # cached


def test_the_format_engine_keeps_the_base_presets_c0_rules():
    assert base_platform("Ascend910B:ub=256KiB") == "ascend910b"
    assert get_platform("ascend910b:ub=256KiB") is get_platform("ascend910b")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ascend910b:foo=1", "unknown override key 'foo'; valid keys: ub, l1"),
        ("ascend910b:ub=1XB", "override 'ub': unknown unit 'XB' \\(use B, KiB, MiB, GiB\\)"),
        ("ascend910b:ub=100", "override 'ub': UB must be a positive multiple of 32 B"),
        ("ascend910b:l0c=1000B", "override 'l0c': L0C must be a positive multiple of 512 B"),
        ("ascend910b:ub=0", "positive multiple"),
        ("ascend910b:cube_cores=0", "override 'cube_cores': must be a positive whole count"),
        ("ascend910b:cube_cores=50", "vector_cores \\(48\\) must be at least cube_cores \\(50\\)"),
        ("ascend310p:cube_cores=4", "counts must be equal"),
        ("ascend910b:gm_bandwidth=fast", "'fast' is not a number with a unit"),
        ("ascend910b:ub", "'ub' is not KEY=VALUE"),
        ("ascend910b:ub=1KiB,ub=2KiB", "'ub' is given twice"),
        ("ascend910b:", "no overrides after ':'"),
        ("h100:ub=1KiB", "unknown platform 'h100'; valid platforms: ascend910b"),
    ],
)
def test_bad_overrides_name_the_key(name, message):
    with pytest.raises(ValueError, match=message):
        hardware_preset(name)


def test_every_override_key_is_documented():
    assert set(OVERRIDE_KEYS) == {
        "ub", "l1", "l0a", "l0b", "l0c", "l2", "cube_cores", "vector_cores", "gm_bandwidth",
        "clock",
    }  # fmt: skip


def test_pass_options_quote_a_name_with_overrides():
    assert option_value("ascend910b") == "ascend910b"
    assert option_value("ascend910b:ub=256KiB,l1=1MiB") == '"ascend910b:ub=256KiB,l1=1MiB"'
    assert 'tile-kernels{platform="ascend910b:ub=256KiB"}' in lowering_pipeline(
        "ascend910b:ub=256KiB"
    )


def relu_model(shape: tuple[int, ...] = (1, 32, 32, 32)) -> onnx.ModelProto:
    """y = relu(x + b): one vector kernel over a 128 KiB tensor."""
    b = numpy_helper.from_array(np.ones(shape[-1], np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        [b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _tiles(module) -> int:
    return sum(k.tiles for k in kernel_report(module) if k.unit == "vector")


def test_a_module_compiled_for_an_override_carries_it_and_uses_its_ub():
    small = tilegraph.compile(relu_model(), platform="test")
    bigger = tilegraph.compile(relu_model(), platform="test:ub=32KiB")
    assert target_of(bigger.module).platform == "test:ub=32KiB"
    assert target_of(bigger.module).hw.ub_bytes == 32 * KiB
    assert _tiles(bigger.module) < _tiles(small.module)
    # the executors run it as before
    x = np.random.default_rng(0).standard_normal((1, 32, 32, 32)).astype(np.float32)
    np.testing.assert_allclose(bigger.run({"x": x})[0], np.maximum(x + 1, 0), rtol=1e-6)
    # the cycle model reads the same preset: bigger tiles, fewer of them, less time
    assert simulate_module(bigger.module).platform == "test:ub=32KiB"
    assert simulate_module(bigger.module).total_us < simulate_module(small.module).total_us


def test_a_pass_option_takes_a_quoted_name_with_overrides():
    from tilegraph.frontend import load_onnx
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline

    module = load_onnx(relu_model((1, 8, 16, 16)))
    run_pipeline('set-target{platform="test:UB=16kib"},O2', make_context(), module)
    assert target_of(module).platform == "test:ub=16KiB"
    assert target_of(module).hw.ub_bytes == 16 * KiB
