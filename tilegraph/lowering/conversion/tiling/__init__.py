"""``tile-kernels{platform=... precision=...}``: macro kernels become loops of tile ops.

Each kernel that ``lower-graph-to-kernels`` marked ``cube`` or ``vector`` is rewritten by
its strategy — :mod:`.cube` (convolution, 3-D convolution, matmul, gemm with fused
epilogues),
:mod:`.elementwise` (elementwise / broadcast chains), :mod:`.data_movement` (slice, split,
pad, expand, tile as DMA; a split is one kernel with an output per part), :mod:`.gather`
(rows by index: scalar reads of the indices, a DMA per row; rows under 32 B through UB,
:mod:`.gather_ub`; through reshape-like views, :mod:`.gather_views`), :mod:`.group_norm`
(whole groups by flat copies, layer norm's program), :mod:`.resize` (nearest
resize: DMA windows and an index-table gather), :mod:`.resize_taps` (linear and cubic
resize: weighted taps along rows, then columns), :mod:`.scan` (cumulative sum / product
with a carry between tiles), :mod:`.axis_select` (arg_max / arg_min, top_k with two
outputs, one_hot), :mod:`.recurrent` (RNN / GRU / LSTM: the steps of cube gate matmuls
and vector cells in one kernel), :mod:`.attention` (a claimed attention group: the flash
mix kernel with a K / V loop) and the others
chosen by the table of :mod:`.strategies` — into ``scf.for`` loops over tiles of
DMA, cube and vector ops on buffers in L1, L0A, L0B, L0C and UB, sized for the preset.
Host kernels keep their macro body (run by the reference kernels). The preset and precision
are the module's ``tilegraph.target`` (:mod:`tilegraph.target`; the options set it where
it has none; buffer verifiers check capacities against it) and every kernel
its tile count as ``tile.tiles``.

:func:`classify_kernel` is the same strategies run in dry-run mode: it tells
``lower-graph-to-kernels`` which unit a kernel runs on, or why it stays on the host.

On a decoupled preset (``HardwareModel.coupled`` False, e.g. 910B) a cube kernel whose
epilogue needs the vector unit becomes a *mix kernel*: an AIC and an AIV function over a GM
workspace, launched together (:mod:`.mix`); ND -> FRACTAL_NZ kernels run on UB there
(:mod:`.transdata`), where a vector core's buffers are.

Statistics: ``cube-kernels``, ``vector-kernels``, ``host-kernels``, ``mix-kernels``,
``tiles``, and ``host.<reason>`` per reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block
from xdsl.passes import ModulePass

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.provenance import locate
from tilegraph.dialects.graph.quantized_recurrent import (
    DynamicQuantizeLSTMOp,
    DynamicQuantizeLSTMStepsOp,
)
from tilegraph.dialects.graph.recurrent import RecurrentOp
from tilegraph.dialects.tile import LaunchOp
from tilegraph.hardware import HardwareModel, hardware_preset
from tilegraph.lowering.analysis.barrier_workspace import (
    allocate_launch_workspaces,
    attach_barrier_workspace,
)
from tilegraph.lowering.analysis.kernel_attrs import (
    BLOCKS_ATTR,
    HOST_REASON_ATTR,
    KERNEL_ATTR,
    OPS_ATTR,
    TILES_ATTR,
    host_ops,
    kernel_unit,
)
from tilegraph.lowering.analysis.mix_workspace import workspace_per_group
from tilegraph.lowering.analysis.target_rules import verify_target
from tilegraph.lowering.analysis.tuning_params import TilingParam, kernel_params
from tilegraph.lowering.conversion.kernel_body import KernelBody, read_kernel_body
from tilegraph.lowering.conversion.tiling.attention import (
    emit_attention_kernel,
    is_attention_kernel,
)
from tilegraph.lowering.conversion.tiling.attention_coupled import emit_coupled_attention_kernel
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import emit_cube_kernel
from tilegraph.lowering.conversion.tiling.elementwise import emit_vector_kernel
from tilegraph.lowering.conversion.tiling.matmul_block import matmul_base_block, parse_base_block
from tilegraph.lowering.conversion.tiling.mix import (
    EXPLICIT_ATTR,
    needs_split,
    relaunch_mix,
    split_mix_kernel,
)
from tilegraph.lowering.conversion.tiling.quantized_recurrent_kernel import (
    emit_quantized_recurrent_kernel,
)
from tilegraph.lowering.conversion.tiling.recurrent import (
    QUANTIZED_LSTM_HOST_REASON,
    emit_recurrent_kernel,
)
from tilegraph.lowering.conversion.tiling.strategies import Emit, vector_strategy
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import PassStatistics, start_pass
from tilegraph.target import PRECISIONS, pin_target


def _is_cube(body: KernelBody) -> bool:
    return any(isinstance(op, GraphOp) and op.FACTS.heavy for op in body.ops)


def _vector_strategy(body: KernelBody) -> Emit:
    emit = vector_strategy(body)
    if emit is not None:
        return emit
    return emit_elementwise_chain


def emit_elementwise_chain(body: KernelBody, b: KernelBuilder) -> str | None:
    """The elementwise chain's strategy, in the UB budget the builder leaves it."""
    return emit_vector_kernel(body, b, b.ub_budget())


