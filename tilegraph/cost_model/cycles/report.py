"""What the cycle model reports: per kernel and for the whole model, as data and as text.

Definitions (also in docs/cycle-model.md):

* **cycles / µs** of a kernel: one launch, from the first instruction to the last pipe of
  the slowest core (block); its scheduling (sunk on the device, or launched from the host)
  is counted apart (``launch_us``).
* **bound**: the pipe with the most busy cycles on the slowest core, when it is busy for at
  least ``DOMINANT`` (half) of the kernel's cycles; otherwise ``"latency"``: no pipe is the
  bottleneck, the dependences between pipes serialise them. Host kernels: ``"host"``.
* **cube utilisation**: cube work (each ``mmad``'s ⌈M/16⌉·⌈K/K0⌉·⌈N/16⌉ cycles, its head
  excluded) summed over the launch's blocks, divided by blocks × kernel cycles — the share
  of the launched cube cores' time spent multiplying (padding to fractals counts as work).
* **memory-bound / cube-bound / vector-bound / latency** time of the summary: kernel time
  grouped by bound (MTE1, MTE2, MTE3 and FIX are memory; M is cube; V is vector).
* **TransData** time: kernels whose ``tile.ops`` are ``layout.trans_data`` only.
* **mix launches** (decoupled presets: an AIC and an AIV part, :mod:`.mix`): cycles / µs
  are the critical path of the parts co-simulated through their cross-core flags (the
  slowest core group); busy cycles are per core of that group's, keyed ``aic.<pipe>`` /
  ``aiv.<pipe>`` (the AIV that finished last); the bound is the busiest pipe of either core.
* **workspace round trip** (``workspace_us``, mix launches only, else 0): the mix launch's
  time minus the time of its slower part simulated alone (its cross-core flags one cycle
  each, never stalling; the same GM rates). It is what the coupling through the
  multi-buffered GM workspace adds — the fill and drain of the two-slot pipeline, the
  stalls while one side waits for the other, the flags' trips between the cores; the
  workspace's transfers themselves (FIX out, GM -> UB) are in the parts' times. The
  model's total sums it over the launches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DOMINANT = 0.5
MEMORY_PIPES = ("MTE1", "MTE2", "MTE3", "FIX")
BOUND_CLASSES: tuple[str, ...] = ("cube", "memory", "vector", "latency", "host")


CONTROL = "control"
"""The unit of a device loop's per-iteration control tasks and copies (:mod:`.loops`)."""


def nodes_text(nodes: tuple[str, ...], shown: int = 4) -> str:
    """The ONNX nodes of a kernel for a table cell: the first ``shown``, then ``+N``."""
    text = ", ".join(nodes[:shown])
    return f"{text} +{len(nodes) - shown}" if len(nodes) > shown else text


def bound_class(bound: str) -> str:
    """ "cube", "memory", "vector", "latency" or "host" for a kernel's bound."""
    if bound == "M":
        return "cube"
    if bound in MEMORY_PIPES:
        return "memory"
    if bound == "V":
        return "vector"
    return bound if bound in BOUND_CLASSES else "latency"


