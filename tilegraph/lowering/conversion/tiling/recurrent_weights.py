"""Where a recurrent kernel's gate weights live across the time steps: resident in L1, or
streamed from GM per step (:mod:`.recurrent`).

Every step multiplies by the same ``R`` (and ``W``): GE's DynamicRNN keeps them on chip.
A weight held **resident** is copied once per direction, before step 0, into L1 as
fractals — one NZ buffer per gate ``(K1, H1, 16, 16)`` (``K1`` the fractals of its K,
``H1`` of the hidden size), read from ``weight[d, g·H :, :]`` (rows past ``H`` are the
next gate's or zeros: they only reach the padding lanes of the result) — and each step
only moves its ``(k1, n1)`` window L1 -> L0B (``load2d`` at fractal offsets). A
**streamed** weight is read GM -> L1 -> L0B every step, as before.

``R`` is resident first (it is the recurrent operand: GE's choice too), then ``W`` as well
when both fit. What fits: every direction's buffers together within the L1 left beside
the per-step ``A`` and streamed ``B`` tiles and their second slots (``multi-buffer``).
The choice is the tiling parameter ``recurrent.l1_weights`` (``none``, ``R``, ``RW``; its
legal values are those that fit, the default the largest); the plan records why a weight
streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import Load2dOp, Nd2NzOp
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL
from tilegraph.lowering.conversion.tiling.matmul_block import fractals

CHOICES = ("none", "R", "RW")
"""Values of ``recurrent.l1_weights``: which weights stay in L1 across the steps."""


@dataclass(frozen=True)
class WeightShape:
    """One gate weight's shape: ``arg`` is ``[dirs, gates·H, K]`` in GM."""

    name: str
    """``r`` or ``w`` (its buffers' names)."""
    arg: SSAValue
    k: int
    """Its K: the input size (W) or the hidden size (R)."""


def k_fractals(k: int, k0: int) -> int:
    """Fractal rows of ``k0`` elements that cover ``k``."""
    return -(-k // k0)


def resident_bytes(
    shape: WeightShape, hidden: int, gates: int, dirs: int, cube: int, k0: int = FRACTAL
) -> int:
    """L1 bytes of one weight resident for every gate and direction."""
    return dirs * gates * k_fractals(shape.k, k0) * fractals(hidden) * FRACTAL * k0 * cube


def choose_resident(
    b: KernelBuilder,
    r: WeightShape,
    w: WeightShape,
    sizes: tuple[int, int, int, int],
    free: int,
    k0: int = FRACTAL,
    only_r: bool = False,
) -> tuple[str, str]:
    """The ``recurrent.l1_weights`` choice and why the weights it leaves out stream:
    ``sizes`` is (hidden columns of one block, gates, dirs, cube element bytes), ``free``
    the L1 bytes left, ``k0`` the K elements of a fractal row; ``only_r``: the kernel
    multiplies by ``R`` alone (its input projection computed apart), ``RW`` is no
    choice."""
    hidden, gates, dirs, cube = sizes
    need_r = resident_bytes(r, hidden, gates, dirs, cube, k0)
    need_rw = need_r + resident_bytes(w, hidden, gates, dirs, cube, k0)
    with_w = not only_r and need_rw <= free
    fitting = ["none"] + (["R"] if need_r <= free else []) + (["RW"] if with_w else [])
    choice = str(
        b.choose(
            "recurrent.l1_weights",
            fitting,
            fitting[-1],
            "gate weights kept in L1 across the time steps (the rest stream from GM per step)",
        )
    )
    if choice == "RW" or (only_r and choice == "R"):
        return choice, ""
    if only_r:
        return choice, (
            f"R ({need_r} B) does not fit the {free} B of L1 left: it streams per step"
            if need_r > free
            else f"recurrent.l1_weights = {choice}"
        )
    if need_r > free:
        why = f"R ({need_r} B) and W do not fit the {free} B of L1 left: both stream per step"
    elif need_rw > free:
        why = f"W ({need_rw - need_r} B more) does not fit the {free} B of L1 left: it streams"
    else:
        why = f"recurrent.l1_weights = {choice}"
    return choice, why


@dataclass
class GateWeights:
    """The gate weights of one kernel: resident buffers per (weight, direction, gate), or
    none (streamed through ``b_l1``)."""

    b: KernelBuilder
    hidden: int
    gates: int
    dirs: int
    element: Attribute
    resident: list[WeightShape]
    b_l1: SSAValue
    b_l0: SSAValue
    columns: int = 0
    """Hidden fractals of this block's columns (0: all of them, one block)."""
    first: SSAValue | None = None
    """The first hidden column of this block (a kernel shared over the cores: its block
    index times its share); None: column 0."""
    k0: int = FRACTAL
    """K elements per fractal row (32 for int8 operands)."""
    buffers: dict[tuple[SSAValue, int, int], SSAValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.columns = self.columns or fractals(self.hidden)
        for shape in self.resident:
            for d in range(self.dirs):
                for g in range(self.gates):
                    dims = [k_fractals(shape.k, self.k0), self.columns, FRACTAL, self.k0]
                    self.buffers[shape.arg, d, g] = self.b.buffer(
                        dims, self.element, "L1", f"{shape.name}{d}_{g}_l1"
                    )

    def load(self, d: int) -> None:
        """Copy direction ``d``'s resident weights GM -> L1 (once, before its step 0): this
        block's columns of each gate."""
        b = self.b
        for shape in self.resident:
            for g in range(self.gates):
                rows = b.index(g * self.hidden)
                if self.first is not None:
                    rows = b.add_index(self.first, rows)
                b.add(
                    Nd2NzOp(
                        shape.arg, [b.index(d), rows, b.index(0)], self.buffers[shape.arg, d, g]
                    )
                )

    def to_l0b(
        self, weight: SSAValue, d: int, g: int, row: SSAValue, ki: SSAValue, col: int
    ) -> None:
        """Put the ``(k1, n1)`` window of gate ``g``'s weight at K fractal ``ki`` and hidden
        fractal ``col`` of this block's columns (its GM row ``row``) into L0B: from L1 when
        resident, else GM -> L1 -> L0B."""
        b = self.b
        zero = b.index(0)
        buffer = self.buffers.get((weight, d, g))
        if buffer is not None:
            b.add(Load2dOp(buffer, ki, b.index(col), self.b_l0, "copy"))
            return
        b.add(Nd2NzOp(weight, [b.index(d), row, b.affine(ki, self.k0)], self.b_l1))
        b.add(Load2dOp(self.b_l1, zero, zero, self.b_l0, "copy"))
