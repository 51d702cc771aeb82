"""benchmarks/zoo_kernels.py: one row of its table, measured on the smallest zoo model."""

from __future__ import annotations

from tests.validation.benchmark_scripts import load_script
from tests.zoo.zoo import MODELS

table = load_script("zoo_kernels")


def test_a_row_counts_kernels_estimates_and_compares_with_onnxruntime():
    row = dict(
        zip(table.HEADER, table.model_row(MODELS["small_cnn"], repeat=1, threads=1), strict=True)
    )
    assert row["model"] == "small_cnn"
    # small_cnn: three convolutions on the cube and their neighbours on the vector cores
    assert int(row["cube"]) == 3 and int(row["host"]) == 0 and row["host ops"] == "0"
    assert float(row["est. 910B µs"]) > 0 and float(row["est. 310P µs"]) > 0
    assert float(row["fast ms"]) > 0 and float(row["onnxruntime ms"]) > 0
    assert float(row["max abs diff"]) < 1e-4
