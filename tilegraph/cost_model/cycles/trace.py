"""Chrome traces (Trace Event Format JSON: chrome://tracing, https://ui.perfetto.dev).

* :func:`kernel_trace`: the pipes of one core running one block of a kernel — one track
  (thread) per pipe the kernel uses, one complete ("X") event per op instance named after
  the op, with its cycles in ``args``; each ``wait_flag`` is joined to the ``set_flag`` whose
  flag it took by a flow arrow ("s" / "f" events, category ``flag``). The process is named
  after the kernel and the ONNX nodes it implements.
  :func:`launch_trace` finds a kernel of a module by name and uses its launch's blocks.
* :func:`model_trace`: the whole model — one track for the kernels on the device, one for
  launch overheads, one for host kernels, each launch laid after the previous one; a
  kernel's event carries its ONNX nodes in ``args.nodes``.
* :func:`merge_traces` puts them in one file (the model as process 1, a kernel as 2).

Timestamps are µs (``ts``, ``dur``) from the start of the kernel or the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from tilegraph.cost_model.cycles.program import compile_kernel
from tilegraph.cost_model.cycles.report import ModelCycles, nodes_text
from tilegraph.cost_model.cycles.simulate import (
    CycleModelOptions,
    plan_launch,
    run_block,
)
from tilegraph.dialects.graph.provenance import onnx_nodes
from tilegraph.dialects.tile.base import module_preset
from tilegraph.dialects.tile.sync import PIPES
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.sync_check import launch_blocks


def _thread(pid: int, tid: int, name: str) -> list[dict[str, Any]]:
    where = {"ph": "M", "pid": pid, "tid": tid}
    return [
        {**where, "name": "thread_name", "args": {"name": name}},
        {**where, "name": "thread_sort_index", "args": {"sort_index": tid}},
    ]


def _process(pid: int, name: str) -> dict[str, Any]:
    return {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": name}}


def kernel_trace(
    fn: func.FuncOp,
    hw: HardwareModel | None = None,
    blocks: int = 1,
    block: int = 0,
    options: CycleModelOptions | None = None,
    limit: int | None = 200_000,
    pid: int = 2,
) -> dict[str, Any]:
    """The trace of block ``block`` of a launch of ``fn`` with ``blocks`` blocks; at most
    ``limit`` op instances (the first ones) are written (None: all). ``pid``: the process
    id of its tracks (to merge it with others, see :func:`merge_traces`)."""
    hw = hw or module_preset(fn)
    program = compile_kernel(fn, hw)
    plan = plan_launch(program, hw, blocks, options or CycleModelOptions())
    run = run_block(plan, plan.representative(block), trace=True)
    per_us = hw.cycles_per_us
    used = sorted({r.pipe for r in program.records}, key=lambda p: p)
    nodes = nodes_text(tuple(onnx_nodes(fn.location)))
    implements = f" ({nodes})" if nodes else ""
    events: list[dict[str, Any]] = [
        _process(pid, f"@{program.name}{implements} block {block}/{blocks} on {hw.name}")
    ]
    for p in used:
        events += _thread(pid, p, PIPES[p])
    slices = run.slices if limit is None else run.slices[:limit]
    for s in slices:
        r = program.records[s.record]
        args: dict[str, Any] = {"cycles": round(s.end - s.start, 1), "cost": r.cost}
        if r.moved_bytes:
            args["bytes"] = r.moved_bytes
            args["path"] = r.path
        events.append(
            {
                "ph": "X",
                "name": r.name,
                "cat": PIPES[r.pipe],
                "pid": pid,
                "tid": r.pipe,
                "ts": s.start / per_us,
                "dur": (s.end - s.start) / per_us,
                "args": args,
            }
        )
    for n, (setter, waiter) in enumerate(run.flows):
        if setter >= len(slices) or waiter >= len(slices):
            continue
        a, b = slices[setter], slices[waiter]
        tid_a, tid_b = program.records[a.record].pipe, program.records[b.record].pipe
        common = {"name": "flag", "cat": "flag", "pid": pid, "id": n}
        events.append({**common, "ph": "s", "tid": tid_a, "ts": a.start / per_us})
        events.append({**common, "ph": "f", "bp": "e", "tid": tid_b, "ts": b.start / per_us})
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def launch_trace(
    module: ModuleOp,
    kernel: str,
    block: int = 0,
    options: CycleModelOptions | None = None,
    hw: HardwareModel | None = None,
) -> dict[str, Any]:
    """:func:`kernel_trace` of kernel ``@kernel`` of a lowered module, with the blocks of its
    (first) launch."""
    fns = [f for f in module.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == kernel]
    if not fns:
        raise ValueError(f"no kernel @{kernel} in the module")
    blocks = launch_blocks(module).get(kernel, 1)
    return kernel_trace(fns[0], hw or module_preset(module), blocks, block, options)


def model_trace(model: ModelCycles, pid: int = 1) -> dict[str, Any]:
    """The per-kernel timeline of a whole model (see the module docstring)."""
    device, launch, host = 1, 2, 3
    events: list[dict[str, Any]] = [_process(pid, f"model on {model.platform}")]
    events += _thread(pid, device, "kernels (device)")
    events += _thread(pid, launch, f"scheduling ({model.launch_mode})")
    events += _thread(pid, host, "host kernels")
    by_name = {k.name: k for k in model.kernels}
    now = 0.0
    for name in model.launch_order or [k.name for k in model.kernels]:
        k = by_name[name]
        if k.launch_us:
            events.append(
                {
                    "ph": "X",
                    "name": f"launch {name}",
                    "cat": "launch",
                    "pid": pid,
                    "tid": launch,
                    "ts": now,
                    "dur": k.launch_us,
                }
            )
            now += k.launch_us
        events.append(
            {
                "ph": "X",
                "name": name,
                "cat": k.unit,
                "pid": pid,
                "tid": host if k.unit == "host" else device,
                "ts": now,
                "dur": k.us,
                "args": {
                    "bound": k.bound,
                    "cycles": k.cycles,
                    "blocks": k.blocks,
                    "cube_utilisation": round(k.cube_utilisation, 4),
                    "ops": ",".join(k.ops),
                    "nodes": ", ".join(k.nodes),
                },
            }
        )
        now += k.us
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def merge_traces(*traces: dict[str, Any]) -> dict[str, Any]:
    """One trace holding the events of several (give each a different ``pid``)."""
    return {"traceEvents": [e for t in traces for e in t["traceEvents"]], "displayTimeUnit": "ns"}


def write_trace(trace: dict[str, Any], path: str | Path) -> None:
    """Write a trace as JSON (load it in chrome://tracing or Perfetto)."""
    Path(path).write_text(json.dumps(trace))
