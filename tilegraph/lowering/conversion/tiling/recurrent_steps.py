"""The time loop of a recurrent kernel (:mod:`.recurrent`, :mod:`.quantized_recurrent_kernel`):
the directions, step 0 peeled and the other steps one ``scf.for``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from tilegraph.lowering.conversion.tiling.matmul_block import fractals

if TYPE_CHECKING:
    from tilegraph.lowering.conversion.tiling.recurrent import _Emitter

Step = Callable[[int, SSAValue, SSAValue | None], None]


def run_steps(
    e: _Emitter, direction: str, step: Step, begin: Callable[[int], None] | None = None,
    end: Callable[[int], None] | None = None,
) -> None:  # fmt: skip
    """The time loop of a recurrent kernel: per direction ``d`` (``begin(d)`` after its
    resident weights are loaded, ``end(d)`` after its last step), ``step(d, t, prev)``
    for step 0 peeled (``prev`` None: its h_{-1} is the initial state), then steps 1 ..
    seq-1 as one scf.for whose index drives the GM offsets of x_t, Y[t] and Y[t-1]
    (``prev``). Hidden blocks and directions stay unrolled (a few of them): each gate's K
    loops and vector work are loop nests of their own in the step's body, which
    inject-sync fences apart."""
    b, p = e.b, e.p
    last = b.index(p.seq - 1)
    for d in range(p.dirs):
        reverse = direction == "reverse" or d == 1
        e.weights.load(d)
        e.load_rows(d)
        if begin is not None:
            begin(d)
        e.a_tiles.new_step()
        step(d, last if reverse else b.index(0), None)
        if p.seq > 1:
            with b.loop_over(b.index(1), b.index(p.seq), b.index(1), "s") as s:
                e.a_tiles.new_step()
                if reverse:  # t = seq - 1 - s, its previous step t + 1 = seq - s
                    t = b.add(arith.SubiOp(last, s)).results[0]
                    prev = b.add(arith.SubiOp(b.index(p.seq), s)).results[0]
                else:
                    t, prev = s, b.affine(s, 1, -1)
                t.name_hint, prev.name_hint = "t", "t_prev"
                step(d, t, prev)
        if end is not None:
            end(d)
    b.tiles = p.dirs * p.seq * fractals(p.hidden) // p.n1
    b.blocks = p.cores