@dataclass(frozen=True)
class KernelCycles:
    """One kernel of a model: the time of one launch and what it was spent on."""

    name: str
    unit: str
    """"cube", "vector", "host", "mix" (a mix launch: its parts co-simulated) or "control"
    (a device loop's iterations: :mod:`.loops`)."""
    ops: tuple[str, ...]
    blocks: int
    launches: int
    cycles: int
    """One launch, excluding the launch overhead (host kernels: their time in cycles)."""
    us: float
    launch_us: float
    """Scheduling per launch (device kernels: the preset's task or host-launch cost, by the
    launch mode; host kernels: 0, dispatch is in ``us``)."""
    bound: str
    cube_utilisation: float
    mode: str
    """"data" (dependences order the pipes), "flags" (the kernel's flags do) or "host"."""
    bytes_per_path: dict[str, int] = field(default_factory=dict)
    """Bytes of one launch per path ("GM->L1", "L1->L0A", "L0C->GM", ...), all blocks."""
    busy_cycles: dict[str, int] = field(default_factory=dict)
    """Busy cycles of each pipe on the slowest core."""
    mean_busy_cycles: dict[str, int] = field(default_factory=dict)
    """Busy cycles of each pipe, averaged over the blocks."""
    gm_bytes_per_cycle: float = 0.0
    """GM rate of one core (its share of the chip's; ``inf``: path rates only)."""
    hbm_fraction: float = 1.0
    host_reason: str | None = None
    cube_flops: int = 0
    """Floating-point (or integer) operations of one launch's ``mmad`` ops, all blocks:
    2 * M * K * N per ``mmad`` as tiled, padding to fractals included."""
    nodes: tuple[str, ...] = ()
    """The ONNX nodes the kernel implements (from its location)."""
    workspace_us: float = 0.0
    """A mix launch's workspace round trip (see the module docstring); 0 otherwise."""

    @property
    def total_us(self) -> float:
        """All launches, overheads included."""
        return self.launches * (self.us + self.launch_us)

    @property
    def gm_bytes(self) -> int:
        """Bytes one launch moves between GM and the cores (every path to or from GM)."""
        return sum(n for path, n in self.bytes_per_path.items() if "GM" in path)

    @property
    def is_transdata(self) -> bool:
        return bool(self.ops) and all(op == "layout.trans_data" for op in self.ops)

    @property
    def bound_class(self) -> str:
        return bound_class(self.bound)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        entry: dict[str, Any] = {
            "name": self.name,
            "unit": self.unit,
            "ops": list(self.ops),
            "nodes": list(self.nodes),
            "blocks": self.blocks,
            "launches": self.launches,
            "cycles": self.cycles,
            "us": round(self.us, 3),
            "launch_us": self.launch_us,
            "bound": self.bound,
            "cube_utilisation": round(self.cube_utilisation, 4),
            "mode": self.mode,
            "bytes_per_path": dict(self.bytes_per_path),
            "busy_cycles": dict(self.busy_cycles),
            "mean_busy_cycles": dict(self.mean_busy_cycles),
            "gm_bytes_per_cycle": (
                None if self.gm_bytes_per_cycle == float("inf") else self.gm_bytes_per_cycle
            ),
            "hbm_fraction": round(self.hbm_fraction, 4),
            "cube_flops": self.cube_flops,
        }
        if self.unit == "mix":
            entry["workspace_us"] = round(self.workspace_us, 3)
        if self.host_reason:
            entry["host_reason"] = self.host_reason
        return entry


