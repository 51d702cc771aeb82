"""What a Session binds, and why it compiles again: the log of value-, shape- and
data-dependent models called with changing inputs, next to onnxruntime on the same inputs.

    python benchmarks/session_bindings.py

Cases: Silero VAD (the ``silero-vad`` wheel's opset-16 model: an If on the sample rate
``sr`` whose branches differ in rank, and Ifs on shapes inside), its opset-15 export (Ifs on
shapes only), a NonZero whose count the data decide, and a Loop whose trip count is an input
and which stops on a condition computed from data. Each is called through
``tilegraph.Session(target="tiles")``; the table prints every call (inputs, max |ours -
onnxruntime|) and every log line of the Session (compiles and tilings with their reasons).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.dialects.control_flow_models import loop_model  # noqa: E402
from tests.runtime.test_binding import nonzero_model  # noqa: E402
from tests.zoo.wheels import model_path  # noqa: E402
from tilegraph.frontend.onnxruntime_oracle import onnxruntime_session  # noqa: E402
from tilegraph.runtime.session import Session  # noqa: E402

Inputs = dict[str, np.ndarray]


def _silero(batch: int, samples: int, rate: int, seed: int) -> Inputs:
    rng = np.random.default_rng(seed)
    return {
        "input": (rng.standard_normal((batch, samples)) * 0.1).astype(np.float32),
        "state": np.zeros((2, batch, 128), np.float32),
        "sr": np.array(rate, np.int64),
    }


def _positives(count: int, seed: int) -> Inputs:
    rng = np.random.default_rng(seed)
    x = -np.ones(24, np.float32)
    x[rng.choice(24, count, replace=False)] = rng.uniform(0.5, 2, count)
    return {"x": x.reshape(4, 6)}


def _loop(trips: int, limit: float) -> Inputs:
    _, feeds = loop_model()
    return {**feeds, "n": np.array(trips, np.int64), "limit": np.array(limit, np.float32)}


def cases() -> list[tuple[str, Callable[[], onnx.ModelProto | str], list[Inputs]]]:
    silero = [_silero(1, 512, 16000, 0), _silero(2, 256, 8000, 1), _silero(1, 512, 16000, 2)]
    return [
        ("silero_vad (opset 16)", lambda: str(model_path("silero_vad.onnx")), silero),
        (
            "silero_vad_16k_op15",
            lambda: str(model_path("silero_vad_16k_op15.onnx")),
            [_silero(1, 512, 16000, 0), _silero(3, 512, 16000, 1)],
        ),
        ("NonZero -> MatMul", nonzero_model, [_positives(11, 0), _positives(14, 1)]),
        ("Loop (trip count n)", lambda: loop_model()[0], [_loop(10, 12.0), _loop(3, 1e9)]),
    ]


def main() -> None:
    for name, make, calls in cases():
        model = make()
        log: list[str] = []
        session = Session(model, target="tiles", log=log.append)
        print(f"== {name}")
        for index, inputs in enumerate(calls):
            before = len(log)
            ours = session(**inputs)
            proto = onnx.load(model) if isinstance(model, str) else model
            theirs = onnxruntime_session(proto).run(None, inputs)
            diff = max(
                float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())
                for a, b in zip(ours, theirs, strict=True)
            )
            shapes = ", ".join(
                f"{k}{list(v.shape)}" if v.ndim else f"{k}={v.item()}" for k, v in inputs.items()
            )
            print(f"  call {index + 1}: {shapes}: max |ours - onnxruntime| = {diff:.2g}")
            for line in log[before:]:
                print(f"    log: {line}")
        print(f"  {session.stats.summary()}")


if __name__ == "__main__":
    main()
