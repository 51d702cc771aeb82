"""Group norm whose group does not fit UB: layer norm's chunked three passes over a GM view.

A group of ``graph.group_norm`` is the contiguous run of ``Cg·S`` elements (``Cg = C / G``
channels, ``S`` pixels) of a row-major ``x[N, C, spatial...]``, so ``x`` and the output
are viewed as ``[N, G, Cg, S]`` (``tile.strided_view``, moving nothing) and the kernel is
:mod:`.reduction_chunks`'s layer norm over axes (2, 3) of that view: chunks of the group
(a run of channels, or of one channel's pixels) read three times — the mean, the sum of
squared deviations, the normalised output — while ``(n, g)`` are its parallel loops.

The parameters are viewed at the same ``[G, Cg, S]`` shape with stride 0 along what they
do not vary with (``[C]``: strides ``(Cg, 1, 0)``; per group ``[G]``: ``(1, 0, 0)``), so
layer norm's trailing-dims parameter load gives each chunk its channels' scale and bias
broadcast over the pixels, with no copy in GM.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.tile import StridedViewOp
from tilegraph.dialects.tile.workspace import strided_memref
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.reduction_chunks import (
    Chunked,
    chunk_bytes,
    emit_chunked_reduction,
    plan_chunks,
)

AXES = (2, 3)
"""The normalised axes of the ``[N, G, Cg, S]`` view."""


def _view(b: KernelBuilder, arg: SSAValue, shape: Sequence[int], strides: Sequence[int]):
    op = b.hoist(StridedViewOp(arg, strided_memref(arg.type, shape, strides)))
    op.results[0].name_hint = f"{arg.name_hint or 'arg'}_view"
    return op.results[0]


def emit_chunked_group_norm(
    b: KernelBuilder,
    args: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
    view: tuple[int, int, int, int],
    per_group: bool,
    element: Attribute,
    epsilon: float,
) -> str | None:
    """Emit the chunked kernel for ``args`` = (x, out, scale, bias) viewed as ``view`` =
    ``[N, G, Cg, S]``; why not (no chunk of the group fits UB), else None (also in
    dry-run mode when it would be emitted)."""
    x_arg, out_arg, scale, bias = args
    n, groups, cg, s = view
    spec = Chunked("layer_norm", epsilon=epsilon)
    param_view = [groups, cg, s]
    eb = 4 if str(element) == "f32" else 2

    def bytes_of(chunk: Sequence[int]) -> int:
        return chunk_bytes(b, spec, AXES, chunk, eb, False, [param_view, param_view])

    plan = plan_chunks(view, AXES, bytes_of, b.ub_budget())
    if plan is None:
        return f"a group norm whose chunk of one pixel row of {s} elements does not fit UB"
    if b.dry_run:
        return None
    rows = (groups * cg * s, cg * s, s, 1)
    x, out = (_view(b, a, view, rows) for a in (x_arg, out_arg))
    strides = (1, 0, 0) if per_group else (cg, 1, 0)
    params = [_view(b, p, param_view, strides) for p in (scale, bias)]
    emit_chunked_reduction(b, spec, plan, x, out, params, element)
    return None