@dataclass(frozen=True)
class KernelVerdict:
    """What the strategies say of a macro kernel: the unit that runs it, why it stays on
    the host (None when a strategy takes it) and the strategy that was asked, named by its
    module (``elementwise``, ``reduction``, ``cube``, ``attention``, ...): the one whose
    refusal ``reason`` is."""

    unit: str
    reason: str | None
    strategy: str


def _strategy_name(emit: Emit) -> str:
    if emit is emit_elementwise_chain:
        return "elementwise"
    return emit.__module__.rsplit(".", 1)[-1]


def _emit(body: KernelBody, b: KernelBuilder) -> KernelVerdict:
    """The unit, the reason the kernel must stay on the host (or None), the strategy."""
    if len(body.ops) == 1 and isinstance(body.ops[0], RecurrentOp):
        emit, unit = emit_recurrent_kernel, "cube"  # cube gates + vector cells, one kernel
    elif len(body.ops) == 1 and isinstance(body.ops[0], DynamicQuantizeLSTMStepsOp):
        emit, unit = emit_quantized_recurrent_kernel, "cube"  # int8 gate products
    elif any(
        isinstance(op, (DynamicQuantizeLSTMOp, DynamicQuantizeLSTMStepsOp)) for op in body.ops
    ):
        return KernelVerdict("host", QUANTIZED_LSTM_HOST_REASON, "quantized_recurrent_kernel")
    elif is_attention_kernel(body):  # a claimed attention group: the flash kernel
        coupled = b.hw.coupled  # one in-core kernel, else the mix kernel
        emit, unit = (emit_coupled_attention_kernel if coupled else emit_attention_kernel), "cube"
    elif _is_cube(body):
        emit, unit = emit_cube_kernel, "cube"
    else:
        emit, unit = _vector_strategy(body), "vector"
    reason = emit(body, b)
    return KernelVerdict(unit if reason is None else "host", reason, _strategy_name(emit))


def _where(fn: func.FuncOp) -> str:
    return f"kernel @{fn.sym_name.data}"


def classify_kernel(
    fn: func.FuncOp, hw: HardwareModel | None = None, precision: str = "origin"
) -> tuple[str, str | None]:
    """The unit that runs a macro kernel ("cube", "vector", "host") and, for host, why
    (with the kernel's ``tile.params``: a chosen point that does not fit is a reason)."""
    verdict = kernel_verdict(fn, hw, precision)
    return verdict.unit, verdict.reason


def kernel_verdict(
    fn: func.FuncOp, hw: HardwareModel | None = None, precision: str = "origin"
) -> KernelVerdict:
    """:func:`classify_kernel`'s verdict with the strategy that gave it (for remarks)."""
    body = read_kernel_body(fn)
    builder = KernelBuilder(
        Block(), hw or hardware_preset(), dry_run=True, precision=precision,
        params=kernel_params(fn), where=_where(fn),
    )  # fmt: skip
    return _emit(body, builder)


def tiling_space(
    fn: func.FuncOp, hw: HardwareModel, precision: str = "origin"
) -> list[TilingParam]:
    """The tiling parameters a macro kernel's strategy declares (see
    :mod:`tilegraph.lowering.analysis.tuning_params`), found by lowering a copy of it at
    its recorded point (defaults where none); empty for a host kernel."""
    return tiled_copy(fn, hw, precision)[1]


def tiled_copy(
    fn: func.FuncOp, hw: HardwareModel, precision: str = "origin"
) -> tuple[ModuleOp, list[TilingParam]]:
    """A module holding a copy of macro kernel ``fn`` tiled at its recorded point as
    ``tile-kernels`` tiles it (its attributes set; its AIC and AIV parts on a decoupled
    preset when it needs both), and the parameters its strategy declared. A kernel that
    stays on the host is copied as it is (no parameters)."""
    copy = fn.clone()
    module = ModuleOp([copy])
    space: list[TilingParam] = []
    unit, reason, tiles = tile_kernel(copy, hw, precision, space)
    if reason is None:
        copy.attributes[KERNEL_ATTR] = StringAttr(unit)
        copy.attributes[TILES_ATTR] = IntegerAttr(tiles, i64)
        if not hw.coupled and unit == "cube" and needs_split(copy):
            split_mix_kernel(copy)
    return module, space


