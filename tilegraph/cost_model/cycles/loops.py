"""The cycle model's view of device loops (``tile.loop_launches``).

A launch inside a device loop runs once per iteration: :func:`counted_launches` gives each
launch of the module with that count (the product of its enclosing loops' trips). What an
iteration costs besides its launches is a :class:`~.report.KernelCycles` of its own, unit
``"control"`` (:func:`loop_control`; no kernel launch: the model's launch count leaves
it out, its tasks are named apart in the scheduling term), launched ``trip`` times:

* the stream control tasks that run the loop on the device — GE's While on a sunk graph:
  the condition's switch (StreamSwitch / LabelSwitch) and the jump back (LabelGoto), each
  a task on the stream (:data:`CONTROL_TASKS`); no published figure for their cost was
  found, so each is charged the preset's scheduling cost of a task (``task_overhead_us``
  sunk, ``launch_overhead_us`` from the host), as a launch is;
* the copies of the next carried values into the states and of the scan slices into their
  stacks, one memcpy task each (scheduled like a task) moving its bytes GM -> GM at the
  chip's GM bandwidth (read and write).
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from tilegraph.cost_model.cycles.report import CONTROL, KernelCycles
from tilegraph.dialects.tile import LaunchOp, LoopLaunchesOp
from tilegraph.dialects.tile.base import buffer_bytes
from tilegraph.hardware import HardwareModel

CONTROL_TASKS = 2
"""Stream tasks per iteration that run the loop: the switch on the condition and the jump
back (see the module docstring)."""


def trips_around(op: Operation) -> int:
    """How many times ``op`` runs per run of the model: its enclosing loops' trips."""
    times = 1
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, LoopLaunchesOp):
            times *= parent.trip_count
        parent = parent.parent_op()
    return times


def counted_launches(module: ModuleOp) -> list[tuple[LaunchOp, int]]:
    """The module's kernel launches in program order, each with its run count."""
    return [(op, trips_around(op)) for op in module.walk() if isinstance(op, LaunchOp)]


def device_loops(module: ModuleOp) -> list[LoopLaunchesOp]:
    return [op for op in module.walk() if isinstance(op, LoopLaunchesOp)]


def loop_control(op: LoopLaunchesOp, name: str, hw: HardwareModel, task_us: float) -> KernelCycles:
    """One iteration's control and copies of device loop ``op`` (module docstring), as a
    kernel launched once per iteration of it (and of its enclosing loops)."""
    copied = [*op.nexts, *op.slices]
    moved = sum(buffer_bytes(v) for v in copied)
    bytes_per_us = hw.gm_bandwidth_gbps * 1e3
    us = 2 * moved / bytes_per_us  # read and written back
    return KernelCycles(
        name=name,
        unit=CONTROL,
        ops=("tile.loop_launches",),
        blocks=1,
        launches=trips_around(op) * op.trip_count,
        cycles=round(us * hw.cycles_per_us),
        us=us,
        launch_us=(CONTROL_TASKS + len(copied)) * task_us,
        bound="memory",
        cube_utilisation=0.0,
        mode="control",
        bytes_per_path={"GM->GM": 2 * moved},
    )
