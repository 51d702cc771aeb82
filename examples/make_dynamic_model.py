"""Write a small text-recogniser-style model with a dynamic batch and width.

    python examples/make_dynamic_model.py build/recogniser.onnx [--seed 0]

Input ``x[b, 3, 48, w]`` (like a PaddleOCR recogniser's image strip): Conv 3x3 -> Relu ->
MaxPool 2x2 -> Conv 3x3 stride (2, 1) -> Relu -> Transpose -> Reshape to a sequence
``[b, T, C]`` -> MatMul to 32 classes -> Softmax. Its output is typed
``[b, 12*floor(w/2), 32]`` after import; ``tilegraph-run --sweep`` and ``--shape`` run it at
the sizes you pick.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
import onnx.helper as oh
from onnx import TensorProto, numpy_helper


def recogniser(seed: int = 0) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        scale = 1.0 / np.sqrt(np.prod(shape[1:]))
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name
        )

    nodes = [
        oh.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c1"], ["r1"]),
        oh.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        oh.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 1]),
        oh.make_node("Relu", ["c2"], ["r2"]),
        oh.make_node("Transpose", ["r2"], ["t"], perm=[0, 3, 2, 1]),
        oh.make_node("Reshape", ["t", "seq"], ["s"]),
        oh.make_node("MatMul", ["s", "fc"], ["logits"]),
        oh.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ]
    inits = [
        weight("w1", 16, 3, 3, 3),
        weight("w2", 32, 16, 3, 3),
        weight("fc", 32, 32),
        numpy_helper.from_array(np.array([0, -1, 32], np.int64), "seq"),
    ]
    graph = oh.make_graph(
        nodes,
        "recogniser",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 3, 48, "w"])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)])


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("output")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(recogniser(args.seed), str(out))
    print(f"wrote {out} (x[b, 3, 48, w] -> y[b, T, 32])")


if __name__ == "__main__":
    main()
