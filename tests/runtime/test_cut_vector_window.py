"""A vector kernel's tile cut at its GM tensor's end is charged for the rows it moves
(:mod:`tilegraph.cost_model.cycles.cut_window`): Ascend C's ``DataCopy`` moves
``blockCount`` rows of ``blockLen`` 32 B blocks, so a window's rows past the tensor's end
are not moved.

A Relu over (197, 771) fp16 on ascend910b: its tiles are 5 whole rows, and the last one
(rows 195, 196) holds 2 rows of the tensor.
"""

from __future__ import annotations

from math import ceil

import onnx.helper as oh
from onnx import TensorProto
from xdsl.dialects import func

import tilegraph
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.dialects.tile import CopyOp
from tilegraph.dialects.tile.base import memref_shape
from tilegraph.hardware import hardware_preset

ROWS, COLS = 197, 771


def _relu():
    x = oh.make_tensor_value_info("x", TensorProto.FLOAT16, [ROWS, COLS])
    y = oh.make_tensor_value_info("y", TensorProto.FLOAT16, [ROWS, COLS])
    graph = oh.make_graph([oh.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])
    return tilegraph.compile(model, platform="ascend910b").module


def test_a_cut_vector_tile_moves_its_rows():
    module = _relu()
    (kernel,) = simulate_module(module).kernels
    # each element read and written once: 197 rows, not 40 whole tiles of 5 (200 rows)
    assert kernel.bytes_per_path["GM->UB"] == ROWS * COLS * 2
    assert kernel.bytes_per_path["UB->GM"] == ROWS * COLS * 2


def test_cut_vector_copy_records_by_rows():
    """One record per row count of the tile; ``r`` rows take the DMA head and ``r`` rows'
    bytes at the path rate (whole rows of the tensor: one contiguous run)."""
    hw = hardware_preset("ascend910b")
    (fn,) = [f for f in _relu().walk() if isinstance(f, func.FuncOp) and f.sym_name.data != "main"]
    program = compile_kernel(fn, hw)
    assert program.ragged
    for path in ("GM->UB", "UB->GM"):
        records = [r for r in program.records if isinstance(r.op, CopyOp) and r.path == path]
        copy = records[0].op
        assert isinstance(copy, CopyOp)
        tile_rows = memref_shape(copy.dst if path == "GM->UB" else copy.src)[0]
        assert ROWS % tile_rows and len(records) == tile_rows
        for rows, record in enumerate(records, start=1):
            moved = rows * COLS * 2
            rate = hw.dma_bytes_per_cycle[path] * hw.gm_efficiency(moved)
            assert record.moved_bytes == moved
            assert record.cost == hw.dma_issue_cycles + ceil(moved / rate)
