"""Col2Im (``F.fold``) -> a grouped ConvTranspose with one-hot filters.

PyTorch exports ``F.fold`` (opset 18) as Col2Im: the columns ``[N, C·kh·kw, L]`` of a
sliding window summed back into an image ``[N, C, H, W]``. That is a transposed
convolution: view the ``L`` block positions as the window grid ``[Lh, Lw]``, take ``C``
groups of ``kh·kw`` input channels and one output channel each, and give input channel
``c·kh·kw + i·kw + j`` the filter that is 1 at tap ``(i, j)`` and 0 elsewhere; Col2Im's
strides, dilations and pads are the transposed convolution's, and an image a stride leaves
rows over (``(H + pads - d·(k - 1) - 1) mod s``) is its ``output_padding``. The result is
Col2Im's up to the order of the sums where windows overlap; ``conv-forms`` then puts it on
the cube like any ConvTranspose. 2-D only, with constant ``image_shape`` and
``block_shape`` and a static channel count.
"""

from __future__ import annotations

from math import prod

import numpy as np
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.nn import ConvTransposeOp
from tilegraph.dialects.graph.vision_index import Col2ImOp
from tilegraph.dialects.graph.windows import known
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import (
    constant_ints,
    is_float,
    new_constant,
    replace_if_typed,
    reshaped,
)
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule


def one_hot_filters(channels: int, block: tuple[int, int], dtype: np.dtype) -> np.ndarray:
    """``[C·kh·kw, 1, kh, kw]``: input channel ``c·kh·kw + t`` is 1 at tap ``t`` only."""
    taps = prod(block)
    eye = np.eye(taps, dtype=dtype).reshape(taps, 1, *block)
    return np.tile(eye, (channels, 1, 1, 1))


@simplify_rule
class Col2ImAsConvTranspose(SimplifyRule):
    INFO = RuleInfo(
        None,
        "col2im-as-conv-transpose",
        "Col2Im(x [N, C·kh·kw, L], constant [H, W], constant [kh, kw])",
        "ConvTranspose(Reshape(x, [N, C·kh·kw, Lh, Lw]), one-hot filters, group C)",
        "2-D, C static; float; sums of overlapping windows in another order",
        "",
    )
    ROOTS = (Col2ImOp,)

    def rewrite(self, op: Col2ImOp, rewriter: PatternRewriter) -> None:
        image, block = constant_ints(op.image_shape), constant_ints(op.block_shape)
        out = op.output.type
        if image is None or block is None or len(image) != 2 or len(block) != 2:
            return
        if (
            not isinstance(out, TensorType)
            or not is_float(op.input)
            or not known(out.origin_shape[1])
        ):
            return
        axes = Col2ImOp.geometry(op.properties, image, block)
        channels = int(out.origin_shape[1])
        ops: list[Operation] = []
        grid = reshaped(op.input, [0, channels * prod(block), *(int(a.out) for a in axes)], ops)
        dtype = np.dtype(out.dtype.numpy)
        filters = new_constant(one_hot_filters(channels, (block[0], block[1]), dtype))
        spans = [int(a.size) + a.begin + a.end - (int(a.kernel) - 1) * a.dilation - 1 for a in axes]
        transposed = ConvTransposeOp.make(
            grid,
            filters.results[0],
            group=channels,
            kernel_shape=list(block),
            strides=[a.stride for a in axes],
            dilations=[a.dilation for a in axes],
            pads=[a.begin for a in axes] + [a.end for a in axes],
            output_padding=[span % a.stride for span, a in zip(spans, axes, strict=True)],
        )
        ops += [filters, transposed]
        # The convolution's image is NCHW; Col2Im's is ND: a reshape of the same dims (a
        # view) gives its consumers the type they had.
        reshaped(transposed.results[0], [0, 0, 0, 0], ops)
        replace_if_typed(rewriter, op, ops)
