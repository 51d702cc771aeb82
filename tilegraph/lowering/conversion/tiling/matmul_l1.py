"""How a matmul's operands are held in L1 (the module docstring of :mod:`.cube` states
the rules): the base-block K steps each GM -> L1 window brings (Ascend C's stepKa /
stepKb) and the whole-K panel of one operand kept over several output blocks (stepN /
stepM), as the heuristic picks them and as the tiling parameters ``matmul.l1_reuse``,
``matmul.reuse_blocks`` and ``matmul.l1_k_steps`` override them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import prod
from typing import TYPE_CHECKING

from tilegraph.hardware import HardwareModel
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL
from tilegraph.lowering.conversion.tiling.matmul_block import fractals

if TYPE_CHECKING:
    from tilegraph.lowering.conversion.tiling.matmul import MatmulPlan


L1_K_STEPS = 4
"""Base-block K steps one GM -> L1 load brings at most (Ascend C's stepKa / stepKb): fewer,
longer DMAs with longer contiguous GM runs; L0A / L0B still take one base block."""


@dataclass(frozen=True)
class L1Reuse:
    """How the L1 windows of a matmul are loaded (see the module docstring).

    ``blocks == 1``: every output block loads A's and B's windows along K itself. Otherwise
    one operand's whole-K *panel* is loaded once per group of ``blocks`` output blocks and
    serves them all: ``axis == "n"`` keeps A's (baseM x K) panel over ``blocks`` blocks
    along N (Ascend C's stepN), ``axis == "m"`` B's (K x baseN) panel over ``blocks`` blocks
    along M (stepM). The other operand streams in windows of ``k_steps`` base K steps."""

    axis: str
    """"n", "m", or "" (no reuse)."""
    blocks: int
    k_steps: int
    """Base K steps per window of the streamed operand(s) (Ascend C's stepKa / stepKb)."""


def k_trips(p: MatmulPlan) -> int:
    """The K loop's trip count: base K steps of ``p.k1`` fractals over K."""
    return -(-p.k_fractals // p.k1)


def _column_bytes(p: MatmulPlan) -> int:
    """L1 bytes of a block's per-column vectors: the bias and the deq scales."""
    return p.n1 * FRACTAL * 4 * ((p.bias is not None) + (p.deq is not None))


def l1_k_steps(p: MatmulPlan, hw: HardwareModel, cube_bytes: int, fixed: int = 0) -> int:
    """How many base-block K steps each L1 window holds: the most (up to
    :data:`L1_K_STEPS`) that divides the K loop's trip count and keeps the windows in half
    of L1 (room for their ping-pong slots). ``fixed``: bytes already taken there (a reused
    panel); then only B's window (``p.m1 == 0``) or A's (``p.n1 == 0``) is counted."""
    trips = k_trips(p)
    frac = FRACTAL * p.k0 * cube_bytes
    bias = _column_bytes(p)
    for steps in range(min(L1_K_STEPS, trips), 1, -1):
        window = (p.m1 + p.n1) * p.k1 * steps * frac + bias + fixed
        if trips % steps == 0 and window <= hw.capacity("L1") // 2:
            return steps
    return 1


def plan_l1_reuse(p: MatmulPlan, hw: HardwareModel, cube_bytes: int) -> L1Reuse:
    """The L1 reuse that moves the fewest GM -> L1 bytes on the busiest core.

    Candidates: none, or a whole-K panel of A (of B) kept over ``s`` blocks along N (M),
    ``s`` a divisor (> 1) of the block count along that axis (no partial groups: ragged
    tails stay the edge handling of the last block). A panel must fit half of L1 beside one
    window of the streamed operand (and the bias): the rest is room for ping-pong slots.
    Cost of a candidate: ``ceil(groups / cube_cores) x`` GM -> L1 bytes of one group,
    since split-cores shares the groups out round robin — fewer, larger groups can leave
    cores idle, which this counts. Ties keep the smaller ``s``."""
    frac = FRACTAL * p.k0 * cube_bytes
    k_pad = k_trips(p) * p.k1
    m_blocks, n_blocks = -(-fractals(p.m) // p.m1), -(-fractals(p.n) // p.n1)
    batch = prod(p.batch)
    cores = max(1, hw.cube_cores)
    bias = _column_bytes(p)
    per_block = (p.m1 + p.n1) * k_pad * frac
    none = L1Reuse("", 1, l1_k_steps(p, hw, cube_bytes))
    best = (-(-batch * m_blocks * n_blocks // cores) * per_block, 0, none)
    for axis, blocks, shared, other in (
        ("n", n_blocks, p.m1, p.n1),
        ("m", m_blocks, p.n1, p.m1),
    ):
        panel = shared * k_pad * frac
        if panel + other * p.k1 * frac + bias > hw.capacity("L1") // 2:
            continue
        streamed = replace(p, m1=0) if axis == "n" else replace(p, n1=0)
        k_steps = l1_k_steps(streamed, hw, cube_bytes, fixed=panel + bias)
        for s in range(2, blocks + 1):
            if blocks % s:
                continue
            groups = batch * (m_blocks * n_blocks) // s
            cost = -(-groups // cores) * (panel + s * other * k_pad * frac)
            if (cost, s) < best[:2]:
                best = (cost, s, L1Reuse(axis, s, k_steps))
    return best[2]


REUSE_CHOICES = {"none": "", "a_panel": "n", "b_panel": "m"}
"""The values of ``matmul.l1_reuse`` and the :attr:`L1Reuse.axis` each stands for."""

MAX_L1_K_STEPS = 8
"""The most base K steps ``matmul.l1_k_steps`` offers per L1 window (the heuristic stops
at :data:`L1_K_STEPS`)."""


def _divisors(count: int) -> set[int]:
    return {d for d in range(2, count + 1) if count % d == 0}


def chosen_l1_reuse(b: KernelBuilder, p: MatmulPlan, cube_bytes: int) -> L1Reuse | str:
    """The L1 windows as tiling parameters, default :func:`plan_l1_reuse`:
    ``matmul.l1_reuse`` (no panel, A's panel over blocks along N, B's along M),
    ``matmul.reuse_blocks`` (the output blocks one panel serves: a divisor > 1 of the
    blocks along its axis, 1 without a panel) and ``matmul.l1_k_steps`` (base K steps per
    window of a streamed operand, dividing the K loop's trips). A combination that breaks
    those rules or overflows L1 is a failure naming it."""
    hw = b.hw
    heuristic = plan_l1_reuse(p, hw, cube_bytes)
    m_blocks, n_blocks = -(-fractals(p.m) // p.m1), -(-fractals(p.n) // p.n1)
    trips = k_trips(p)
    name_of = {axis: name for name, axis in REUSE_CHOICES.items()}
    reuse = b.choose(
        "matmul.l1_reuse",
        tuple(REUSE_CHOICES),
        name_of[heuristic.axis],
        "L1 panel kept over several output blocks: none, A's (stepN) or B's (stepM)",
    )
    blocks = b.choose_int(
        "matmul.reuse_blocks",
        sorted({1, heuristic.blocks} | _divisors(m_blocks) | _divisors(n_blocks)),
        heuristic.blocks,
        "output blocks one L1 panel serves (Ascend C's stepN / stepM); 1 without a panel",
    )
    k_steps = b.choose_int(
        "matmul.l1_k_steps",
        sorted({heuristic.k_steps} | {s for s in range(1, MAX_L1_K_STEPS + 1) if trips % s == 0}),
        heuristic.k_steps,
        "base K steps per GM -> L1 window of a streamed operand (stepKa / stepKb)",
    )
    axis = REUSE_CHOICES[str(reuse)]
    along = {"n": n_blocks, "m": m_blocks}.get(axis, 1)
    if axis == "" and blocks != 1:
        return f"matmul.reuse_blocks = {blocks} without an L1 panel"
    if axis and (blocks < 2 or along % blocks):
        return f"matmul.reuse_blocks = {blocks} is not a divisor > 1 of the {along} blocks"
    if trips % k_steps:
        return f"matmul.l1_k_steps = {k_steps} does not divide the {trips} K steps"
    frac = FRACTAL * p.k0 * cube_bytes
    k_pad = trips * p.k1
    a_k = k_pad if axis == "n" else p.k1 * k_steps
    b_k = k_pad if axis == "m" else p.k1 * k_steps
    l1 = (p.m1 * a_k + p.n1 * b_k) * frac + _column_bytes(p)
    if l1 > hw.capacity("L1"):
        return f"the matmul L1 windows ({l1} B) do not fit L1 ({hw.capacity('L1')} B)"
    return L1Reuse(axis, blocks, k_steps)
