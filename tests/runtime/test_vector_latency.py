"""A vector op holds the V pipe for its repeats; its result is in UB a latency later — 15
cycles (``vecDelay_``) plus the instruction's own delay — which a dependent op (behind its
``pipe_barrier`` V) and the other pipes wait for, and the next independent op does not:
Huawei's cycle-accurate A2/A3 pipe model in pypto (docs/hardware.md, "Vector latencies").
The figures are written out here from that source, not read from the code."""

from __future__ import annotations

from math import ceil

import pytest
from xdsl.dialects.builtin import DenseArrayBase, StringAttr, f16, f32, i32, i64

from tests.runtime.test_cycle_model import Kernel, cycles
from tilegraph.cost_model.tile_costs import cost_of, vector_latency_cycles
from tilegraph.dialects.tile import BINARY_OPS, UNARY_OPS, CastOp, TileOp
from tilegraph.dialects.tile.sync import PipeBarrierOp
from tilegraph.dialects.tile.vector_layout import ReduceOp
from tilegraph.hardware import hardware_preset

B910 = hardware_preset("ascend910b")
P310 = hardware_preset("ascend310p")
DOC_VEC_DELAY = 15
"""pypto's ``vecDelay_``: every vector instruction's result latency after its repeats."""
DOC_DELAY = {"vadd": 6, "vmul": 7, "vdiv": 13, "vexp": 12, "vln": 14, "vsqrt": 13, "vmax": 4}
"""The delay column of pypto's ``VEC_VALU_TAB`` (fp16 and fp32 alike)."""
DOC_INT_MUL_DELAY = 5
DOC_VCONV_DELAY = 4
DOC_VCADD_DELAY = {f16: 23, f32: 20}
DOC_VCMAX_DELAY = {f16: 9, f32: 8}


def test_the_presets_carry_pyptos_vector_latency():
    assert B910.vector_result_latency_cycles == DOC_VEC_DELAY
    assert P310.vector_result_latency_cycles == DOC_VEC_DELAY
    assert hardware_preset("test").vector_result_latency_cycles == 0


@pytest.mark.parametrize("name", sorted(DOC_DELAY))
@pytest.mark.parametrize("element", [f16, f32], ids=["f16", "f32"])
def test_an_instruction_adds_its_own_delay(name, element):
    kern = Kernel(B910)
    x = kern.buf((8, 128), "UB", element)
    ops = {**UNARY_OPS, **BINARY_OPS}
    op = ops[name](x, x) if name in UNARY_OPS else ops[name](x, x, x)
    assert vector_latency_cycles(op, B910) == DOC_VEC_DELAY + DOC_DELAY[name]


def test_integer_multiplies_and_casts_take_their_own_delay():
    kern = Kernel(B910)
    x = kern.buf((8, 128), "UB", i32)
    h, w = kern.buf((8, 128), "UB", f16), kern.buf((8, 128), "UB", f32)
    assert vector_latency_cycles(BINARY_OPS["vmul"](x, x, x), B910) == 15 + DOC_INT_MUL_DELAY
    cast = CastOp.create(operands=[w, h])
    assert vector_latency_cycles(cast, B910) == DOC_VEC_DELAY + DOC_VCONV_DELAY


def _reduce(kind: str, element, axes: tuple[int, ...]) -> TileOp:
    kern = Kernel(B910)
    src = kern.buf((16, 256), "UB", element)
    dst = kern.buf(tuple(1 if i in axes else d for i, d in enumerate((16, 256))), "UB", element)
    return ReduceOp(
        operands=[src, dst],
        properties={"kind": StringAttr(kind), "axes": DenseArrayBase.from_list(i64, axes)},
    )


@pytest.mark.parametrize("element", [f16, f32], ids=["f16", "f32"])
def test_a_row_reduction_ends_in_its_cross_lane_instructions_delay(element):
    sum_rows = _reduce("sum", element, (1,))
    max_rows = _reduce("max", element, (1,))
    assert vector_latency_cycles(sum_rows, B910) == DOC_VEC_DELAY + DOC_VCADD_DELAY[element]
    assert vector_latency_cycles(max_rows, B910) == DOC_VEC_DELAY + DOC_VCMAX_DELAY[element]
    # over the outer axis: an elementwise vmax tree
    outer = _reduce("max", element, (0,))
    assert vector_latency_cycles(outer, B910) == DOC_VEC_DELAY + DOC_DELAY["vmax"]


def _two_ops(dependent: bool) -> tuple[Kernel, list[TileOp]]:
    kern = Kernel(B910)
    x, y = kern.buf((16, 128), "UB", f32, "x"), kern.buf((16, 128), "UB", f32, "y")
    z = kern.buf((16, 128), "UB", f32, "z")
    first = kern.add(BINARY_OPS["vadd"](x, x, y))
    if dependent:
        kern.add(PipeBarrierOp("V"))
    second = kern.add(UNARY_OPS["vexp"](y if dependent else x, z))
    return kern, [first, second]


@pytest.mark.parametrize("mode", ["flags", "data"])
def test_a_dependent_op_waits_for_the_result_an_independent_one_does_not(mode):
    kern, (vadd, vexp) = _two_ops(dependent=True)
    add_repeats = ceil(16 * 128 * 4 / 256)
    exp_repeats = ceil(16 * 128 / 32)
    assert (cost_of(vadd, B910), cost_of(vexp, B910)) == (add_repeats, exp_repeats)
    add_done = add_repeats + DOC_VEC_DELAY + DOC_DELAY["vadd"]
    exp_latency = DOC_VEC_DELAY + DOC_DELAY["vexp"]
    barrier = 1 if mode == "flags" else 0  # the data mode orders by the buffer, not the op
    assert cycles(kern.done(), B910, mode=mode) == add_done + barrier + exp_repeats + exp_latency
    kern, _ = _two_ops(dependent=False)
    # back to back on the pipe; the block ends when the last result is in
    assert cycles(kern.done(), B910, mode=mode) == add_repeats + exp_repeats + exp_latency
