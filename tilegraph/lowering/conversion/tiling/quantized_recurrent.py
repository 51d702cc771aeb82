"""The integer form of DynamicQuantizeLSTM's recurrent gate product on the int8 cube: a
numpy model of the arithmetic ``graph.dynamic_quantize_lstm_steps``'s AI-core kernel
(:mod:`.quantized_recurrent_kernel`) runs, checked against the reference on its own.

Per step, onnxruntime multiplies ``h_{t-1}`` quantised to DynamicQuantizeLinear's uint8
grid (``q``, zero point ``z_h``, scale ``s_h``) by ``R - z_R`` exactly in int32 and scales
the float32 of that by ``s_h * R_scale``. The cube multiplies int8 by int8 only, so both
sides are **re-centred** to int8 and the difference is corrected in int32:

* ``u = q - 128`` (int8; what the quantising vector program writes for the cube),
* ``v = R`` for int8 ``R``, ``R - 128`` for uint8 ``R`` (int8, made once per kernel),
* ``a = 128 - z_h`` (a run-time scalar), ``b = c_R - z_R`` with ``c_R`` 0 (int8) or 128
  (uint8),

and ``(q - z_h) · (R - z_R) = (u + a) · (v + b) = u·v + b·Σ_k u_k + a·Σ_k v_k + K·a·b``:
the cube's int32 product, ``b`` times the row sums of ``u`` (a vector reduction of the
step's quantised state), ``a`` times the column sums of ``v`` (constant per direction,
computed once), and a scalar. Every term and partial sum stays inside int32 while ``K``
(the hidden size) is at most :data:`MAX_HIDDEN`, so the total is the exact product; its
float32 conversion and the multiply by the float32 ``s_h * R_scale`` (per tensor or per
channel) are the reference's, in the same order, so the form equals
:func:`~tilegraph.dialects.graph.quantized_recurrent.quantized_product` bit for bit
(``tests/lowering/test_quantized_recurrent_form.py``).
"""

from __future__ import annotations

import numpy as np

from tilegraph.dialects.graph.quantize import dynamic_quantize

CENTRE = 128
"""What re-centres a uint8 value onto int8."""

MAX_HIDDEN = (2**31 - 1) // (128 * 128 + 255 * 128 + 128 * 128 + 128 * 255)
"""The largest ``K`` whose corrected product cannot leave int32: each of the four terms is
at most ``K`` times 128·128, 255·128, 128·128 and 128·255 in magnitude."""


def centred_weights(r: np.ndarray) -> np.ndarray:
    """``R`` ``[K, N]`` (int8 or uint8) as the cube's int8 operand ``v``."""
    if r.dtype == np.int8:
        return r
    assert r.dtype == np.uint8, r.dtype
    return (r.astype(np.int16) - CENTRE).astype(np.int8)


def weight_offset(r: np.ndarray, r_zero: int) -> int:
    """``b = c_R - z_R``: what ``v`` lacks of ``R - z_R``."""
    return (0 if r.dtype == np.int8 else CENTRE) - r_zero


def column_sums(v: np.ndarray) -> np.ndarray:
    """``Σ_k v[k, n]`` in int32 (per direction, once per kernel)."""
    return v.astype(np.int32).sum(axis=0, dtype=np.int32)


def centred_product(h: np.ndarray, r: np.ndarray, r_zero: int, r_scale: np.ndarray) -> np.ndarray:
    """``h`` ``[batch, K]`` float32 quantised by its own range and multiplied by ``R - r_zero``
    the re-centred way (module docstring), int32 throughout, then ``float32(total) *
    (s_h * r_scale)``: the reference's ``quantized_product`` value."""
    k = r.shape[0]
    if k > MAX_HIDDEN:
        raise ValueError(f"K = {k} exceeds {MAX_HIDDEN}: the int32 correction could overflow")
    q, scale, zero = dynamic_quantize(h)
    u = (q.astype(np.int16) - CENTRE).astype(np.int8)
    v = centred_weights(r)
    i32 = np.int32
    a, b = i32(CENTRE - int(zero)), i32(weight_offset(r, r_zero))
    cube = u.astype(i32) @ v.astype(i32)  # the int8 mmad into L0C (int32)
    rows = u.astype(i32).sum(axis=1, dtype=i32)[:, None]
    total = cube + b * rows + a * column_sums(v)[None, :] + i32(k) * a * b
    return total.astype(np.float32) * (scale * r_scale.astype(np.float32))