def tile_kernel(
    fn: func.FuncOp,
    hw: HardwareModel,
    precision: str = "origin",
    space: list[TilingParam] | None = None,
) -> tuple[str, str | None, int]:
    """Replace a macro kernel's body by its tiled loops at the point its ``tile.params``
    chooses; (unit, host reason, tiles). ``space``, when given, receives the parameters
    the strategy declared."""
    body = read_kernel_body(fn)
    unit, reason = classify_kernel(fn, hw, precision)
    if reason is not None:
        return unit, reason, 0
    staging = Block()
    builder = KernelBuilder(
        staging, hw, precision=precision, params=kernel_params(fn), where=_where(fn)
    )
    verdict = _emit(body, builder)
    assert verdict.reason is None, verdict.reason
    unit = verdict.unit
    if space is not None:
        space.extend(builder.space.values())
    builder.finish()
    if builder.blocks > 1:
        fn.attributes[BLOCKS_ATTR] = IntegerAttr(builder.blocks, i64)
    staging.add_op(func.ReturnOp())
    locate(staging.ops, fn.location)  # every tile op: the graph op(s) the kernel implements
    block = fn.body.block
    for old in reversed(list(block.ops)):
        old.detach()
        old.erase(safe_erase=False)
    for new in list(staging.ops):
        new.detach()
        block.add_op(new)
    return unit, None, builder.tiles


def _launch_blocks(module: ModuleOp, fn: func.FuncOp) -> int:
    """The blocks a kernel its strategy shared over the cores itself (:data:`BLOCKS_ATTR`)
    runs: every launch of it gets them (1 for any other kernel)."""
    found = fn.attributes.get(BLOCKS_ATTR)
    if not isinstance(found, IntegerAttr):
        return 1
    blocks = found.value.data
    for launch in host_ops(module):
        if isinstance(launch, LaunchOp) and launch.callee.string_value() == fn.sym_name.data:
            launch.blocks = IntegerAttr(blocks, i64)
    return blocks


@register_pass
@dataclass(frozen=True)
class TileKernelsPass(ModulePass):
    """Rewrite cube and vector kernels into scf.for loops of tile ops sized for a preset."""

    name = "tile-kernels"

    platform: str = ""
    """Preset name; empty: the module's target (:mod:`tilegraph.target`). Given, it sets
    the module's target where it has none and must agree with it otherwise."""
    precision: str = ""
    """A precision value (:data:`tilegraph.target.PRECISIONS`): its ``cube`` rounding
    ("fp16" / "bf16", ``allow_fp32_to_fp16`` / ``allow_fp32_to_bf16``: the cube's inputs
    rounded on the way in, fp32 accumulation); empty: the module's target's (default
    "origin")."""
    base_block: str = ""
    """Matmul base block "baseM,baseN,baseK" in elements (e.g. "128,256,64"); empty: chosen
    from the preset (see :mod:`.matmul`)."""

    def __post_init__(self) -> None:
        if self.platform:
            hardware_preset(self.platform)
        parse_base_block(self.base_block)
        if self.precision and self.precision not in PRECISIONS:
            raise ValueError(
                f"tile-kernels: precision must be one of {', '.join(PRECISIONS)}, "
                f"got {self.precision!r}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        target = pin_target(op, f"pass '{self.name}'", self.platform, self.precision)
        if not self.precision:  # the precision used is pinned too, as the platform is
            target = pin_target(op, f"pass '{self.name}'", precision=target.precision)
        with matmul_base_block(parse_base_block(self.base_block)):
            self._tile_all(op, target.hw, target.precision, stats)
        verify_target(op)  # what the tiling made runs where the preset's cores have it

    def _tile_all(
        self, op: ModuleOp, hw: HardwareModel, precision: str, stats: PassStatistics
    ) -> None:
        for fn in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            unit = kernel_unit(fn)
            if unit is None or TILES_ATTR in fn.attributes:
                continue
            if unit == "host":
                stats.add("host-kernels")
                continue
            ops = [o.name for o in read_kernel_body(fn).ops]
            new_unit, reason, tiles = tile_kernel(fn, hw, precision)
            if reason is not None:
                fn.attributes[KERNEL_ATTR] = StringAttr("host")
                fn.attributes[HOST_REASON_ATTR] = StringAttr(reason)
                stats.add("host-kernels")
                continue
            fn.attributes[KERNEL_ATTR] = StringAttr(new_unit)
            fn.attributes[TILES_ATTR] = IntegerAttr(tiles, i64)
            fn.attributes[OPS_ATTR] = StringAttr(",".join(ops))
            stats.add(f"{new_unit}-kernels")
            stats.add("tiles", tiles)
            blocks = _launch_blocks(op, fn)
            if attach_barrier_workspace(op, fn, blocks):  # before a mix split: not last
                stats.add("barrier-workspaces")
            elif EXPLICIT_ATTR not in fn.attributes:
                # a strategy's own workspace (a mix one's: below, after it; an explicit
                # mix kernel's own workspace is the one the split allocates)
                allocate_launch_workspaces(op, fn)
            if not hw.coupled and new_unit == "cube" and needs_split(fn):
                name = fn.sym_name.data
                aic, aiv, ws_type = split_mix_kernel(fn)
                relaunch_mix(
                    list(host_ops(op)), name, aic.sym_name.data, aiv, ws_type, hw.aiv_per_aic,
                )  # fmt: skip
                stats.add("mix-kernels")
                if blocks > 1:  # the core groups run at once: a workspace region each
                    name = aic.sym_name.data
                    launches = [
                        o
                        for o in host_ops(op)
                        if isinstance(o, LaunchOp) and o.callee.string_value() == name
                    ]
                    workspace_per_group(aic, aiv, launches, blocks)
