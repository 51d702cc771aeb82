"""ONNX operators tilegraph refuses by design, each with the reason the refusal gives.

tilegraph compiles inference graphs of tensors for an NPU. Four kinds of ONNX operators fall
outside that on purpose (and outside the conformance target of issue 10): training
optimizers, the classical-ML domain ``ai.onnx.ml``, string processing and image decoding,
and random sampling, whose outputs no two implementations can agree on. Everything else
that is not implemented is refused as "unsupported" — work still to do, not a decision.
"""

from __future__ import annotations

_TRAINING = "a training optimizer (tilegraph compiles inference graphs)"
_STRINGS = "string processing (tilegraph tensors hold numbers)"
_RANDOM = "random sampling (its outputs cannot be compared with another runtime's)"

EXCLUDED_OPS: dict[str, str] = {
    **dict.fromkeys(("Adagrad", "Adam", "Momentum", "Gradient"), _TRAINING),
    **dict.fromkeys(
        ("StringNormalizer", "StringSplit", "StringConcat", "RegexFullMatch", "TfIdfVectorizer"),
        _STRINGS,
    ),
    "ImageDecoder": "image decoding (a preprocessing step, not a tensor operator)",
    **dict.fromkeys(
        (
            "RandomUniform",
            "RandomUniformLike",
            "RandomNormal",
            "RandomNormalLike",
            "Bernoulli",
            "Multinomial",
        ),
        _RANDOM,
    ),
}
"""Default-domain op types refused by design -> why."""

EXCLUDED_DOMAINS: dict[str, str] = {
    "ai.onnx.ml": "the classical-ML domain ai.onnx.ml (trees, encoders, SVMs)",
    "ai.onnx.preview.training": "the training domain (gradients, optimizers)",
}
"""Operator domains refused by design -> why."""


def exclusion_reason(op_type: str, domain: str) -> str | None:
    """Why ``op_type`` of ``domain`` is refused by design (None: it is not)."""
    if domain in EXCLUDED_DOMAINS:
        return EXCLUDED_DOMAINS[domain]
    if domain in ("", "ai.onnx"):
        return EXCLUDED_OPS.get(op_type)
    return None
