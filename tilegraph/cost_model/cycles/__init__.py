"""The cycle model: what a lowered module costs on the NPU, per pipe, core and kernel.

* :mod:`.program` compiles a tiled kernel into Python that issues its op instances;
* :mod:`.ragged` gives an op whose cost depends on an index value (a matmul's ragged last
  block) a record per fractal count;
* :mod:`.core` runs one block on one core (a clock per pipe, data or flag ordering);
* :mod:`.memory` shares GM bandwidth between the cores (with L2 reuse);
* :mod:`.host` estimates host kernels on an AI CPU model;
* :mod:`.simulate` puts launches, blocks and kernels together;
* :mod:`.report` holds the results (``to_json``, ``render``), :mod:`.trace` the Chrome traces.

See docs/cycle-model.md.
"""

from tilegraph.cost_model.cycles.host import HostModel
from tilegraph.cost_model.cycles.program import CycleModelError, compile_kernel
from tilegraph.cost_model.cycles.report import KernelCycles, ModelCycles
from tilegraph.cost_model.cycles.simulate import (
    CycleModelOptions,
    simulate_kernel,
    simulate_launch,
    simulate_module,
)
from tilegraph.cost_model.cycles.trace import (
    kernel_trace,
    launch_trace,
    merge_traces,
    model_trace,
    write_trace,
)

__all__ = [
    "CycleModelError",
    "CycleModelOptions",
    "HostModel",
    "KernelCycles",
    "ModelCycles",
    "compile_kernel",
    "kernel_trace",
    "launch_trace",
    "merge_traces",
    "model_trace",
    "simulate_kernel",
    "simulate_launch",
    "simulate_module",
    "write_trace",
]
