"""The reference interpreter: storage layouts, trans_data, input checking."""

from __future__ import annotations

import numpy as np
import pytest

from tilegraph.dialects.entry import InputError
from tilegraph.formats import to_storage
from tilegraph.passes.context import parse_mlir
from tilegraph.runtime import run_reference

STORAGE_CHAIN = """
func.func @main(%x: !layout.tensor<2x20x3x3xf32, NCHW>) -> !layout.tensor<2x20x3x3xf32, NCHW> {
  %a = layout.trans_data %x : !layout.tensor<2x20x3x3xf32, NCHW> -> !layout.tensor<2x20x3x3xf32, NCHW -> NC1HWC0>
  %b = graph.neg %a : !layout.tensor<2x20x3x3xf32, NCHW -> NC1HWC0>
  %c = layout.trans_data %b : !layout.tensor<2x20x3x3xf32, NCHW -> NC1HWC0> -> !layout.tensor<2x20x3x3xf32, NCHW>
  func.return %c : !layout.tensor<2x20x3x3xf32, NCHW>
}
"""


def test_values_move_through_storage_layouts():
    x = np.random.default_rng(0).standard_normal((2, 20, 3, 3)).astype(np.float32)
    (y,) = run_reference(parse_mlir(STORAGE_CHAIN), [x])
    np.testing.assert_array_equal(y, -x)


def test_kernel_reads_storage_layout_data():
    """An NC1HWC0 argument is passed in origin layout and laid out before the call."""
    text = """
    func.func @main(%x: !layout.tensor<1x20x2x2xf32, NCHW -> NC1HWC0>) -> !layout.tensor<1x20x2x2xf32, NCHW -> NC1HWC0> {
      %y = graph.relu %x : !layout.tensor<1x20x2x2xf32, NCHW -> NC1HWC0>
      func.return %y : !layout.tensor<1x20x2x2xf32, NCHW -> NC1HWC0>
    }
    """
    x = np.arange(80, dtype=np.float32).reshape(1, 20, 2, 2) - 40
    (y,) = run_reference(parse_mlir(text), [x])
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_trans_data_result_is_storage_shaped_inside():
    """What flows between ops is storage-shaped: check with a function returning storage."""
    from tilegraph.runtime.interpreter import LayoutFunctions  # noqa: F401

    module = parse_mlir(STORAGE_CHAIN)
    from xdsl.interpreter import Interpreter
    from xdsl.interpreters.func import FuncFunctions

    from tilegraph.runtime.interpreter import GraphFunctions

    fn = next(iter(module.ops))
    interp = Interpreter(module)
    for f in (FuncFunctions(), GraphFunctions(), LayoutFunctions()):
        interp.register_implementations(f)
    x = np.ones((2, 20, 3, 3), np.float32)
    trans = next(iter(fn.body.block.ops))
    (stored,) = interp.run_op(trans, (x,))
    assert stored.shape == (2, 2, 3, 3, 16)
    np.testing.assert_array_equal(stored, to_storage(x, "NCHW", "NC1HWC0"))


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([], "expected 1 input"),
        ([np.ones((2, 20, 3, 4), np.float32)], r"dim 3 is 4, expected 3"),
        ([np.ones((2, 20, 3, 3), np.float64)], "dtype float64, expected float32"),
        ([np.ones((20, 3, 3), np.float32)], "rank 3"),
        ({"y": np.ones((2, 20, 3, 3), np.float32)}, "unknown input"),
    ],
)
def test_bad_inputs(inputs, message):
    with pytest.raises(InputError, match=message):
        run_reference(parse_mlir(STORAGE_CHAIN), inputs)


def test_symbolic_dims_bind_consistently():
    text = """
    func.func @main(%a: !layout.tensor<[s0, 2], f32>, %b: !layout.tensor<[s0, 2], f32>) -> !layout.tensor<[s0, 2], f32> {
      %y = graph.add %a, %b : !layout.tensor<[s0, 2], f32>
      func.return %y : !layout.tensor<[s0, 2], f32>
    }
    """
    module = parse_mlir(text)
    (y,) = run_reference(module, [np.ones((3, 2), np.float32), np.ones((3, 2), np.float32)])
    assert y.shape == (3, 2)
    with pytest.raises(InputError, match="symbol s0 is already 3"):
        run_reference(module, [np.ones((3, 2), np.float32), np.ones((4, 2), np.float32)])


def test_elided_constant_cannot_run():
    text = """
    func.func @main() -> !layout.tensor<100xf32> {
      %c = graph.constant dense<__elided__> : !layout.tensor<100xf32>
      func.return %c : !layout.tensor<100xf32>
    }
    """
    with pytest.raises(Exception, match="elided"):
        run_reference(parse_mlir(text), [])


# ---- which function runs ---------------------------------------------------------------

HELPERS = """
func.func @helper(%x: !layout.tensor<2xf32>) -> !layout.tensor<2xf32> {
  %y = graph.neg %x : !layout.tensor<2xf32>
  func.return %y : !layout.tensor<2xf32>
}
func.func @model(%x: !layout.tensor<2xf32>) -> !layout.tensor<2xf32> {
  %y = func.call @helper(%x) : (!layout.tensor<2xf32>) -> !layout.tensor<2xf32>
  %z = graph.relu %y : !layout.tensor<2xf32>
  func.return %z : !layout.tensor<2xf32>
}
"""


def test_the_entry_is_the_one_function_no_other_calls():
    from tilegraph.dialects.entry import entry_function

    assert entry_function(parse_mlir(HELPERS)).sym_name.data == "model"


def test_several_uncalled_functions_are_named_as_candidates():
    from tilegraph.dialects.entry import entry_function

    text = HELPERS + HELPERS.replace("@model", "@other").split("}\n", 1)[1]
    with pytest.raises(InputError, match=r"2 are called by no other \(@model, @other\)"):
        entry_function(parse_mlir(text))


def test_set_entry_is_what_runs_and_a_wrong_name_lists_the_functions():
    from tilegraph.dialects.entry import set_entry

    module = parse_mlir(HELPERS)
    set_entry(module, "helper")
    (y,) = run_reference(module, [np.array([1.0, -2.0], np.float32)])
    np.testing.assert_array_equal(y, [-1.0, 2.0])
    with pytest.raises(InputError, match=r"no function @nope .*@helper, @model"):
        set_entry(module, "nope")


def test_compile_takes_the_entry(tmp_path):
    import tilegraph

    path = tmp_path / "m.mlir"
    path.write_text(
        HELPERS.replace("func.call @helper(%x)", "graph.neg %x").replace(
            " : (!layout.tensor<2xf32>) -> !layout.tensor<2xf32>\n  %z",
            " : !layout.tensor<2xf32>\n  %z",
        )
    )
    x = np.array([1.0, -2.0], np.float32)
    (y,) = tilegraph.compile(str(path), target="reference", entry="helper")(x)
    np.testing.assert_array_equal(y, -x)
