"""The search space of one macro kernel: every tiling parameter its lowering declares.

:func:`kernel_space` is what a tuner enumerates for a kernel of ``lower-graph-to-kernels``'
output: the parameters its tiling strategy declares (:func:`~tilegraph.lowering.conversion.
tiling.tiling_space`), each with its legal values and the heuristic's default, so the
default point is the untuned compile. Writing a point as ``tile.params`` on the kernel
(:mod:`tilegraph.lowering.analysis.tuning_params`) before ``tile-kernels`` lowers it there.
"""

from __future__ import annotations

from xdsl.dialects import func

from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.tuning_params import TilingParam
from tilegraph.lowering.conversion.tiling import tiling_space


def kernel_space(
    fn: func.FuncOp, hw: HardwareModel, precision: str = "origin"
) -> list[TilingParam]:
    """The parameters of macro kernel ``fn`` on ``hw`` (empty for a host kernel)."""
    return tiling_space(fn, hw, precision)
