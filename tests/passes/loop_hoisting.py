"""Shared checks of the loop-hoisting pass tests (``hoist-loop-projection``,
``hoist-loop-elementwise``): run a pass on an imported ONNX loop model and count what it
hoisted; compare the rewritten module with onnxruntime and, bit for bit, with the loop it
replaces."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from xdsl.dialects.builtin import ModuleOp

from tilegraph.frontend import load_onnx
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference


def hoisted(model: onnx.ModelProto, pass_name: str, statistic: str) -> tuple[ModuleOp, int]:
    """``model`` imported and run through ``pass_name``, with its ``statistic`` (0 when the
    pass recorded none)."""
    module = load_onnx(model)
    with collecting_statistics() as stats:
        run_pipeline(pass_name, make_context(), module)
    module.verify()
    found = stats.for_pass(pass_name)
    return module, int(found[statistic]) if statistic in found else 0


def check_outputs(
    model: onnx.ModelProto, module: ModuleOp, inputs: dict[str, np.ndarray], rtol: float
) -> None:
    """``module`` computes what onnxruntime does on ``model`` (``rtol``, atol 1e-6) and
    exactly what the unrewritten import does."""
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    original = run_reference(load_onnx(model), inputs)
    got = run_reference(module, inputs)
    for want, have, exact in zip(session.run(None, inputs), got, original, strict=True):
        np.testing.assert_allclose(have, np.asarray(want), rtol=rtol, atol=1e-6)
        np.testing.assert_array_equal(have, exact)
