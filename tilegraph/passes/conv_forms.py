"""``conv-forms``: the convolutions the cube has no kernel of, rewritten into the one it has.

The tile level runs one convolution kernel, ``graph.conv2d`` on NC1HWC0 data and a
FRACTAL_Z weight (:mod:`tilegraph.lowering.conversion.tiling.conv`). This pass, the first
of the format engine (``format``), brings the other convolutions to that form before
storage formats are chosen, as ATC's parser and fusion passes do (Conv1D becomes Conv2D with
an expanded H; ConvTranspose becomes Conv2DBackpropInput, a convolution of the dilated
input):

* **1-D convolution** (``graph.conv`` on ``[N, C, L]``): ``[N, C, L] -> [N, C, 1, L]``
  (``graph.unsqueeze`` at axis 2), ``graph.conv2d`` with kernel ``[1, k]``, strides
  ``[1, s]``, dilations ``[1, d]``, pads ``[0, begin, 0, end]`` (auto_pad resolved here)
  and the same group (depthwise included), then ``graph.squeeze`` of axis 2. The unsqueeze
  and squeeze are views: in the origin layout ``[N, C, L]`` and ``[N, C, 1, L]`` are the
  same bytes (tilegraph has no buffer views, so where they do not meet a TransData they run
  as flat DMA copies — GE's no-task Reshape). A constant weight ``[M, C/g, k]`` is reshaped
  here to ``[M, C/g, 1, k]``; any other is unsqueezed like the data.
* **1-D pooling** (``graph.avg_pool`` / ``graph.max_pool`` on ``[N, C, L]``: SEW-D's
  squeeze of the time axis, a PyTorch ``AvgPool1d`` / ``MaxPool1d``): the same views around a
  2-D pool with kernel ``[1, k]``, strides ``[1, s]``, dilations ``[1, d]``, pads
  ``[0, begin, 0, end]`` (auto_pad resolved), ``ceil_mode`` and ``count_include_pad`` kept —
  the pooling kernel tiles NC1HWC0 (:mod:`tilegraph.lowering.conversion.tiling.pooling`).
* **conv_transpose** (1-D via the above, 2-D): see :mod:`.conv_transpose_form`.
* **STFT and DFT** (a float32 real signal, constant parameters): a strided convolution with
  the windowed DFT basis as its filters, a matmul with the DFT basis, see
  :mod:`.fourier_forms`.
* **A strided convolution of a one-channel signal** (``[B, 1, 1, N]``, stride ``s >= 2``,
  constant filters): over the signal's hops as ``s`` channels, stride 1, see
  :mod:`.hop_forms` (the one channel would be padded to C0).

Only static shapes are rewritten (the reshapes of a conv_transpose need them; a 1-D conv's
unsqueeze would not, but a symbolic one stays whole so a Session binds it as before); a
3-D convolution (``graph.conv`` on NCDHW) is left as it is (its cube kernel reads NDC1HWC0
and FRACTAL_Z_3D: :mod:`tilegraph.lowering.conversion.tiling.conv3d`). The graph level's
numbers do not change: the rewritten ops compute the same sums (in another order for a
conv_transpose, whose products become those of a convolution).

A 1-D convolution's squeeze then meets what reads it: ``elementwise-before-movement`` takes
an activation (or a residual add of two such convolutions) before the squeeze, into the
convolution's epilogue, and ``squeeze-unsqueeze-inverse`` removes a squeeze that the next
1-D convolution's unsqueeze undoes, so a stack of them keeps NC1HWC0 from one convolution to
the next (conv + ReLU one cube kernel, no TransData between), as ATC's Conv1D stacks run.
Both are ``algebraic-simplify`` rules; O1 ran before the convolutions had a squeeze, so this
pass runs the two once more after its rewrite (counted as ``rule.<name>`` here).

Statistics: ``conv1d-as-conv2d``, ``pool1d-as-pool2d``, ``conv-transpose-as-conv2d``,
``stft-as-conv2d``, ``dft-as-matmul``, ``strided-signal-conv-over-hops``,
``rule.elementwise-before-movement``, ``rule.squeeze-unsqueeze-inverse``.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from tilegraph.dialects.graph.nn import Conv2dOp, ConvOp, ConvTransposeOp
from tilegraph.dialects.graph.pooling import AvgPoolOp, MaxPoolOp
from tilegraph.dialects.graph.provenance import Located
from tilegraph.dialects.graph.signal import DFTOp, STFTOp
from tilegraph.dialects.graph.windows import window
from tilegraph.passes.conv_transpose_form import transposed_as_conv2d
from tilegraph.passes.conv_views import ROW_AXIS, as_rows, squeezed, static_type
from tilegraph.passes.fourier_forms import dft_as_matmul, stft_as_conv2d
from tilegraph.passes.hop_forms import strided_conv_over_hops
from tilegraph.passes.registry import register_pass
from tilegraph.passes.simplify.match import replace_if_typed
from tilegraph.passes.simplify.shape_rules import SqueezeUnsqueezeInverse
from tilegraph.passes.simplify.view_rules import ElementwiseBeforeSqueeze
from tilegraph.passes.statistics import PassStatistics, start_pass

PASS_NAME = "conv-forms"


def conv1d_as_conv2d(op: ConvOp) -> list[Operation] | None:
    """The ops that compute a 1-D ``op`` as a conv2d with H = 1 (None: not a static 1-D
    convolution)."""
    x, w = static_type(op.input), static_type(op.weight)
    if x is None or w is None or x.rank != 3:
        return None
    kernel = [int(w.origin_shape[2])]
    (axis,) = window(ConvOp, op.properties, [int(x.origin_shape[2])], kernel)
    rows = (ROW_AXIS, axis)  # H = 1: stride 1, dilation 1, no padding
    ops: list[Operation] = []
    data, weight = as_rows(op.input, ops), as_rows(op.weight, ops)
    conv = Conv2dOp.make(
        data, weight, op.bias, kernel_shape=[1, *kernel], group=op.attr("group"),
        strides=[a.stride for a in rows], dilations=[a.dilation for a in rows],
        pads=[a.begin for a in rows] + [a.end for a in rows],
    )  # fmt: skip
    ops.append(conv)
    squeezed(conv.results[0], ops)
    return ops


def pool1d_as_pool2d(op: AvgPoolOp | MaxPoolOp) -> list[Operation] | None:
    """The ops that compute a 1-D pooling ``op`` as a 2-D one with H = 1 (None: not a
    static 1-D pooling)."""
    x = static_type(op.input)
    if x is None or x.rank != 3:
        return None
    kernel = [int(k) for k in op.attr("kernel_shape")]  # type: ignore[union-attr]
    (axis,) = window(type(op), op.properties, [int(x.origin_shape[2])], kernel)
    rows = (ROW_AXIS, axis)
    ops: list[Operation] = []
    extra = (
        {"count_include_pad": op.attr("count_include_pad")}
        if isinstance(op, AvgPoolOp)
        else {"storage_order": op.attr("storage_order")}
    )
    pool = type(op).make(
        as_rows(op.input, ops), kernel_shape=[1, *kernel], ceil_mode=op.attr("ceil_mode"),
        strides=[a.stride for a in rows], dilations=[a.dilation for a in rows],
        pads=[a.begin for a in rows] + [a.end for a in rows], **extra,
    )  # fmt: skip
    ops.append(pool)
    squeezed(pool.results[0], ops)
    return ops


@dataclass
class ConvForm(RewritePattern):
    """Rewrite a 1-D convolution, a conv_transpose or an STFT into conv2d, a 1-D pooling
    into a 2-D one, a DFT into a matmul, a strided one-channel conv2d over its hops (counted
    in ``stats``)."""

    stats: PassStatistics

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, ConvOp):
            ops, rule = conv1d_as_conv2d(op), "conv1d-as-conv2d"
        elif isinstance(op, AvgPoolOp | MaxPoolOp):
            ops, rule = pool1d_as_pool2d(op), "pool1d-as-pool2d"
        elif isinstance(op, ConvTransposeOp):
            ops, rule = transposed_as_conv2d(op), "conv-transpose-as-conv2d"
        elif isinstance(op, STFTOp):
            ops, rule = stft_as_conv2d(op), "stft-as-conv2d"
        elif isinstance(op, DFTOp):
            ops, rule = dft_as_matmul(op), "dft-as-matmul"
        elif isinstance(op, Conv2dOp):
            ops, rule = strided_conv_over_hops(op), "strided-signal-conv-over-hops"
        else:
            return
        if ops is None or not replace_if_typed(rewriter, op, ops):
            return
        self.stats.add(rule)


@register_pass
@dataclass(frozen=True)
class ConvFormsPass(ModulePass):
    """Rewrite 1-D convolutions, conv_transposes and STFTs into conv2d (the cube's one
    convolution), DFTs into matmuls; then take the elementwise ops reading a 1-D
    convolution's squeeze onto its conv2d result and drop the squeeze / unsqueeze pairs
    between two 1-D convolutions (``elementwise-before-movement``,
    ``squeeze-unsqueeze-inverse``)."""

    name = PASS_NAME

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        walker = PatternRewriteWalker(Located(GreedyRewritePatternApplier([ConvForm(stats)])))
        walker.rewrite_module(op)
        if "conv1d-as-conv2d" not in stats and "pool1d-as-pool2d" not in stats:
            return
        views: list[RewritePattern] = [
            ElementwiseBeforeSqueeze(stats),
            SqueezeUnsqueezeInverse(stats),
        ]
        PatternRewriteWalker(Located(GreedyRewritePatternApplier(views))).rewrite_module(op)
