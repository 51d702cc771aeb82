"""The matmul base block (baseM, baseN, baseK): the operands of one ``mmad``, in fractals.

Chosen per kernel as the tiling parameters ``matmul.m1`` / ``n1`` / ``k1`` (default: Ascend
C's convention scaled to halves of L0, :func:`heuristic_block`), unless
``tile-kernels{base-block="128,256,64"}`` asks for one for every matmul
(:func:`matmul_base_block`, in elements, multiples of 16), clipped to the matrix. A block
whose L0A / L0B / L0C buffers do not fit is a failure naming them (the kernel stays on the
host with that reason).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.tuning_params import param_values, powers_of_two
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL


def fractals(n: int, size: int = FRACTAL) -> int:
    """Fractal rows (or columns) of ``size`` elements (16, or K0) that cover ``n``."""
    return -(-n // size)


BaseBlock = tuple[int, int, int]
_BASE_BLOCK: ContextVar[BaseBlock | None] = ContextVar("matmul_base_block", default=None)


def parse_base_block(text: str) -> BaseBlock | None:
    """``"128,256,64"`` -> (128, 256, 64); ``""`` -> None (the preset's choice).
    ValueError unless three positive multiples of 16."""
    if not text.strip():
        return None
    parts = text.replace("x", ",").split(",")
    try:
        block = tuple(int(p) for p in parts)
    except ValueError:
        block = ()
    if len(block) != 3 or any(d <= 0 or d % FRACTAL for d in block):
        raise ValueError(
            f"base-block must be three positive multiples of {FRACTAL} "
            f"(baseM,baseN,baseK), got {text!r}"
        )
    return block[0], block[1], block[2]


@contextmanager
def matmul_base_block(block: BaseBlock | None) -> Iterator[None]:
    """Matmul kernels planned inside the ``with`` use this base block (None: the preset's)."""
    token = _BASE_BLOCK.set(block)
    try:
        yield
    finally:
        _BASE_BLOCK.reset(token)


def _requested_block(
    m: int, n: int, k: int, frac: int, hw: HardwareModel, k0: int = FRACTAL
) -> tuple[int, int, int] | str:
    """(m1, n1, k1) fractals of the requested base block, clipped to the matrix (K in
    fractals of ``k0`` elements)."""
    block = _BASE_BLOCK.get()
    assert block is not None
    m1, n1 = (min(fractals(d), b // FRACTAL) for d, b in zip((m, n), block[:2], strict=True))
    k1 = max(1, min(fractals(k, k0), block[2] // k0))
    need = {"L0A": m1 * k1 * frac, "L0B": k1 * n1 * frac, "L0C": m1 * n1 * FRACTAL**2 * 4}
    over = [f"{s} {b} B > {hw.capacity(s)} B" for s, b in need.items() if b > hw.capacity(s)]
    if over:
        return f"the matmul base block {block} does not fit ({', '.join(over)})"
    return m1, n1, k1


def _heuristic_block(
    m: int, n: int, k: int, frac: int, hw: HardwareModel, k0: int = FRACTAL
) -> BaseBlock | None:
    """Ascend C's base block scaled to halves of L0 (ping-pong): baseM up to 8 fractals,
    baseN up to 16 within L0C, baseK what L0A / L0B leave; halved on small presets. None
    when nothing fits."""
    l0a, l0b, l0c = (hw.capacity(s) // 2 for s in ("L0A", "L0B", "L0C"))
    m1 = min(fractals(m), 8)
    n1 = max(1, min(fractals(n), 16, l0c // (m1 * FRACTAL * FRACTAL * 4)))
    k1 = min(fractals(k, k0), l0a // (m1 * frac), l0b // (n1 * frac))
    while k1 < 1 and (m1 > 1 or n1 > 1):  # small presets: smaller base blocks
        m1, n1 = max(1, m1 // 2), max(1, n1 // 2)
        k1 = min(fractals(k, k0), l0a // (m1 * frac), l0b // (n1 * frac))
    return (m1, n1, k1) if k1 >= 1 else None


def base_block(
    b: KernelBuilder, m: int, n: int, k: int, frac: int, k0: int = FRACTAL
) -> BaseBlock | str:
    """(m1, n1, k1) in fractals for an (m, k) x (k, n) matmul whose fractals take ``frac``
    bytes (K in fractals of ``k0`` elements: 32 for int8 operands): the requested block
    (:func:`matmul_base_block`) when there is one, else the tiling parameters
    ``matmul.m1`` / ``n1`` / ``k1`` (powers of two up to the matrix, default
    :func:`_heuristic_block`). A choice whose L0 buffers do not fit the scopes whole (no
    ping-pong then) is a failure naming them."""
    if _BASE_BLOCK.get() is not None:
        return _requested_block(m, n, k, frac, b.hw, k0)
    hw = b.hw
    heuristic = _heuristic_block(m, n, k, frac, hw, k0)
    if heuristic is None:
        return "no matmul base block fits L0"
    sizes = (fractals(m), fractals(n), fractals(k, k0))
    block = tuple(
        b.choose_int(
            f"matmul.{axis}1",
            param_values(*powers_of_two(size), default=default, upper=size),
            default,
            f"base block {axis.upper()} in 16-element fractals",
        )
        for axis, size, default in zip("mnk", sizes, heuristic, strict=True)
    )
    m1, n1, k1 = block
    need = {"L0A": m1 * k1 * frac, "L0B": k1 * n1 * frac, "L0C": m1 * n1 * FRACTAL**2 * 4}
    over = [f"{s} {v} B > {hw.capacity(s)} B" for s, v in need.items() if v > hw.capacity(s)]
    if over:
        return f"the matmul base block {block} does not fit ({', '.join(over)})"
    return m1, n1, k1
