"""The tiling strategies of ``tile-kernels``, in one table: which kernel each one takes.

A kernel body (:class:`~tilegraph.lowering.conversion.kernel_body.KernelBody`) that is not
a cube kernel goes to the first vector :class:`Strategy` of :data:`STRATEGIES` that takes
it, else to the elementwise chain (:func:`~.elementwise.emit_vector_kernel`). The cube
strategies are listed too (their dispatch is :func:`~.cube.emit_cube_kernel`'s, by the
anchor's class), so that the generated op reference (``docs/ops.md``) reads every
strategy from this table: adding a strategy is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xdsl.ir import Operation

from tilegraph.dialects.graph.constant_ops import ConstantOfShapeOp
from tilegraph.dialects.graph.data_movement import ConcatOp, GatherOp
from tilegraph.dialects.graph.generators import RangeOp
from tilegraph.dialects.graph.indexing import GatherNDOp, ReverseSequenceOp, ScatterNDOp
from tilegraph.dialects.graph.nn import ConvOp, LrnOp
from tilegraph.dialects.graph.normalization import GroupNormOp
from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp
from tilegraph.dialects.graph.quantize import DynamicQuantizeParamsOp
from tilegraph.dialects.graph.quantized_recurrent import DynamicQuantizeLSTMStepsOp
from tilegraph.dialects.graph.recurrent import RecurrentOp
from tilegraph.dialects.graph.rotary import ApplyRotaryOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.graph.spatial import ResizeOp
from tilegraph.dialects.graph.vision import GridSampleOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.arange import (
    emit_constant_of_shape_kernel,
    emit_range_kernel,
)
from tilegraph.lowering.conversion.tiling.axis_select import SELECTION_OPS, emit_selection_kernel
from tilegraph.lowering.conversion.tiling.concat import emit_concat_kernel
from tilegraph.lowering.conversion.tiling.conv import emit_conv
from tilegraph.lowering.conversion.tiling.conv3d import emit_conv3d
from tilegraph.lowering.conversion.tiling.cube import CONV_ANCHORS, MATMUL_ANCHORS
from tilegraph.lowering.conversion.tiling.data_movement import (
    DATA_MOVEMENT_OPS,
    emit_data_movement_kernel,
    is_data_movement,
)
from tilegraph.lowering.conversion.tiling.dynamic_quantize import emit_dynamic_quantize_kernel
from tilegraph.lowering.conversion.tiling.elements import ELEMENT_OPS, emit_elements_kernel
from tilegraph.lowering.conversion.tiling.elementwise_views import reads_views
from tilegraph.lowering.conversion.tiling.gather import emit_gather_kernel
from tilegraph.lowering.conversion.tiling.gather_nd import emit_gather_nd_kernel
from tilegraph.lowering.conversion.tiling.gather_views import takes_gather
from tilegraph.lowering.conversion.tiling.grid_sample import emit_grid_sample_kernel
from tilegraph.lowering.conversion.tiling.group_norm import emit_group_norm_kernel
from tilegraph.lowering.conversion.tiling.lrn import emit_lrn_kernel
from tilegraph.lowering.conversion.tiling.matmul import emit_matmul
from tilegraph.lowering.conversion.tiling.movement_5hd import (
    BLOCKED_OPS,
    emit_blocked_movement_kernel,
    is_blocked_movement,
)
from tilegraph.lowering.conversion.tiling.movement_maps import (
    CHAIN_OPS,
    emit_movement_chain_kernel,
    is_movement_chain,
)
from tilegraph.lowering.conversion.tiling.nhwc_out import (
    emit_nhwc_out_kernel,
    is_channels_last_chain,
)
from tilegraph.lowering.conversion.tiling.pooling import emit_pool_kernel
from tilegraph.lowering.conversion.tiling.pooling3d import emit_pool3d_kernel, is_pool3d
from tilegraph.lowering.conversion.tiling.quantized_recurrent_kernel import (
    emit_quantized_recurrent_kernel,
)
from tilegraph.lowering.conversion.tiling.recurrent import emit_recurrent_kernel
from tilegraph.lowering.conversion.tiling.reduction import (
    REDUCTION_OPS,
    emit_reduction_kernel,
    takes_reduction,
)
from tilegraph.lowering.conversion.tiling.reshape import (
    SHAPE_ONLY,
    emit_reshape_kernel,
    emit_transpose_kernel,
    is_viewed_transpose,
)
from tilegraph.lowering.conversion.tiling.resize import emit_resize_kernel
from tilegraph.lowering.conversion.tiling.resize_taps import emit_taps_resize_kernel
from tilegraph.lowering.conversion.tiling.reverse_sequence import emit_reverse_sequence_kernel
from tilegraph.lowering.conversion.tiling.rotary import emit_rotary_kernel, is_rotary_kernel
from tilegraph.lowering.conversion.tiling.scan import SCAN_OPS, emit_scan_kernel
from tilegraph.lowering.conversion.tiling.scatter_nd import emit_scatter_nd_kernel
from tilegraph.lowering.conversion.tiling.transdata import (
    emit_transdata_kernel,
    has_transdata_kernel,
)
from tilegraph.lowering.conversion.tiling.view_chains import (
    VIEW_OPS,
    emit_view_chain_kernel,
    is_view_chain,
)

Emit = Callable[..., Any]


def _first(body: KernelBody) -> Operation | None:
    return body.ops[0] if body.ops else None


def _starts_with(*classes: type) -> Callable[[KernelBody], bool]:
    return lambda body: isinstance(_first(body), classes)


def _holds(*classes: type) -> Callable[[KernelBody], bool]:
    return lambda body: any(isinstance(op, classes) for op in body.ops)


def _lone(accepts: Callable[[Operation], bool]) -> Callable[[KernelBody], bool]:
    return lambda body: len(body.ops) == 1 and accepts(body.ops[0])


def _is_pool3d(op: Operation | None) -> bool:
    return isinstance(op, MaxPoolOp | AvgPoolOp) and is_pool3d(op)


def _resize_mode(nearest: bool) -> Callable[[KernelBody], bool]:
    def takes(body: KernelBody) -> bool:
        first = _first(body)
        return isinstance(first, ResizeOp) and (first.attr("mode") == "nearest") == nearest

    return takes


@dataclass(frozen=True)
class Strategy:
    """One tiling strategy: the op classes its kernels are made of (for the op
    reference), when it takes a kernel body (vector strategies; in table order), its
    emitter ``emit(body, builder) -> reason | None`` and the unit it runs on."""

    ops: tuple[type, ...]
    emit: Emit
    unit: str
    takes: Callable[[KernelBody], bool] | None = None
    """None: a cube strategy, chosen by :func:`~.cube.emit_cube_kernel`."""


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(CONV_ANCHORS, emit_conv, "cube"),
    Strategy((ConvOp,), emit_conv3d, "cube"),  # 3-D; a 1-D one runs as conv2d (conv-forms)
    Strategy(MATMUL_ANCHORS, emit_matmul, "cube"),
    Strategy((RecurrentOp,), emit_recurrent_kernel, "cube + vector"),
    Strategy((DynamicQuantizeLSTMStepsOp,), emit_quantized_recurrent_kernel, "cube + vector"),
    Strategy(
        (MaxPoolOp, AvgPoolOp),
        emit_pool3d_kernel,
        "vector",
        lambda body: _is_pool3d(_first(body)),  # 3-D (NDC1HWC0, NCDHW)
    ),
    Strategy(
        (MaxPoolOp, AvgPoolOp), emit_pool_kernel, "vector", _starts_with(MaxPoolOp, AvgPoolOp)
    ),
    Strategy(tuple(REDUCTION_OPS), emit_reduction_kernel, "vector", takes_reduction),
    Strategy((LrnOp,), emit_lrn_kernel, "vector", _starts_with(LrnOp)),
    Strategy((GroupNormOp,), emit_group_norm_kernel, "vector", _starts_with(GroupNormOp)),
    Strategy((ApplyRotaryOp,), emit_rotary_kernel, "vector", is_rotary_kernel),
    Strategy(CHAIN_OPS, emit_movement_chain_kernel, "vector", is_movement_chain),
    Strategy((ConcatOp,), emit_concat_kernel, "vector", _holds(ConcatOp)),
    Strategy((), emit_transpose_kernel, "vector", is_viewed_transpose),
    # before the reshape chain: a gather reads its ids / writes its rows through views
    Strategy((GatherOp,), emit_gather_kernel, "vector", takes_gather(GatherOp)),
    Strategy((GatherNDOp,), emit_gather_nd_kernel, "vector", takes_gather(GatherNDOp)),
    Strategy(
        (TransDataOp, *VIEW_OPS),
        emit_view_chain_kernel,
        "vector",
        is_view_chain,
    ),
    Strategy(
        (TransDataOp, *SHAPE_ONLY, TransposeOp),
        emit_nhwc_out_kernel,
        "vector",
        is_channels_last_chain,
    ),
    Strategy(tuple(SHAPE_ONLY), emit_reshape_kernel, "vector", _holds(*SHAPE_ONLY)),
    Strategy((TransposeOp,), emit_transpose_kernel, "vector", _starts_with(TransposeOp)),
    Strategy(
        (),
        emit_transdata_kernel,
        "vector",
        _lone(lambda op: isinstance(op, TransDataOp) and has_transdata_kernel(op)),
    ),
    Strategy(BLOCKED_OPS, emit_blocked_movement_kernel, "vector", _lone(is_blocked_movement)),
    Strategy(DATA_MOVEMENT_OPS, emit_data_movement_kernel, "vector", _lone(is_data_movement)),
    Strategy((ScatterNDOp,), emit_scatter_nd_kernel, "vector", _starts_with(ScatterNDOp)),
    Strategy((GridSampleOp,), emit_grid_sample_kernel, "vector", _starts_with(GridSampleOp)),
    Strategy(
        (ReverseSequenceOp,),
        emit_reverse_sequence_kernel,
        "vector",
        _starts_with(ReverseSequenceOp),
    ),
    Strategy(ELEMENT_OPS, emit_elements_kernel, "vector", _starts_with(*ELEMENT_OPS)),
    Strategy((ResizeOp,), emit_resize_kernel, "vector", _resize_mode(nearest=True)),
    Strategy((ResizeOp,), emit_taps_resize_kernel, "vector", _resize_mode(nearest=False)),
    Strategy(tuple(SCAN_OPS), emit_scan_kernel, "vector", _starts_with(*SCAN_OPS)),
    Strategy(tuple(SELECTION_OPS), emit_selection_kernel, "vector", _starts_with(*SELECTION_OPS)),
    Strategy((RangeOp,), emit_range_kernel, "vector", _lone(lambda op: isinstance(op, RangeOp))),
    Strategy(
        (ConstantOfShapeOp,),
        emit_constant_of_shape_kernel,
        "vector",
        _lone(lambda op: isinstance(op, ConstantOfShapeOp)),
    ),
    Strategy(
        (DynamicQuantizeParamsOp,),
        emit_dynamic_quantize_kernel,
        "vector",
        _starts_with(DynamicQuantizeParamsOp),
    ),
)
"""Every strategy; the vector ones in the order :func:`vector_strategy` tries them."""


def vector_strategy(body: KernelBody) -> Emit | None:
    """The emitter of the first vector strategy that takes ``body`` (None: the elementwise
    chain's, also for a body whose view ops are its elementwise operands' or result's; a
    movement chain of slices and a same-rank expand stays the movement kernel's)."""
    if reads_views(body) and not is_movement_chain(body):
        return None
    for strategy in STRATEGIES:
        if strategy.takes is not None and strategy.takes(body):
            return strategy.emit
    return None
