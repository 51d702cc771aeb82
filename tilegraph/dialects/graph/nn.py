"""Neural-network graph ops: convolutions, normalisations, LRN, softmax.

The pools are in :mod:`tilegraph.dialects.graph.pooling`; the sliding-window geometry conv
shares with them is in :mod:`tilegraph.dialects.graph.windows`.

ONNX opset-17 semantics and attribute names; absent attributes take ONNX defaults
(``DEFAULTS``; the per-axis defaults ``strides``/``dilations`` = 1, ``pads`` = 0 depend on the
rank and are filled in by the shape function).

Format roles. One op class covers every rank ONNX allows (Conv and BatchNorm are
rank-generic), but a format fixes a rank. A SENSITIVE op's ``data_format`` therefore applies
only when its data operand has that format's rank (4 for NCHW, 5 for NCDHW); at any other
rank (1-D conv, BatchNorm on ``[N, C]``) the axes have no format meaning and the
tensors are ND, the rule formats.md gives for reshape-like ops. The shape functions follow
it: the result of a 4-D op is NCHW, of a 5-D op NCDHW, otherwise ND.

Fusion kinds follow TVM: convolutions are OUT_ELEMWISE_FUSABLE (an elementwise
epilogue fuses into them). BatchNorm at inference is a per-channel affine map
``x * a[c] + b[c]``: BROADCAST, so it fuses into a conv epilogue as GE fuses it (it is not an
anchor, so not OUT_ELEMWISE_FUSABLE). InstanceNorm, LRN and the softmaxes reduce and then
revisit their input: OPAQUE (dedicated kernels, as in TVM and GE).

Reference kernels: numpy, origin semantics. Convolution is im2col (one strided view per
kernel offset, one batched matmul over groups). float16 is computed in float32 and cast back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import reduce
from math import prod
from typing import ClassVar

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, result_def, traits_def
from xdsl.traits import Pure

from tilegraph.dialects.graph.base import (
    GraphOp,
    ShapeError,
    float_attr,
    int_attr,
    ints_attr,
    str_attr,
    tensor_type,
)
from tilegraph.dialects.graph.facts import (
    FormatRole,
    FusionKind,
    KernelVariant,
    OpCost,
    OpFacts,
    PrecisionRole,
    with_precision,
)
from tilegraph.dialects.graph.shape_utils import normalize_axis, require, result_like
from tilegraph.dialects.graph.windows import (
    Axis,
    accumulator,
    known,
    nc_result,
    per_axis_ints,
    rank_at_least,
    split_padding,
    window,
    window_attrs,
    window_kernel,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import UNKNOWN, Dim, dims_compatible, is_symbolic

F = Format
_Slots = Sequence[SSAValue | None]
_Props = Mapping[str, Attribute]


def _facts(fusion: FusionKind, *kernels: KernelVariant, fmt: Format = F.NCHW, **kw) -> OpFacts:
    return OpFacts(FormatRole.SENSITIVE, fusion, data_format=fmt, kernels=kernels, **kw)


def _variant(operands: Sequence[Format], result: Format, name: str) -> KernelVariant:
    return KernelVariant(tuple(operands), (result,), name)


_CUBE_2D = _variant((F.NC1HWC0, F.FRACTAL_Z, F.NC1HWC0), F.NC1HWC0, "cube")
_CUBE_2D_C04 = KernelVariant(
    (F.NC1HWC0_C04, F.FRACTAL_Z_C04, F.NC1HWC0), (F.NC1HWC0,), "cube_c04", small_channel_of="cube"
)
"""The small-channel cube kernel (ATC's ``--enable_small_channel``): at most 4 input channels
held as ``[N, 1, H, W, 4]`` and a weight whose K axis is (kh, kw, c) over 4 channels, so the
img2col K is 4·kh·kw instead of C0·kh·kw. Offered only in small-channel mode, and only for an
ungrouped convolution of known C <= 4 (:class:`tilegraph.passes.layout_plan.LayoutPlanner`)."""
_PLAIN_2D = _variant((F.NCHW, F.NCHW, F.ND), F.NCHW, "plain")
_PLAIN_ND = _variant((F.ND, F.ND, F.ND), F.ND, "plain_nd")


def _channels(x: np.ndarray) -> tuple[int, ...]:
    """Broadcast shape of a per-channel vector against ``x`` (channels on axis 1)."""
    return (1, -1) + (1,) * (x.ndim - 2)


def _vector(t: TensorType | None, size: Dim, what: str) -> None:
    """A per-channel operand must be 1-D with ``size`` elements."""
    if t is not None and (t.rank != 1 or not dims_compatible(t.origin_shape[0], size)):
        raise ShapeError(f"{what} must have shape [{size}], got {list(t.origin_shape)}")


# ---- convolution --------------------------------------------------------------------------


class _ConvBase(GraphOp):
    """Operands, attributes, common checks and cost of conv2d, conv and conv_transpose."""

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    auto_pad = str_attr()
    dilations = ints_attr()
    group = int_attr()
    kernel_shape = ints_attr()
    pads = ints_attr()
    strides = ints_attr()
    traits = traits_def(Pure())

    DEFAULTS: ClassVar = {"auto_pad": "NOTSET", "group": 1}
    RANKS: ClassVar[tuple[int, ...]] = (3, 4, 5)

    @classmethod
    def _check_operands(cls, operands: _Slots, props: _Props):
        x = require(tensor_type(operands[0]), "input")
        w = require(tensor_type(operands[1]), "weight")
        b = tensor_type(operands[2]) if len(operands) > 2 else None
        if x.rank not in cls.RANKS:
            ranks = " or ".join(map(str, cls.RANKS))
            raise ShapeError(f"{cls.name} needs a rank {ranks} input, got rank {x.rank}")
        if w.rank != x.rank:
            raise ShapeError(f"weight has rank {w.rank}, the input has rank {x.rank}")
        if any(t.element_type != x.element_type for t in (w, b) if t is not None):
            raise ShapeError("input, weight and bias must have one element type")
        group = cls.read_attr(props, "group")
        if group < 1:
            raise ShapeError(f"group must be >= 1, got {group}")
        if known(c := x.origin_shape[1]) and c % group:
            raise ShapeError(f"input channels {c} are not divisible by group {group}")
        return x, w, b, group

    def _cost(self, side: Attribute) -> OpCost:
        """2 * elements(side) * prod(W.shape[1:]) flops (0 when not static)."""
        w = self.weight.type
        assert isinstance(side, TensorType) and isinstance(w, TensorType)
        n = side.num_elements()
        flops = 2 * n * prod(w.origin_shape[1:]) if n is not None and w.is_static else 0
        return OpCost(flops=int(flops), bytes=super().cost().bytes)

    def _inputs(self, inputs: tuple[np.ndarray | None, ...]):
        x, w, b = (*inputs, None)[:3]
        assert x is not None and w is not None
        acc = accumulator(x.dtype)
        bias = None if b is None else b.astype(acc).reshape(_channels(x))
        return x, w, bias, acc, self.attr("group")


class ConvOpBase(_ConvBase):
    """ONNX Conv, rank-generic: X ``[N, C, *spatial]``, W ``[M, C/group, *kernel]``,
    optional B ``[M]``; subclasses fix the ranks they accept."""

    ONNX_OP: ClassVar = "Conv"

    @classmethod
    def accepts_onnx(cls, input_ranks: Sequence[int | None]) -> bool:
        """A 4-D Conv is graph.conv2d, a 3-D or 5-D one graph.conv (the weight's rank decides
        when the input's is unknown; when both are, graph.conv2d)."""
        rank = next((r for r in input_ranks[:2] if r is not None), None)
        return rank in cls.RANKS or (rank is None and 4 in cls.RANKS)

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x, w, b, group = cls._check_operands(operands, props)
        nb, c, *spatial = x.origin_shape
        m, cg, *kw = w.origin_shape
        if known(m) and m % group:
            raise ShapeError(f"output channels {m} are not divisible by group {group}")
        if known(c) and known(cg) and cg * group != c:
            raise ShapeError(
                f"weight expects {cg} channels per group x group {group} = {cg * group} "
                f"input channels, the input has {c}"
            )
        _vector(b, m, "bias")
        axes = window(cls, props, spatial, window_kernel(cls, props, len(spatial), kw))
        return [nc_result(x, [nb, m, *(a.out for a in axes)])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, acc, group = self._inputs(inputs)
        (n, c, *spatial), (m, _, *kernel) = x.shape, w.shape
        axes = window(type(self), self.properties, spatial, kernel)
        xp = np.pad(x.astype(acc), [(0, 0), (0, 0), *((a.begin, a.end) for a in axes)])
        taps = [xp[(..., *map(Axis.taps, axes, k))] for k in np.ndindex(*kernel)]
        cols = np.stack(taps, axis=2).reshape(n, group, c // group * prod(kernel), -1)
        y = np.matmul(w.astype(acc).reshape(group, m // group, -1), cols)
        y = y.reshape(n, m, *(a.out for a in axes))
        return ((y if bias is None else y + bias).astype(x.dtype),)

    def cost(self) -> OpCost:
        """flops = 2 * N * M * prod(out) * (C / group) * prod(kernel)."""
        return self._cost(self.output.type)


@irdl_op_definition
class Conv2dOp(ConvOpBase):
    """2-D convolution (ONNX Conv on a 4-D input), the NCHW anchor of the format engine."""

    name = "graph.conv2d"
    RANKS: ClassVar = (4,)
    FACTS: ClassVar = _facts(
        FusionKind.OUT_ELEMWISE_FUSABLE,
        _CUBE_2D,
        _PLAIN_2D,
        _CUBE_2D_C04,
        heavy=True,
        reshape_types={2: "C"},
        precision=PrecisionRole.WHITE,
    )


@irdl_op_definition
class ConvOp(ConvOpBase):
    """1-D and 3-D convolution (ONNX Conv on a 3-D or 5-D input).

    A 5-D conv is an NCDHW anchor with the cube variant (NDC1HWC0, FRACTAL_Z_3D, NDC1HWC0).
    A 1-D conv (3-D input) has no format of its rank: the NCDHW role does not apply (module
    docstring), its tensors are ND and only the ``plain_nd`` variant fits.
    """

    name = "graph.conv"
    RANKS: ClassVar = (3, 5)
    FACTS: ClassVar = _facts(
        FusionKind.OUT_ELEMWISE_FUSABLE,
        _variant((F.NDC1HWC0, F.FRACTAL_Z_3D, F.NDC1HWC0), F.NDC1HWC0, "cube"),
        _variant((F.NCDHW, F.NCDHW, F.ND), F.NCDHW, "plain"),
        _PLAIN_ND,
        fmt=F.NCDHW,
        heavy=True,
        reshape_types={2: "C"},
        precision=PrecisionRole.WHITE,
    )


@irdl_op_definition
class ConvTransposeOp(_ConvBase):
    """ONNX ConvTranspose on 3-D, 4-D or 5-D inputs (1-, 2-, 3-D transposed convolution).

    X ``[N, C, *spatial]``, W ``[C, M/group, *kernel]``, optional B ``[M]``. Pads follow
    onnxruntime: with ``output_shape`` (spatial dims only) or SAME they come from the total
    padding, the odd element at the end for SAME_UPPER and at the beginning otherwise;
    a SAME total below 0 (kernel smaller than the stride) is clamped to 0. The NCHW facts
    apply to the 4-D case (module docstring).
    """

    name = "graph.conv_transpose"
    ONNX_OP: ClassVar = "ConvTranspose"
    output_padding = ints_attr()
    output_shape = ints_attr()
    FACTS: ClassVar = _facts(
        FusionKind.OUT_ELEMWISE_FUSABLE,
        _CUBE_2D,
        _PLAIN_2D,
        _PLAIN_ND,
        heavy=True,
        reshape_types={2: "C"},
        precision=PrecisionRole.WHITE,
    )

    @classmethod
    def _geometry(cls, props: _Props, spatial: Sequence[Dim], kernel: Sequence[Dim]):
        """One :class:`Axis` per spatial axis; ``out`` is the output size, ``begin`` the
        number of leading positions of the full result that are cropped."""
        n = len(spatial)
        strides, dilations, pads, mode = window_attrs(cls, props, n)
        adj = per_axis_ints(cls, props, "output_padding", n, 0, 0)
        req = cls.read_attr(props, "output_shape")
        if req is not None and (len(req) != n or min(req) < 1):
            raise ShapeError(f"output_shape must have {n} positive values, got {list(req)}")
        axes = []
        for i, (size, k, s, d, a) in enumerate(
            zip(spatial, kernel, strides, dilations, adj, strict=True)
        ):
            if a >= max(s, d):
                raise ShapeError(f"output_padding {a} must be smaller than stride or dilation")
            extra = (k - 1) * d + 1 + a - s if known(k) else None  # full size - stride * size
            pb, pe = (0, 0) if mode == "VALID" else (pads[i], pads[n + i])
            if mode.startswith("SAME") and extra is not None:
                pb, pe = split_padding(max(0, extra), mode == "SAME_UPPER")
            if req is not None and extra is not None and known(size):
                if req[i] > s * size + extra + s - 1 - a:
                    raise ShapeError(f"output_shape {req[i]} is too large for input size {size}")
                pb, pe = split_padding(max(0, s * size + extra - req[i]), mode == "SAME_UPPER")
            out: Dim = UNKNOWN
            if req is not None:
                out = req[i]
            elif extra is not None and (known(size) or is_symbolic(size)):
                out = s * size + (extra - pb - pe)
                if isinstance(out, int) and out < 1:
                    raise ShapeError(f"output size {out} of spatial axis {i} is not positive")
            axes.append(Axis(size, k, s, d, pb, pe, out))
        return axes

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x, w, b, group = cls._check_operands(operands, props)
        nb, c, *spatial = x.origin_shape
        wc, mg, *kw = w.origin_shape
        if not dims_compatible(wc, c):
            raise ShapeError(f"weight has {wc} input channels, the input has {c}")
        m = mg * group if known(mg) else UNKNOWN
        _vector(b, m, "bias")
        axes = cls._geometry(props, spatial, window_kernel(cls, props, len(spatial), kw))
        return [nc_result(x, [nb, m, *(a.out for a in axes)])]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, w, bias, acc, group = self._inputs(inputs)
        (n, c, *spatial), (_, mg, *kernel) = x.shape, w.shape
        axes = self._geometry(self.properties, spatial, kernel)
        wm = w.astype(acc).reshape(group, c // group, -1).transpose(0, 2, 1)
        cols = np.matmul(wm, x.astype(acc).reshape(n, group, c // group, -1))
        cols = cols.reshape(n, mg * group, *kernel, *spatial)  # one slab per kernel offset
        sizes = [max(a.taps(a.kernel - 1, a.size).stop, a.begin + a.out) for a in axes]
        y = np.zeros((n, mg * group, *sizes), acc)
        for k in np.ndindex(*kernel):
            dst = (a.taps(kk, a.size) for a, kk in zip(axes, k, strict=True))
            y[(..., *dst)] += cols[(slice(None), slice(None), *k)]
        y = y[(..., *(slice(a.begin, a.begin + a.out) for a in axes))]
        return ((y if bias is None else y + bias).astype(x.dtype),)

    def cost(self) -> OpCost:
        """flops = 2 * N * C * prod(input spatial) * (M / group) * prod(kernel)."""
        return self._cost(self.input.type)


# ---- normalisation ------------------------------------------------------------------------


@irdl_op_definition
class BatchNormOp(GraphOp):
    """ONNX BatchNormalization at inference (opset-15 semantics, first output only).

    ``y = (x - mean) / sqrt(var + epsilon) * scale + B`` per channel (axis 1); ``momentum``
    is kept for round trips, ``training_mode = 1`` is rejected (a model that uses the
    running statistics it outputs imports as ``graph.batch_norm_training``). Fusion
    BROADCAST: a per-channel affine map (module docstring).
    """

    name = "graph.batch_norm"
    ONNX_OP: ClassVar = "BatchNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = float_attr()
    momentum = float_attr()
    training_mode = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"epsilon": 1e-5, "momentum": 0.9, "training_mode": 0}
    FACTS: ClassVar = _facts(
        FusionKind.BROADCAST,
        _variant((F.NC1HWC0,) * 5, F.NC1HWC0, "5hd"),
        _variant((F.NCHW, F.ND, F.ND, F.ND, F.ND), F.NCHW, "plain"),
        reshape_types={1: "C", 2: "C", 3: "C", 4: "C"},
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        rank_at_least(x, 2)
        if cls.read_attr(props, "training_mode"):
            raise ShapeError("training_mode = 1 is not supported (inference only)")
        for i, what in enumerate(("scale", "B", "mean", "var"), 1):
            _vector(require(tensor_type(operands[i]), what), x.origin_shape[1], what)
        return [nc_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale, b, mean, var = (a for a in inputs if a is not None)
        acc, shape = accumulator(x.dtype), _channels(x)
        a = scale.astype(acc) / np.sqrt(var.astype(acc) + acc(self.attr("epsilon")))
        y = (x.astype(acc) - mean.astype(acc).reshape(shape)) * a.reshape(shape)
        return ((y + b.astype(acc).reshape(shape)).astype(x.dtype),)


@irdl_op_definition
class InstanceNormOp(GraphOp):
    """ONNX InstanceNormalization: each (n, c) normalised over the spatial axes, then
    ``* scale[c] + B[c]``."""

    name = "graph.instance_norm"
    ONNX_OP: ClassVar = "InstanceNormalization"
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = float_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"epsilon": 1e-5}
    FACTS: ClassVar = _facts(
        FusionKind.OPAQUE,
        _variant((F.NC1HWC0,) * 3, F.NC1HWC0, "5hd"),
        _variant((F.NCHW, F.ND, F.ND), F.NCHW, "plain"),
        reshape_types={1: "C", 2: "C"},
        precision=PrecisionRole.BLACK,
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        rank_at_least(x, 3, "[N, C, spatial...]")
        for i, what in enumerate(("scale", "B"), 1):
            _vector(require(tensor_type(operands[i]), what), x.origin_shape[1], what)
        return [nc_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        x, scale, b = (a for a in inputs if a is not None)
        acc, shape, axes = accumulator(x.dtype), _channels(x), tuple(range(2, x.ndim))
        xc = x.astype(acc) - x.astype(acc).mean(axis=axes, keepdims=True)
        y = xc / np.sqrt(np.square(xc).mean(axis=axes, keepdims=True) + acc(self.attr("epsilon")))
        y = y * scale.astype(acc).reshape(shape) + b.astype(acc).reshape(shape)
        return (y.astype(x.dtype),)


@irdl_op_definition
class LrnOp(GraphOp):
    """ONNX LRN: ``y = x / (bias + alpha / size * square_sum) ** beta`` where
    ``square_sum[n, c]`` sums ``x**2`` over the channels ``c - floor((size-1)/2)`` to
    ``c + ceil((size-1)/2)`` (onnxruntime agrees; onnx.reference sums over the batch)."""

    name = "graph.lrn"
    ONNX_OP: ClassVar = "LRN"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    alpha = float_attr()
    beta = float_attr()
    bias = float_attr()
    size = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"alpha": 0.0001, "beta": 0.75, "bias": 1.0}
    FACTS: ClassVar = with_precision(
        _facts(FusionKind.OPAQUE, _variant((F.NCHW,), F.NCHW, "plain")), PrecisionRole.BLACK
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        rank_at_least(x, 2)
        if (size := cls.read_attr(props, "size")) is None or size < 1:
            raise ShapeError(f"lrn needs a positive 'size' attribute, got {size}")
        return [nc_result(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        acc, size, channels = accumulator(x.dtype), self.attr("size"), x.shape[1]
        widths = [(0, 0), ((size - 1) // 2, size // 2)] + [(0, 0)] * (x.ndim - 2)
        sq = np.pad(np.square(x.astype(acc)), widths)
        total = reduce(np.add, (sq[:, i : i + channels] for i in range(size)))
        alpha, beta, bias = (acc(self.attr(k)) for k in ("alpha", "beta", "bias"))
        return ((x.astype(acc) / (bias + alpha / size * total) ** beta).astype(x.dtype),)


# ---- softmax ------------------------------------------------------------------------------


class _SoftmaxBase(GraphOp):
    """Softmax along one axis (opset-13 semantics).

    ND_ONLY with no storage variants, so the kernel only ever sees the origin layout:
    AGNOSTIC would be wrong when the axis is C of an NC1HWC0 tensor (C is split in two and
    padded). OPAQUE as in TVM: two reductions (max, sum), then a second elementwise pass
    over the input, which a fusion group cannot express.
    """

    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = int_attr()
    traits = traits_def(Pure())
    DEFAULTS: ClassVar = {"axis": -1}
    FACTS: ClassVar[OpFacts] = OpFacts(
        FormatRole.ND_ONLY, FusionKind.OPAQUE, precision=PrecisionRole.BLACK, elementwise_tail=True
    )

    @classmethod
    def infer_shapes(cls, operands: _Slots, props: _Props) -> list[TensorType]:
        x = require(tensor_type(operands[0]), "input")
        normalize_axis(cls.read_attr(props, "axis"), x.rank)
        return [result_like(x, x.origin_shape)]

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        (x,) = inputs
        assert x is not None
        axis = normalize_axis(self.attr("axis"), x.ndim)
        shifted = x.astype(accumulator(x.dtype))
        shifted = shifted - shifted.max(axis=axis, keepdims=True)
        y = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        return ((y if self.ONNX_OP == "LogSoftmax" else np.exp(y)).astype(x.dtype),)


@irdl_op_definition
class SoftmaxOp(_SoftmaxBase):
    name = "graph.softmax"
    ONNX_OP: ClassVar = "Softmax"


@irdl_op_definition
class LogSoftmaxOp(_SoftmaxBase):
    name = "graph.log_softmax"
    ONNX_OP: ClassVar = "LogSoftmax"


NN_OPS: list[type[GraphOp]] = [
    Conv2dOp, ConvOp, ConvTransposeOp, BatchNormOp, InstanceNormOp, LrnOp,
    SoftmaxOp, LogSoftmaxOp,
]  # fmt: skip
