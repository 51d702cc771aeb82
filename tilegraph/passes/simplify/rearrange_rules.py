"""DepthToSpace / SpaceToDepth as the reshape, transpose and reshape they are defined by.

ONNX defines both ops by that very sequence (DepthToSpace DCR: ``[N, C, H, W] -> [N, b, b,
C/b², H, W]``, transpose ``(0, 3, 4, 1, 5, 2)``, ``-> [N, C/b², H·b, W·b]``; CRD and
SpaceToDepth likewise), and GE runs a PixelShuffle as a transpose on the AI core; the
reshapes are views here and the transpose has a tile kernel, where the ops themselves have
none. Exact: data movement only. Taken when C, H and W are static (the reshape targets copy
N with a 0, the other sizes are spelled out).
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tilegraph.dialects.graph.rearrange import DepthToSpaceOp, SpaceToDepthOp
from tilegraph.dialects.graph.shape_ops import TransposeOp
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.simplify.match import replace_if_typed, reshaped
from tilegraph.passes.simplify.rule import RuleInfo, SimplifyRule, simplify_rule

_DEPTH_TO_SPACE = {"DCR": (0, 3, 4, 1, 5, 2), "CRD": (0, 1, 4, 2, 5, 3)}
_SPACE_TO_DEPTH = {"DCR": (0, 3, 5, 1, 2, 4), "CRD": (0, 1, 3, 5, 2, 4)}


def _static_chw(op: DepthToSpaceOp | SpaceToDepthOp) -> tuple[int, int, int] | None:
    t = op.input.type
    if not isinstance(t, TensorType) or t.rank != 4:
        return None
    c, h, w = t.origin_shape[1:]
    if not all(isinstance(d, int) and d >= 0 for d in (c, h, w)):
        return None
    return int(c), int(h), int(w)  # type: ignore[arg-type]


@simplify_rule
class BlockRearrangeAsTranspose(SimplifyRule):
    INFO = RuleInfo(
        None,
        "block-rearrange-as-transpose",
        "DepthToSpace(x, b) | SpaceToDepth(x, b) (DCR or CRD)",
        "Reshape to 6-D, Transpose, Reshape (their ONNX definition)",
        "C, H, W static",
        "GE (PixelShuffle as a transpose)",
    )
    ROOTS = (DepthToSpaceOp, SpaceToDepthOp)

    def rewrite(self, op: DepthToSpaceOp | SpaceToDepthOp, rewriter: PatternRewriter) -> None:
        chw = _static_chw(op)
        if chw is None:
            return
        c, h, w = chw
        b, mode = int(op.attr("blocksize")), str(op.attr("mode"))
        if isinstance(op, DepthToSpaceOp):
            split = (
                [0, b, b, c // (b * b), h, w] if mode == "DCR" else [0, c // (b * b), b, b, h, w]
            )
            perm, joined = _DEPTH_TO_SPACE[mode], [0, c // (b * b), h * b, w * b]
        else:
            split, perm = [0, c, h // b, b, w // b, b], _SPACE_TO_DEPTH[mode]
            joined = [0, c * b * b, h // b, w // b]
        ops: list[Operation] = []
        blocks = reshaped(op.input, split, ops)
        moved = TransposeOp.make(blocks, perm=list(perm))
        ops.append(moved)
        reshaped(moved.results[0], joined, ops)
        replace_if_typed(rewriter, op, ops)
