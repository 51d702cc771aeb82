"""Which operands of a kernel ``lower-graph-to-kernels`` clones into its body.

A kernel reads its operands from GM, except the constants a strategy reads at compile time:
small integer constants read as parameters (axes, shapes, slice bounds) and, whatever
their type, the operands that are immediates of the kernel's program (a pad's fill value,
a resize's scales, a one_hot's depth, a range's scalars, a per-tensor quantisation's scale
and zero point). :func:`read_as_data` says when a small constant is data all the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.graph import ConstantOp, FusionKind, GraphOp
from tilegraph.dialects.graph.data_movement import ConcatOp, ExpandOp, GatherOp, PadOp
from tilegraph.dialects.graph.generators import RangeOp
from tilegraph.dialects.graph.indexing import (
    GatherElementsOp,
    OneHotOp,
    ScatterElementsOp,
    ScatterNDOp,
)
from tilegraph.dialects.graph.quantize import DequantizeLinearOp, QuantizeLinearOp
from tilegraph.dialects.graph.quantized_recurrent import DynamicQuantizeLSTMStepsOp
from tilegraph.dialects.graph.spatial import ResizeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.lowering.conversion.tiling.gather_strided import GATHER_CHAIN_OPS, affine_grid

INLINE_CONSTANT_ELEMENTS = 64
"""Integer constants up to this size (axes, shapes, indices) go into the kernel body."""
ELEMENTWISE_KINDS = (FusionKind.ELEMWISE, FusionKind.BROADCAST)
"""The fusion kinds whose ops read an operand as data (loaded from GM like any other)."""


def inlined_constant(
    value: SSAValue, parameter: bool = False, grid: bool = False
) -> ConstantOp | None:
    """The constant behind ``value`` when it goes into the kernel body: a small integer
    one, or (``parameter``: the operand is read at compile time, a pad's value, a resize's
    scales) a small one of any type, or (``grid``: a gather's indices in a group of gathers
    and views, :func:`grid_indices`) an affine grid of any size — a strided view's start
    and steps, which the kernel needs at compile time (PVT v2's adaptive-pool windows)."""
    op = value.owner
    if not isinstance(op, ConstantOp):
        return None
    t = op.output.type
    if not isinstance(t, TensorType):
        return None
    n = t.num_elements()
    if not parameter and t.dtype.numpy.kind not in "iub":
        return None
    values = op.constant_array() if grid and t.dtype.numpy.kind in "iu" else None
    if values is not None and affine_grid(values) is not None:
        return op
    return op if n is not None and n <= INLINE_CONSTANT_ELEMENTS else None


def grid_indices(members: Sequence[Operation]) -> set[SSAValue]:
    """The index operands of the gathers of a kernel made of gathers and view ops only (at
    least two ops): the strided-gather kernel reads them as a view when they are an affine
    grid (:mod:`~tilegraph.lowering.conversion.tiling.gather_strided`), so those go into
    the body whatever their size; empty for any other kernel (a lone gather's large index
    constant stays a GM tensor its row DMAs read)."""
    if len(members) < 2 or not all(isinstance(op, GATHER_CHAIN_OPS) for op in members):
        return set()
    return {op.indices for op in members if isinstance(op, GatherOp)}


def read_as_data(value: SSAValue, members: Sequence[Operation]) -> bool:
    """Whether every user of ``value`` among a kernel's ``members`` reads it as tensor data
    of an elementwise op, which its vector program loads from GM like any operand (an
    integer divisor of ``graph.mod``), as an operand of a cube anchor (an int8
    convolution's int32 bias goes GM -> L1 like its weights), as a piece of a concat
    (GatherND's indices built from a Range and an ArgMax) or as an operand of an element
    gather / scatter (all three through UB), of a ScatterND (its kernel copies the data
    and DMAs the updates from GM at the index tuples it loads: Speech2Text's decoder
    shift scatters a constant into zeros) or of DynamicQuantizeLSTM's recurrence (its
    kernel reads R and the zero points from GM); a constant read as a parameter (axes,
    shapes, an expand's target shape, slice bounds) goes into the body."""
    inside = set(members)
    users = [use.operation for use in value.uses if use.operation in inside]
    return bool(users) and all(
        isinstance(user, ConcatOp | GatherElementsOp | ScatterElementsOp | ScatterNDOp)
        or isinstance(user, DynamicQuantizeLSTMStepsOp)
        or (
            isinstance(user, GraphOp)
            and (user.FACTS.fusion in ELEMENTWISE_KINDS or user.FACTS.heavy)
            and not (isinstance(user, ExpandOp) and user.shape is value)  # a shape
        )
        for user in users
    )


def _single(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and t.num_elements() == 1


def compile_time_parameters(members: Sequence[Operation]) -> set[SSAValue]:
    """Operands the strategies read at compile time whatever their type: a constant pad's
    fill value (the DMA fills with it), a resize's roi, scales and sizes (its index
    tables), a one_hot's depth and on / off values (written by its vector op), a range's
    scalars (immediates of ``tile.varange``), a per-tensor
    quantization's scale and zero point (immediates of its vector program) when every user
    in the kernel reads them so."""
    found: set[SSAValue] = set()
    quantization: set[SSAValue] = set()
    for op in members:
        if isinstance(op, QuantizeLinearOp | DequantizeLinearOp):
            quantization.update(v for v in op.operands[1:] if _single(v))
    inside = set(members)
    for v in quantization:
        users = [u.operation for u in v.uses if u.operation in inside]
        if all(
            isinstance(u, QuantizeLinearOp | DequantizeLinearOp) and u.x is not v for u in users
        ):
            found.add(v)
    for op in members:
        if isinstance(op, PadOp) and op.constant_value is not None:
            found.add(op.constant_value)
        elif isinstance(op, ResizeOp):
            found.update(v for v in (op.roi, op.scales, op.sizes) if v is not None)
        elif isinstance(op, OneHotOp):
            found.update((op.depth, op.values))
        elif isinstance(op, RangeOp):
            found.update((op.start, op.limit, op.delta))
    return found
