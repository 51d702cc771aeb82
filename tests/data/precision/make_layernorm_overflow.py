"""Makes ``layernorm_overflow.onnx``: a model force_fp16 breaks (``docs/precision.md``).

``MatMul -> hand-written LayerNorm -> MatMul -> Relu``, as exporters emit a LayerNorm
spelled out. The variance is ``ReduceSum(d * d) / 256``: with activations of standard
deviation ~24 the sum over the 256 features is ~150 000, beyond float16's 65 504, so under
force_fp16 the ReduceSum overflows to inf and every output is 0 or NaN; each other op is
fine in float16. The minimal keep-list is the ReduceSum and the Div after it (the sum does
not fit float16 either way). Run from the repository root::

    python tests/data/precision/make_layernorm_overflow.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).parent
MODEL = HERE / "layernorm_overflow.onnx"
ROWS, IN, HIDDEN, OUT = 16, 64, 256, 64


def make_model() -> onnx.ModelProto:
    """The model, with seeded random weights."""
    rng = np.random.default_rng(26)

    def init(name: str, array: np.ndarray) -> onnx.TensorProto:
        return numpy_helper.from_array(np.asarray(array, np.float32), name)

    inits = [
        init("w1", rng.normal(0, 3.0, (IN, HIDDEN))),
        init("b1", rng.normal(0, 1.0, (HIDDEN,))),
        init("count", np.array(HIDDEN, np.float32)),
        init("eps", np.array(1e-5, np.float32)),
        init("gamma", rng.uniform(0.5, 1.5, (HIDDEN,))),
        init("beta", rng.normal(0, 0.1, (HIDDEN,))),
        init("w2", rng.normal(0, 1 / np.sqrt(HIDDEN), (HIDDEN, OUT))),
        numpy_helper.from_array(np.array([-1], np.int64), "axes"),
    ]
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w1"], ["h0"], name="fc1/MatMul"),
        n("Add", ["h0", "b1"], ["h"], name="fc1/Add"),
        n("ReduceMean", ["h", "axes"], ["mean"], name="ln/ReduceMean", keepdims=1),
        n("Sub", ["h", "mean"], ["d"], name="ln/Sub"),
        n("Mul", ["d", "d"], ["sq"], name="ln/Square"),
        n("ReduceSum", ["sq", "axes"], ["ssq"], name="ln/ReduceSum", keepdims=1),
        n("Div", ["ssq", "count"], ["var"], name="ln/Variance"),
        n("Add", ["var", "eps"], ["var_eps"], name="ln/AddEps"),
        n("Sqrt", ["var_eps"], ["std"], name="ln/Sqrt"),
        n("Div", ["d", "std"], ["normed"], name="ln/Normalize"),
        n("Mul", ["normed", "gamma"], ["scaled"], name="ln/Scale"),
        n("Add", ["scaled", "beta"], ["shifted"], name="ln/Shift"),
        n("MatMul", ["shifted", "w2"], ["y0"], name="fc2/MatMul"),
        n("Relu", ["y0"], ["y"], name="fc2/Relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "layernorm_overflow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, IN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [ROWS, OUT])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    onnx.save(make_model(), MODEL)
    print(f"wrote {MODEL} ({MODEL.stat().st_size} bytes)")
