"""The search space of one macro kernel: every tiling parameter its lowering declares.

:func:`kernel_space` is what a tuner enumerates for a kernel of ``lower-graph-to-kernels``'
output: the parameters its tiling strategy declares (:func:`~tilegraph.lowering.conversion.
tiling.tiling_space`) and, on the kernel tiled at its recorded point, those of the
transforms after tiling (``multi-buffer``'s switch per buffer, ``split-cores``' loops), each
with its legal values and the heuristic's default, so the default point is the untuned
compile. Writing a point as ``tile.params`` on the kernel
(:mod:`tilegraph.lowering.analysis.tuning_params`) before ``tile-kernels`` lowers it there;
the transforms read the same attribute on the tiled kernel (both parts of a mix kernel
carry it).

This module sits above both halves of the lowering: conversion and transforms never import
each other (``tests/test_layering.py``), so the one place that tiles and then asks the
transforms is here.
"""

from __future__ import annotations

from xdsl.dialects import func

from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.tuning_params import TilingParam
from tilegraph.lowering.conversion.tiling import tiled_copy
from tilegraph.lowering.transforms.multi_buffer import multi_buffer_space
from tilegraph.lowering.transforms.split_cores import split_cores_space


def kernel_space(
    fn: func.FuncOp, hw: HardwareModel, precision: str = "origin"
) -> list[TilingParam]:
    """The parameters of macro kernel ``fn`` on ``hw``: its tiling strategy's, then the
    transforms' on it tiled at its recorded point (a mix kernel's parts contribute each
    name once); empty for a host kernel. ``fn`` itself is not changed."""
    module, space = tiled_copy(fn, hw, precision)
    names = {p.name for p in space}
    for kernel in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        for param in (*multi_buffer_space(kernel, hw), *split_cores_space(kernel, hw)):
            if param.name not in names:
                names.add(param.name)
                space.append(param)
    return space
