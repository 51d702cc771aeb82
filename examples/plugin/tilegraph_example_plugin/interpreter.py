"""``example.fake_quant`` in tilegraph's xDSL interpreters (the reference interpreter and the
tile level's ``--executor interpret``), registered through the ``tilegraph.interpreters``
entry point ``example``."""

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from tilegraph_example_plugin.fake_quant import FakeQuantOp, fake_quant


@register_impls
class ExampleFunctions(InterpreterFunctions):
    """One implementation per op of the ``example`` dialect.

    Runtime values are numpy arrays in the *storage* layout of their type (an NC1HWC0 tensor
    arrives as NC1HWC0 data). ``fake_quant`` is elementwise and its verifier makes the result
    type equal to the operand's, so it works on the storage array as it is, padding included
    (0 and NaN are fixed points).
    """

    @impl(FakeQuantOp)
    def run_fake_quant(
        self, interpreter: Interpreter, op: FakeQuantOp, args: tuple[Any, ...]
    ) -> tuple[np.ndarray]:
        (x,) = args
        return (fake_quant(np.asarray(x), op.attr("scale"), op.attr("bits")),)
