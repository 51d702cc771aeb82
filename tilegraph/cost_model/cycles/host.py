"""Host kernels (``tile.kernel = "host"``): ops the NPU's cores do not run, on a CPU model.

GE runs an op with no AI-core kernel on the AI CPU: the ARM cores next to the AI cores on
the same chip. We estimate such a kernel from its graph ops' work (``op.cost()``: FLOPs and
bytes of the origin shapes) on one AI CPU core as a roofline plus a dispatch cost:

    time = dispatch_us + max(FLOPs / flops rate, bytes / memory rate)

The default figures are assumptions, not measurements (no public per-op AI CPU figures were
found): an ARMv8 core at ~2 GHz with 128-bit NEON peaks at 2 FMA pipes x 4 fp32 lanes x 2
flops x 2 GHz = 32 GFLOP/s; reference kernels that are not hand-vectorised reach a quarter
of it, 8 GFLOP/s. One core streams ~10 GB/s (typical single-core STREAM on ARM server
cores: 10-20 GB/s). Dispatch: an AI CPU task goes through the same task scheduler as an AI
core launch, ~20 µs (the preset's launch overhead). Keep them fields: a study replaces them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func

from tilegraph.dialects.graph.facts import OpCost


@dataclass(frozen=True)
class HostModel:
    """A CPU core running host kernels; see the module docstring for the figures."""

    name: str = "AI CPU core (ARMv8, ~2 GHz, NEON; assumed)"
    gflops: float = 8.0
    """Sustained GFLOP/s of reference kernels on one core."""
    gbps: float = 10.0
    """Sustained GB/s of one core."""
    dispatch_us: float = 20.0
    """Scheduling one host task."""

    def time_us(self, flops: int, nbytes: int) -> float:
        """µs of a host kernel doing ``flops`` operations on ``nbytes`` bytes."""
        return self.dispatch_us + max(flops / (self.gflops * 1e3), nbytes / (self.gbps * 1e3))


def host_work(fn: func.FuncOp) -> OpCost:
    """FLOPs and bytes of a host kernel's graph ops (ops without a static cost count 0;
    constants are data, not work)."""
    flops = nbytes = 0
    for op in fn.walk():
        cost = getattr(op, "cost", None)
        if not op.name.startswith(("graph.", "layout.")) or op.name == "graph.constant":
            continue
        if cost is None:
            continue
        found = cost()
        if isinstance(found, OpCost):
            flops += found.flops
            nbytes += found.bytes
    return OpCost(flops, nbytes)
