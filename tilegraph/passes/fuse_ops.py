"""``fuse-ops{platform=... max-ops=64 ub-percent=100}``: group ops into fused kernels.

Each group becomes one ``graph.fused`` op (:mod:`tilegraph.dialects.graph.fused`) whose body
holds the grouped ops; a lone op stays as it is (it is its own kernel).

**Legality** follows TVM's pattern-kind lattice (``FusionKind`` in each op's facts):

* an *anchor* — OUT_ELEMWISE_FUSABLE (conv, matmul, gemm, pooling) or COMM_REDUCE — takes
  at most one per group; what follows it in the group (its *epilogue*) is ELEMWISE or
  BROADCAST ops and ``layout.trans_data`` on the anchor's result: each epilogue op is fed
  by the anchor through the group (its other operands come from outside the group, read
  tile by tile from global memory; a side branch computed in the kernel has no pipe to run
  on between the cube's tiles);
* what feeds an OUT_ELEMWISE_FUSABLE anchor inside the group (its *prologue*) is only
  ``layout.trans_data`` (the conversion happens in the DMA on the way in); a COMM_REDUCE
  anchor also takes ELEMWISE / BROADCAST / INJECTIVE prologues;
* without an anchor, ELEMWISE, BROADCAST and INJECTIVE ops chain, except that a *shape
  op* (an INJECTIVE op other than ``layout.trans_data``: reshape, transpose, slice, ...) and
  an ELEMWISE / BROADCAST op never share an anchor-less group: no strategy runs such a mix
  as one kernel (a vector chain computes elementwise tiles, a reshape or transpose kernel
  moves bytes), so the group would be split into a kernel per op, and the elementwise ops
  would be lost to the epilogue of the matmul that feeds them (BERT's bias add between the
  Q projection and its head split); a same-rank expand (BROADCAST) still joins a group of
  movement ops only (slice, split, pad, tile, concat, reshapes), which the movement-chain
  kernel runs as one (:mod:`tilegraph.lowering.conversion.tiling.movement_maps`), and such a
  group's UB working set is one streamed box (no intermediate is held);
* a chain of view ops — reshape, flatten, squeeze, unsqueeze, transpose, a static forward
  slice — from a tensor in global memory to an elementwise operand joins the elementwise
  group that reads it as no work (an *input view*,
  :func:`~tilegraph.passes.fuse_legality.joins_as_input_view`): every reader of each view
  op is in the group, the chain is a strided view of the tensor that repeats no element
  and keeps its rows contiguous (:mod:`tilegraph.lowering.analysis.elementwise_views`),
  and the vector kernel loads the operand's tiles through that view (Mamba-2's ``dt``
  sliced out of its projection and unsqueezed before ``softplus(dt + b)``, a head split
  before a gate, DAB-DETR's box coordinates cut out of ``[B, Q, 4]``); a reader may
  broadcast the view like any input read from GM. The op computing the chain's tensor
  stays out of the group (the view addresses its result in GM), and so does a transpose
  of the last axis (one element per burst: the transpose kernel turns it on the vector
  unit). Likewise an elementwise op joins the group of the reshapes and transposes of its
  result (an *output view*, a head merge after a gate): the kernel writes its tiles
  through a view of their output. No view joins a group whose members read an anchor's
  result (the anchor's epilogue, which reads no views, may still take them);
* likewise a conversion and a shape op share an anchor-less group only as the reshape
  kernel runs them (NC1HWC0 -> NCHW, then reshapes): a matmul's FRACTAL_NZ -> ND result
  conversion belongs to the matmul (fixpipe converts on the way out), an ND -> FRACTAL_NZ
  one to the matmul it feeds (``nd2nz`` on the way in);
* a cube anchor joins no group holding a conversion *into* FRACTAL_NZ: the matmul's
  epilogue converts its result out of NZ once (fixpipe), never back (that conversion is
  the next matmul's prologue);
* a reshape / transpose chain that only re-indexes a matmul operand or result (attention's
  head split and merge, :mod:`tilegraph.lowering.analysis.operand_views`) joins that
  matmul's group: as the operand's prologue, or as the tail of the result's epilogue
  (with the FRACTAL_NZ -> ND conversion before it); the matmul's DMAs address the tensor
  through a strided view instead of a kernel moving its bytes (``views-absorbed``). A
  chain between two matmuls (the merge feeding the output projection) goes with the
  matmul that writes it;
* when that result chain only merges / splits leading axes of the row-major result
  (GPT-2's addmm ``[B·S, N] -> [B, S, N]``), the elementwise ops computed from it (the
  residual add, the GELU chain) join the matmul's epilogue across it: the matmul's 2-D
  output tile is a tile of the reshaped tensor, and their other operands are read
  re-indexed to its rows (:mod:`tilegraph.lowering.analysis.shared_views`);
* a conversion between NCDHW and NDC1HWC0 (around a 3-D convolution) stays alone: no
  strategy converts those on the way in or out of another op's tiles (a 3-D convolution
  reads and writes NDC1HWC0 planes, its ReLU still joins it), so it runs as a kernel of its
  own;
* OPAQUE ops stay alone, except that a normalisation whose facts say so (LayerNorm, RMS
  norm, Softmax, LogSoftmax: OpFacts ``elementwise_tail``) takes a short elementwise chain
  of its result and one-element constants as its kernel's last steps
  (:func:`~tilegraph.passes.fuse_legality.normalisation_tail`): a per-tensor QuantizeLinear
  (constant scale and zero point, to int8 / uint8) — the kernel writes the int8 tensor, as
  GE's AMCT-quantised LayerNorm / Softmax kernels do, and no quantise kernel reads the
  float result back (a QDQ transformer's int8 path) — or torch's SDPA NaN guard
  ``where(isnan(p), 0, p)`` after a softmax (every Hugging Face export);
* an op whose result an elementwise user broadcasts to a larger shape does not join that
  user's group (the group's tiles are its elementwise results'; a broadcast operand is read
  whole from global memory) — unless it is an elementwise op on one-element tensors only
  (a *scalar program*, :mod:`tilegraph.passes.fuse_scalars`: a dynamically quantised
  convolution's zero point cast to int32, its scale product) joining a group without an
  anchor, or an anchored group's epilogue (placed right before the member that reads it):
  the vector code computes it as cheaply as it would read it. A scalar program read by
  several elementwise ops is first copied once per user (``scalar-programs-cloned``).

Before the groups grow, a block is prepared (:mod:`tilegraph.passes.fuse_prepare`). First,
the elementwise ops the format engine left in FRACTAL_NZ on a matmul's result (a pre-norm
layer's residual adds, LLaMA's gate product, T5's position-bias add) move to ND, so that
they run in the matmul's epilogue (``epilogues-to-nd``,
:mod:`tilegraph.passes.fuse_epilogue_formats`).

A conversion whose every user is a cube op (the ND -> FRACTAL_NZ of a LayerNorm's output
that feeds BERT's Q, K and V projections) is first cloned once per user, so that each
matmul takes its own copy as prologue (``nd2nz`` on the way in, as GE's matmuls read ND)
instead of the conversion running as a kernel of its own (``conversions-cloned``); so is
one into NC1HWC0 read by convolutions and NC1HWC0 concats (YOLOv8's C2f split half, which
feeds the bottleneck and the concat: the concat's region loads it through its own copy).

A static split whose every output is a view operand of a matmul (GPT-2's Q, K, V cut out of
c_attn's ``[B, S, 3N]`` result) is likewise cloned once per matmul reading it: each output
is an offset view of the split's input, so each matmul takes its copy as part of its
operands' view chains and the split runs no kernel (``splits-cloned``,
:mod:`tilegraph.lowering.analysis.shared_views`).

A static split of a row-major tensor whose outputs are all read by one elementwise group
(Phi-3's ``[gate | up]`` projection split before ``SiLU(gate) · up``, a GLU's halves) joins
that group: its outputs are offset views of its input, which the vector kernel reads at
their offsets, so the split moves nothing and is no shape op there
(:func:`~tilegraph.passes.fuse_legality.is_view_split`); the op that computes the split's
input stays out of the group (the views address its result in GM).

A view op (reshape, transpose, ...) read by several matmuls as (part of) their operands
(SqueezeBERT's group split of a LayerNorm output, read by its Q, K and V products) is cloned
once per reader, so that each matmul claims its own copy as part of its operand's view
chain and no kernel copies the view (``views-cloned``,
:func:`tilegraph.passes.fuse_views.clone_shared_views_into_matmuls`; undone when a copy
would not be claimed).

A producer joins a group only when every user of its results is in the group: no work is
duplicated, each group has one root whose results leave it, and no cycle can form (any path
leaving the group would have to return into an ancestor of the root). ``layout.trans_data``
counts as INJECTIVE: absorbed into a group it moves no bytes of its own
(``transdata-absorbed``).

A shape query (OpFacts ``shape_only``: Shape, Size) reads no data: it is no such user when
a result of the group's root has the queried value's origin shape for certain (reached
from it through conversions, which keep the origin shape even where it is unknown, or of
the same dims, all known) and the query comes after the root; it then reads that result
(``shape-queries-redirected``, :func:`~tilegraph.passes.fuse_legality.shape_twin`).
Paddle's exports query the shape of a convolution's result for a resize's sizes while its
NC1HWC0 -> NCHW conversion feeds the resize: the conversion still joins the convolution's
epilogue. A model compiled for its inputs has such queries folded before its layout is
planned; they remain where dims are unknown (``tilegraph-opt`` on an unbound export).

**Choice** by cost: groups grow from the consumer end (reverse dataflow order); among the
producers that may join, the one whose result is largest joins first — it saves writing
and re-reading that tensor in global memory (XLA priority fusion, Inductor's score). A
producer joins only if the group's UB working set still fits the preset's UB. The working
set models the vector part of the kernel streaming tiles through UB: every tensor it reads
from or writes to global memory holds two tile buffers (ping-pong), and the intermediates
hold one each while live; a tile is the tensor itself when smaller than
:func:`vector_tile_bytes`. A cube anchor (conv, matmul) runs on L0/L1, and so do the
conversions that load its operands; its result tile is an input of the vector part.
``max-ops`` bounds a group's size; ``ub-percent`` lowers the UB budget of the working set
(a graph-level choice ``tilegraph-tune`` searches).

Statistics: ``groups``, ``fused-ops``, ``largest-group``, ``transdata-absorbed``,
``bytes-saved`` (global-memory traffic removed), ``rejected-working-set``,
``epilogues-to-nd``, ``conversions-cloned``, ``splits-cloned``, ``views-cloned``,
``scalar-programs-cloned``, ``shape-queries-redirected``, ``views-absorbed``,
``input-views-absorbed``, ``score-bias-split``, ``bias-gathers-joined``, and the attention,
rotary and several-output claims' (below).

**Attention** (every preset: the mix kernel on a decoupled one, the in-core kernel on a
coupled one): Q·Kᵀ's group, the softmax and ·V's group are claimed as one group when the
flash kernel takes them (:mod:`tilegraph.passes.fuse_attention`:
``attention-claimed``, else ``attention-kept.<reason>``). An attention whose score chain
grew into one group with the computation of its bias (DeBERTa-v2's position terms' sum) has
that group split first, the chain joining Q·Kᵀ's group
(:mod:`tilegraph.passes.fuse_score_bias`: ``score-bias-split``). Before the groups grow, a Q, K
or V that a product writes straight in FRACTAL_NZ (no view chain between them) is
converted to ND after the product (its fixpipe, claimed as its epilogue) and back before
the attention, which the flash kernel reads ND only
(``attention-operands-to-nd``).

**Rotary embeddings**: a ``graph.apply_rotary`` grows no group, but the head split that makes
its x (a reshape / transpose chain that is a view of a tensor) joins its kernel as a view
(:mod:`tilegraph.passes.fuse_rotary_views`: ``rotary-views-claimed``), with the rotary's
copy of a split before it (Phi-3's and Falcon's q and k pieces of the fused projection,
cloned by ``splits-cloned`` as for a matmul); so does a scale of its result after it (a
multiply or division by a one-element constant: ``rotary-tails-claimed``).

**Several outputs**: an anchor-less elementwise group (or a lone elementwise op) merges
into a later one (or a lone elementwise op) that reads its result when the shapes agree
and no op outside them that reads that result before the later group's root leads back
into them (such readers move after it) — one vector kernel writing each output (an LSTM
cell's new ``c``, ``h`` and their masked copies, Mamba-2's ``dt`` and ``dt·A``, YOLOv8's
box centre and size; :mod:`tilegraph.passes.fuse_outputs`: ``output-groups-merged``,
``output-readers-moved``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from tilegraph.dialects.layout import TransDataOp
from tilegraph.hardware import HardwareModel, hardware_preset
from tilegraph.passes.fuse_attention import (
    COUPLED_ATTENTION,
    attention_claims,
    attention_operands_to_nd,
)
from tilegraph.passes.fuse_grow import Fuser, tensor_bytes
from tilegraph.passes.fuse_legality import Group, leaving_values, redirect_shape_queries
from tilegraph.passes.fuse_materialize import materialize
from tilegraph.passes.fuse_outputs import merge_output_groups
from tilegraph.passes.fuse_prepare import PREPARATIONS
from tilegraph.passes.fuse_rotary_views import rotary_claims
from tilegraph.passes.fuse_score_bias import split_scores_bias
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import PassStatistics, start_pass
from tilegraph.target import pin_target


def _claim_attention(
    groups: list[Group], block: Block, hw: HardwareModel, stats: PassStatistics, coupled: str
) -> list[Group]:
    """Merge each claimed attention pattern's two groups and its softmax into one group
    (:mod:`tilegraph.passes.fuse_attention`), in place of the ·V group."""
    claims, kept = attention_claims([g.members for g in groups], list(block.ops), hw, coupled)
    for reason in kept:
        stats.add(f"attention-kept.{reason}")
    merged: dict[int, Group] = {}
    dropped: set[int] = set()
    for claim in claims:
        scores, output = groups[claim.scores], groups[claim.output]
        probs = {claim.softmax} if claim.probs is None else groups[claim.probs].members
        group = Group(output.root, scores.members | output.members | probs)
        group.anchor = output.anchor
        merged[claim.output] = group
        dropped.add(claim.scores)
        if claim.probs is not None:  # the softmax with the NaN guard as its tail
            dropped.add(claim.probs)
        stats.add("attention-claimed")
    return [merged.get(i, g) for i, g in enumerate(groups) if i not in dropped]


def _claim_rotary_views(
    fuser: Fuser, groups: list[Group], block: Block, stats: PassStatistics
) -> list[Group]:
    """Give each rotary op whose x is a view of a tensor the view's ops as its group
    (:mod:`tilegraph.passes.fuse_rotary_views`), in place of the group they formed."""
    claims = rotary_claims([g.members for g in groups], list(block.ops))
    found: list[Group | None] = list(groups)
    for claim in claims:  # replace the claimed ops' groups: the first, the others dropped
        for i in claim.groups:
            found[i] = Group(claim.root, claim.members) if i == claim.groups[0] else None
    kept = [g for g in found if g is not None]
    for claim in claims:  # then a group for each claim whose ops were in none
        if not claim.groups:
            at = fuser.position[claim.root]
            later = [i for i, g in enumerate(kept) if fuser.position[g.root] > at]
            kept.insert(later[0] if later else len(kept), Group(claim.root, claim.members))
        if claim.views:
            stats.add("rotary-views-claimed")
        if claim.tail:
            stats.add("rotary-tails-claimed")
    return kept


def _functions(module: ModuleOp) -> Iterable[func.FuncOp]:
    return (op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks)


@register_pass
@dataclass(frozen=True)
class FuseOpsPass(ModulePass):
    """Group ops into fused kernels (``graph.fused``) by TVM's kinds, bytes saved and UB.

    Only the function's top-level ops are grouped; control-flow bodies are skipped (they
    run as host code, unoptimised).
    """

    name = "fuse-ops"

    platform: str = ""
    """Preset name; empty: the module's target (:mod:`tilegraph.target`)."""
    max_ops: int = 64
    ub_percent: int = 100
    """The UB budget of a group's working set, in percent of the preset's UB."""
    coupled_attention: str = "ge"
    """On a coupled preset: claim an attention where GE fuses one ("ge") or wherever the
    in-core flash kernel takes it ("always"; :mod:`tilegraph.passes.fuse_attention`)."""

    def __post_init__(self) -> None:
        if self.platform:
            hardware_preset(self.platform)
        if self.max_ops < 1:
            raise ValueError(f"fuse-ops: max-ops must be at least 1, got {self.max_ops}")
        if not 1 <= self.ub_percent <= 100:
            raise ValueError(f"fuse-ops: ub-percent must be in 1..100, got {self.ub_percent}")
        if self.coupled_attention not in COUPLED_ATTENTION:
            raise ValueError(
                f"fuse-ops: coupled-attention must be one of {', '.join(COUPLED_ATTENTION)}, "
                f"got '{self.coupled_attention}'"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hw = pin_target(op, f"pass '{self.name}'", self.platform).hw
        fuser = Fuser(hw, self.max_ops, stats, hw.ub_bytes * self.ub_percent // 100)
        index = 0
        for fn in _functions(op):
            block = fn.body.blocks[0]
            for statistic, prepare in PREPARATIONS:
                changed = prepare(block)
                if changed:
                    stats.add(statistic, changed)
            coupled = self.coupled_attention
            changed = attention_operands_to_nd(block, hw, coupled)
            if changed:
                stats.add("attention-operands-to-nd", changed)
            grown, split, joined = split_scores_bias(
                fuser.fuse_block(block), list(block.ops), hw, coupled
            )
            if split:
                stats.add("score-bias-split", split)
            if joined:
                stats.add("bias-gathers-joined", joined)
            grown = _claim_attention(grown, block, hw, stats, coupled)
            claimed = _claim_rotary_views(fuser, grown, block, stats)
            claimed, merged, moved = merge_output_groups(fuser, claimed)
            if merged:
                stats.add("output-groups-merged", merged)
            if moved:
                stats.add("output-readers-moved", moved)
            for group in claimed:
                redirected = redirect_shape_queries(group.members, group)
                if redirected:
                    stats.add("shape-queries-redirected", redirected)
                members = fuser.member_order(group)
                root_bytes = set(leaving_values(group.root, members))
                saved = sum(
                    2 * (tensor_bytes(r) or 0)
                    for m in members
                    for r in m.results
                    if r not in root_bytes
                )
                materialize(group, members, index)
                index += 1
                stats.add("groups")
                stats.add("fused-ops", len(members))
                stats.maximum("largest-group", len(members))
                stats.add("transdata-absorbed", sum(isinstance(m, TransDataOp) for m in members))
                views = sum(
                    fuser.is_view_member(m, group.members) and not isinstance(m, TransDataOp)
                    for m in members
                )
                if views:
                    stats.add("views-absorbed", views)
                if group.input_views:
                    stats.add("input-views-absorbed", len(group.input_views))
                stats.add("bytes-saved", saved)
