"""Zoo models exported from Hugging Face transformers (run by hand: needs torch and
transformers; the project needs neither).

    python tests/zoo/export_hf.py [NAME ...]     # writes tests/zoo/models/hf_<name>.onnx

Tiny random configurations (hidden 16, two layers) of the library's own model classes,
exported by torch's default exporter (``dynamo=True``) with dynamic batch and sequence —
what a user gets from ``torch.onnx.export(model, kwargs=..., dynamo=True)`` today:
attention through ``F.scaled_dot_product_attention`` (decomposed by the exporter into
``Q·√s``, ``Kᵀ·√s``, the mask add, softmax and a NaN guard), the library's vmap-built
masks, ``use_cache=False``; the exporter's per-node debugging metadata (source stack
notes) is dropped to keep the files small. Measured with transformers 5.24 and torch 2.13.

* ``hf_bert``: ``BertModel`` (token types, pooler).
* ``hf_llama``: ``LlamaForCausalLM`` (rotary, grouped KV: 2 KV heads for 4 query heads,
  the causal mask and the padding mask combined).
* ``hf_gptj``: ``GPTJForCausalLM`` (the interleaved rotary ``rotate_every_two`` over the
  first ``rotary_dim`` = 4 of each head's 8 dims, the rest passed through).
* ``hf_t5``: ``T5Model``, encoder and decoder (relative position buckets, cross
  attention, the decoder's causal mask; ``decoder_input_ids`` a third input).
* ``hf_yolos``: ``YolosForObjectDetection`` (a ViT detector: detection tokens, interpolated
  position embeddings, the class and box heads), images 32 x 32, dynamic batch.
* ``hf_phi3``: ``Phi3ForCausalLM`` (one fused q / k / v projection sliced apart — what
  ``slices-as-split`` takes —, rotary, a fused gate / up projection split before SiLU).
* ``hf_bloom``: ``BloomForCausalLM`` (ALiBi position bias through ``baddbmm``, the fused
  projection viewed ``[B, S, H, 3, D]``, the factored tanh GELU ``recompose-gelu-tanh``
  takes).
"""

from __future__ import annotations

import sys
from pathlib import Path

import onnx
import torch
import transformers

OUT = Path(__file__).resolve().parent / "models"
SMALL = {
    "hidden_size": 16,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 32,
    "vocab_size": 100,  # the zoo's IDS rule draws ids below 100
    "max_position_embeddings": 32,
    "use_cache": False,
}
BUILD = {
    "hf_bert": lambda: transformers.BertModel(transformers.BertConfig(**SMALL)),
    "hf_llama": lambda: transformers.LlamaForCausalLM(
        transformers.LlamaConfig(**SMALL, num_key_value_heads=2)
    ),
    "hf_gptj": lambda: transformers.GPTJForCausalLM(
        transformers.GPTJConfig(
            n_embd=32,
            n_layer=2,
            n_head=4,
            rotary_dim=4,
            vocab_size=100,
            n_positions=32,
            use_cache=False,
        )  # fmt: skip
    ),
    "hf_t5": lambda: transformers.T5Model(
        transformers.T5Config(
            d_model=16, d_kv=4, d_ff=32, num_layers=2, num_heads=4, vocab_size=100, use_cache=False
        )
    ),
    "hf_yolos": lambda: transformers.YolosForObjectDetection(
        transformers.YolosConfig(
            **{k: SMALL[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads")},
            intermediate_size=32,
            image_size=[32, 32],
            patch_size=4,
            num_detection_tokens=5,
        )
    ),
    "hf_phi3": lambda: transformers.Phi3ForCausalLM(
        transformers.Phi3Config(**SMALL, num_key_value_heads=2, pad_token_id=0)
    ),
    "hf_bloom": lambda: transformers.BloomForCausalLM(
        transformers.BloomConfig(
            hidden_size=16, n_layer=2, n_head=4, vocab_size=100, use_cache=False
        )
    ),
}
INPUTS = {
    "hf_bert": ("input_ids", "attention_mask", "token_type_ids"),
    "hf_t5": ("input_ids", "attention_mask", "decoder_input_ids"),
    "hf_yolos": ("pixel_values",),
}


def _example(name: str, input_name: str) -> torch.Tensor:
    if input_name == "pixel_values":
        return torch.randn(2, 3, 32, 32)
    ids = input_name in ("input_ids", "decoder_input_ids")
    return torch.randint(0, 100 if ids else 2, (2, 9))


def export(name: str) -> Path:
    torch.manual_seed(0)
    model = BUILD[name]().eval()
    names = INPUTS.get(name, ("input_ids", "attention_mask"))
    args = {n: _example(name, n) for n in names}
    auto = torch.export.Dim.AUTO
    path = OUT / f"{name}.onnx"
    with torch.no_grad():
        torch.onnx.export(
            model,
            (),
            str(path),
            kwargs=args,
            dynamo=True,
            input_names=list(names),
            dynamic_shapes={
                n: {0: auto} if n == "pixel_values" else {0: auto, 1: auto} for n in names
            },
            external_data=False,
        )
    stripped = onnx.load(str(path))
    for node in stripped.graph.node:  # the exporter's per-node source notes: 90% of the bytes
        del node.metadata_props[:]
        node.doc_string = ""
    onnx.save(stripped, str(path))
    return path


if __name__ == "__main__":
    for name in sys.argv[1:] or list(BUILD):
        path = export(name)
        print(f"{path.name}: {path.stat().st_size} bytes")