@dataclass(frozen=True)
class ModelCycles:
    """Every kernel of a model on one preset, and the totals."""

    platform: str
    clock_ghz: float
    kernels: list[KernelCycles]
    """In order of first launch."""
    host_model: str
    launch_order: list[str] = field(default_factory=list)
    """Kernel names, one per launch, in program order."""
    launch_mode: str = "sunk"
    """How the launches are scheduled: "sunk" (on the device) or "host" (op by op)."""
    task_us: float = 0.0
    """Scheduling cost of one launch in that mode."""
    compiled_kernels: int = 0
    """Kernels the estimate compiled: one per distinct kernel (``CycleModelOptions.memo``,
    :mod:`.memo`), else one per kernel launched. Not a figure of the model."""

    @property
    def kernel_us(self) -> float:
        """Device kernels' execution, without launch overheads."""
        return sum(k.launches * k.us for k in self.kernels if k.unit != "host")

    @property
    def launch_overhead_us(self) -> float:
        """Scheduling of every device launch (:attr:`launch_mode`)."""
        return sum(k.launches * k.launch_us for k in self.kernels)

    def scheduling_text(self) -> str:
        """The scheduling term of the total, in words: mode, launches, cost of each."""
        where = "sunk: scheduled on the device" if self.launch_mode == "sunk" else "host launch"
        control_us = sum(k.launches * k.launch_us for k in self.kernels if k.unit == CONTROL)
        kernel_tasks_us = self.launch_overhead_us - control_us
        # tasks beyond the launches: the runtime's memsets of zero-filled arguments
        tasks = round(kernel_tasks_us / self.task_us) if self.task_us else 0
        memsets = f" + {tasks - self.launches} memset tasks" if tasks > self.launches else ""
        controls = round(control_us / self.task_us) if self.task_us else 0
        loops = f" + {controls} device-loop control and copy tasks" if controls else ""
        return (
            f"scheduling {self.launch_overhead_us:.1f} ({self.launches} launches{memsets}"
            f"{loops}, {where}, {self.task_us:g} µs each)"
        )

    @property
    def host_us(self) -> float:
        return sum(k.total_us for k in self.kernels if k.unit == "host")

    @property
    def total_us(self) -> float:
        """Model time: kernels + launch overheads + host ops."""
        return self.kernel_us + self.launch_overhead_us + self.host_us

    @property
    def workspace_us(self) -> float:
        """The mix launches' workspace round trips (part of :attr:`kernel_us`)."""
        return sum(k.launches * k.workspace_us for k in self.kernels)

    @property
    def transdata_us(self) -> float:
        return sum(k.launches * k.us for k in self.kernels if k.is_transdata)

    @property
    def launches(self) -> int:
        """Kernel launches (a device loop's control entry is no launch)."""
        return sum(k.launches for k in self.kernels if k.unit != CONTROL)

    @property
    def cube_flops(self) -> int:
        """Operations of every launch's ``mmad`` ops, as tiled (padding included)."""
        return sum(k.launches * k.cube_flops for k in self.kernels)

    def bytes_per_path(self) -> dict[str, int]:
        """Bytes every launch moves, per path ("GM->L1", "L1->L0A", ...)."""
        found: dict[str, int] = {}
        for k in self.kernels:
            for path, moved in k.bytes_per_path.items():
                found[path] = found.get(path, 0) + k.launches * moved
        return dict(sorted(found.items()))

    def per_unit_us(self) -> dict[str, float]:
        """Execution time (no overheads) per unit."""
        found: dict[str, float] = {}
        for k in self.kernels:
            found[k.unit] = found.get(k.unit, 0.0) + k.launches * k.us
        return found

    def per_bound_us(self) -> dict[str, float]:
        """Execution time (no overheads) per bound class (cube, memory, vector, latency,
        host)."""
        found: dict[str, float] = dict.fromkeys(BOUND_CLASSES, 0.0)
        for k in self.kernels:
            found[k.bound_class] += k.launches * k.us
        return found

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"total": µs, "per_kernel": [...], ...}``."""
        return {
            "platform": self.platform,
            "total": round(self.total_us, 3),
            "unit": "us",
            "kernel_us": round(self.kernel_us, 3),
            "launch_overhead_us": round(self.launch_overhead_us, 3),
            "launch_mode": self.launch_mode,
            "task_us": self.task_us,
            "host_us": round(self.host_us, 3),
            "transdata_us": round(self.transdata_us, 3),
            "workspace_us": round(self.workspace_us, 3),
            "launches": self.launches,
            "cube_flops": self.cube_flops,
            "bytes_per_path": self.bytes_per_path(),
            "per_unit_us": {u: round(t, 3) for u, t in self.per_unit_us().items()},
            "per_bound_us": {b: round(t, 3) for b, t in self.per_bound_us().items()},
            "host_model": self.host_model,
            "per_kernel": [k.to_json() for k in self.kernels],
        }

    def render(self, top: int | None = 20) -> str:
        """A text table: the ``top`` kernels by time (all when None), then the totals."""
        rows = sorted(self.kernels, key=lambda k: -k.total_us)
        shown = rows if top is None else rows[:top]
        width = max([len("kernel"), *(len(k.name) for k in shown)])
        head = (
            f"{'kernel':<{width}}  {'unit':<6} {'blocks':>6} {'µs':>10} {'+launch':>8} "
            f"{'bound':<8} {'cube%':>6} {'GM MB':>8}  ONNX nodes"
        )
        lines = [f"cycle model on {self.platform} ({self.clock_ghz} GHz)", head, "-" * len(head)]
        for k in shown:
            gm = k.gm_bytes / 1e6
            lines.append(
                f"{k.name:<{width}}  {k.unit:<6} {k.blocks:>6} {k.launches * k.us:>10.2f} "
                f"{k.launches * k.launch_us:>8.1f} {k.bound:<8} "
                f"{100 * k.cube_utilisation:>6.1f} {gm:>8.2f}  {nodes_text(k.nodes)}"
            )
        if len(rows) > len(shown):
            lines.append(f"... {len(rows) - len(shown)} more kernels")
        bounds = ", ".join(f"{b} {t:.1f}" for b, t in self.per_bound_us().items() if t)
        units = ", ".join(f"{u} {t:.1f}" for u, t in self.per_unit_us().items())
        lines += [
            "-" * len(head),
            f"total {self.total_us:.1f} µs = kernels {self.kernel_us:.1f} + "
            f"{self.scheduling_text()} + host ops {self.host_us:.1f}",
            f"per unit (µs): {units}",
            f"by bound (µs): {bounds}",
            f"TransData kernels: {self.transdata_us:.1f} µs",
        ]
        if any(k.unit == "mix" for k in self.kernels):
            lines.append(f"mix kernels' workspace round trip: {self.workspace_us:.1f} µs")
        return "\n".join(lines)
