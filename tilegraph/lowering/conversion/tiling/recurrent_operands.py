"""The left operands (``A``) of one time step of a recurrent kernel (:mod:`.recurrent`),
each loaded into L0A once per step.

Every gate of a step multiplies the same rows: ``x_t`` (by ``W_g``) and ``h_{t-1}`` (by
``R_g``), for each of the core's hidden blocks. Loading ``A`` again for every gate and
block would put one GM -> L1 -> L0A round trip (the GM read latency, then the MTE1 move)
in front of every matmul of the step, on the step's critical path. As GE's DynamicRNN
runs, ``A`` is loaded once per step when its whole K fits one L0A tile (``k1`` fractals):
each distinct ``(GM argument, leading offsets)`` gets an L0A buffer of its own (a *slot*)
that the later gates of the step read in place.

Slots are handed out in the order of first use within a step and reused by the next step
(``inject-sync`` orders the reload after the last step's matmuls); the L0A left beside the
streamed operand tile bounds their count (none fits: every gate loads its own ``A``, as
before). An operand read from the state (``Y``) is forgotten when the step's state changes
(a hand-over or barrier in the middle of a step): it is read again after the change.
"""

from __future__ import annotations

from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder

MAX_SLOTS = 3
"""A step reads at most three distinct ``A`` rows: ``x_t``, ``h_{t-1}`` and (GRU without
``linear_before_reset``) ``r ⊙ h_{t-1}``."""

Key = tuple[SSAValue, tuple[SSAValue, ...]]


class StepOperands:
    """The L0A slots of one kernel's step operands (see the module docstring)."""

    def __init__(self, b: KernelBuilder, shape: list[int], element: Attribute, state: SSAValue):
        self.b, self.shape, self.element, self.state = b, shape, element, state
        tile = element_bytes(element)
        for dim in shape:
            tile *= dim
        # beside the operand tile every other part loads into
        self.limit = min(MAX_SLOTS, b.hw.capacity("L0A") // tile - 1)
        self.buffers: list[SSAValue] = []
        self.held: dict[Key, SSAValue] = {}

    def new_step(self) -> None:
        """A step begins: nothing of the previous one is held."""
        self.held.clear()

    def state_changed(self) -> None:
        """The state in GM changed mid-step: forget what was read from it."""
        self.held = {k: v for k, v in self.held.items() if k[0] is not self.state}

    def kept(self, arg: SSAValue, lead: list[SSAValue]) -> SSAValue | None:
        """The slot already holding ``arg[*lead]`` in this step, or None."""
        return self.held.get((arg, tuple(lead)))

    def slot(self, arg: SSAValue, lead: list[SSAValue]) -> SSAValue | None:
        """A free slot for ``arg[*lead]`` (the caller loads it), or None when none is left."""
        used = set(self.held.values())
        free = next((s for s in self.buffers if s not in used), None)
        if free is None and len(self.buffers) < self.limit:
            free = self.b.buffer(self.shape, self.element, "L0A", f"a{len(self.buffers)}_l0a")
            self.buffers.append(free)
        if free is not None:
            self.held[arg, tuple(lead)] = free
        return free
