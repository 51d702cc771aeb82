"""A gather reading its indices (or table) through reshape-like ops, or writing its rows
through them: ``input_ids.view(-1, S)`` before a Hugging Face embedding, GCN's squeezed
edge index. The view ops move no bytes of a row-major tensor, so the group is one gather
kernel reading the view's source (and writing the view's target) — every level agrees on
both executors, with negative indices and a ragged last tile on the ``test`` preset."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.ir import SSAValue

from tests.lowering.test_gather_kernels import GATHER, index_input
from tests.lowering.test_nhwc_out import zoo_report
from tests.lowering.test_tile_differential import (
    NAN,
    Builder,
    Graph,
    Levels,
    assert_matches,
    assert_no_nan,
    assert_units,
    run_levels,
)
from tests.zoo.zoo import MODELS, MODELS_DIR


def reshaped_ids(g: Graph) -> list[SSAValue]:
    """BERT's ``input_ids.view(-1, S)``: [2, 3, 7] int64 ids seen as [6, 7], 42 rows of a
    [37, 40] table (160 B rows): tiles of 11 on the test preset, a ragged last one."""
    ids = g.op("reshape", index_input(g, [2, 3, 7], 37, "int64"), g.ints([-1, 7]))
    return [g.op("gather", g.const([37, 40]), ids, axis=0)]


def squeezed_ids(g: Graph) -> list[SSAValue]:
    """GCN's edge index ``[35, 1] -> [35]`` (int32) into an input table."""
    ids = g.op("squeeze", index_input(g, [35, 1], 37, "int32"), g.ints([1]))
    return [g.op("gather", g.input([37, 40]), ids, axis=0)]


def unsqueezed_flattened_ids(g: Graph) -> list[SSAValue]:
    """Two views in a row: ``[5, 7] -> [5, 1, 7] -> [5, 7]`` (flatten at 1)."""
    ids = g.op("unsqueeze", index_input(g, [5, 7], 37, "int64"), g.ints([1]))
    ids = g.op("flatten", ids, axis=1)
    return [g.op("gather", g.input([37, 40]), ids, axis=0)]


def reshaped_ids_short_rows(g: Graph) -> list[SSAValue]:
    """Rows under 32 B (the last axis of [300, 5]) through UB, ids [2, 3] seen as [6]."""
    ids = g.op("reshape", index_input(g, [2, 3], 5, "int64"), g.ints([6]))
    return [g.op("gather", g.input([300, 5]), ids, axis=1)]


def reshaped_table(g: Graph) -> list[SSAValue]:
    """A table reshaped before the lookup: [74, 20] seen as [37, 40]."""
    table = g.op("reshape", g.input([74, 20]), g.ints([37, 40]))
    return [g.op("gather", table, index_input(g, [35], 37, "int64"), axis=0)]


def rows_through_views(g: Graph) -> list[SSAValue]:
    """Hiera's unroll: ids viewed [5, 7] -> [35], the rows [35, 40] written as [5, 7, 40]
    through an unsqueeze and a reshape (an output view)."""
    ids = g.op("reshape", index_input(g, [5, 7], 37, "int64"), g.ints([35]))
    rows = g.op("unsqueeze", g.op("gather", g.input([37, 40]), ids, axis=0), g.ints([0]))
    return [g.op("reshape", rows, g.ints([5, 7, 40]))]


CASES = {
    "reshaped_ids": reshaped_ids,
    "squeezed_ids": squeezed_ids,
    "unsqueezed_flattened_ids": unsqueezed_flattened_ids,
    "reshaped_ids_short_rows": reshaped_ids_short_rows,
    "reshaped_table": reshaped_table,
    "rows_through_views": rows_through_views,
}


def one_exact_gather_kernel(build: Builder) -> tuple[Graph, Levels]:
    """``build``'s graph run at every level on the ``test`` preset with NaN in the unwritten
    on-chip lanes: exact everywhere and one vector kernel holding a gather and more ops
    (a group the lowering would otherwise split)."""
    g = Graph()
    module = g.b.build(*build(g))
    levels = run_levels(module, g.arrays, "test", pad_value=NAN)
    assert_no_nan(levels)
    assert_matches(levels, rtol=0, atol=0)
    (kernel,) = levels.tiled_kernels
    assert kernel.unit == "vector", kernel
    assert any(op.startswith("graph.gather") for op in kernel.ops), kernel.ops
    assert len(kernel.ops) > 1, kernel.ops
    return g, levels


@pytest.mark.parametrize("name", list(CASES))
def test_gather_through_views_is_one_kernel(name: str):
    """One vector kernel (the view ops inside it), exact at every level with NaN in the
    unwritten on-chip lanes; the indices hold negatives."""
    g, levels = one_exact_gather_kernel(CASES[name])
    assert_units(levels.tiled_kernels, GATHER, "tile-kernels{platform=test}")
    ids = next(a for a in g.arrays if a.dtype.kind == "i")
    assert (ids < 0).any(), "the case should have negative indices"
    assert levels.splits(), "the test preset should split the gather into tiles"


@pytest.mark.parametrize("name", ["hf_bert", "gcn"])
def test_zoo_lowering_section_lists_no_gather_split(name: str, tmp_path: Path):
    """tilegraph-run on BERT (``input_ids.view(-1, S)`` into its GatherND-made gather) and
    GCN (a squeezed edge index): no split group holds a gather, the kernel computing the
    viewed gather holds its view, and the outputs match onnxruntime."""
    if not (MODELS_DIR / MODELS[name].file).exists():
        pytest.skip(f"{MODELS[name].file} is not exported")
    report = zoo_report(name, tmp_path, data_set=1)
    split = report["lowering"]["split_groups"]
    assert not [g for g in split if any(op["op"] == "graph.gather" for op in g["ops"])], split
    viewed = [k for k in report["kernels"] if "graph.gather" in k["ops"] and len(k["ops"]) > 1]
    assert viewed and all(k["unit"] == "vector" for k in viewed), report["kernels"]
