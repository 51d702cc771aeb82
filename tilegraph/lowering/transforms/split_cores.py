"""``split-cores{cores=0}``: a tiled kernel's parallel loops shared out over the cores.

Ascend runs a kernel as ``n`` blocks, one per core, each computing part of the output. For
every tiled kernel this pass shares out one *work loop* round robin: block ``b`` of ``n``
gets its iterations ``b, b + n, b + 2n, ...`` (so that ragged tails spread)::

    %b = tile.block_idx
    %n = tile.block_num
    %first = lb + b * step
    scf.for %i = %first to %ub step (step * n) {tile.parallel}

The work loop is a ``tile.parallel`` loop with constant bounds nested only in parallel loops
(so that every block may run the loops around it in full), or several such loops nested in
one another, collapsed into one loop over their joint iteration space (the M x N grid of a
matmul: Ascend C's ``usedCoreNum = (M / singleCoreM) * (N / singleCoreN)``; a convolution's
images x output-channel tiles: the batch and N dims of GE's conv block split)::

    scf.for %mn = %c0 to %c640 step %c1 {tile.parallel}   // was %m (32 trips) x %n (20)
      %m = %mn floordiv 20 ;  %n = %mn rem 20

Between two loops of such a nest there may be work that the inner loop's iterations share
(a convolution loads its image into L1 before the loop over output-channel tiles), as long
as it comes before the inner loop and writes no GM: collapsed, each joint iteration does it
again for its own outer index, as each core of GE's split loads the image it works on. The
repeat is paid only where the collapse gives the busiest block less work than any loop alone.

Of the candidates (each parallel loop, and each nested run of parallel loops from
it downwards) the pass takes the one whose busiest block gets the smallest share of the
iterations, ``ceil(trips / cores) / trips``; on a tie the fewest loops, then the outermost.
A 32-trip loop on 20 cores leaves the busiest core 2/32 of the work, the 640-trip grid
32/640: 1.6x less. Collapsing changes no tile and no order of accumulation.

A kernel of several top-level nests that pass nothing to each other through GM (no tile op
reads a GM buffer one of them writes: a data-movement kernel's regions, a concat's inputs,
a resize's row nests) has each nest's work loop shared out on its own, the chosen one and
the heuristic's choice in every other (a nest of one tile, a parallel loop of one trip,
goes to block 0 alone), so no block runs a whole nest that the others repeat (CANN's
Concat tiling, too, divides the whole output over the cores, a core's share running across
inputs: docs/hardware.md, "Data movement over the cores");
``trips`` below is then the most of any nest's.

A kernel its tiling shared over the cores itself (a recurrent layer, ``tile.blocks``: its
``tile.block_idx`` selects each block's columns; ``tile-kernels`` gave its launches that
many blocks and its mix workspace a region per core group) is left alone: it is split.

Every launch of the kernel gets ``blocks = min(cores, trips)``: cube kernels on the preset's
cube cores, vector kernels on its vector cores (910B's AIC / AIV split; a coupled 310P core
counts once). ``cores`` overrides the preset's count (studies of scaling). A kernel with no
such loop keeps one block. Kernels already split are left alone. A mix kernel's AIV part
gets the split its AIC part gets, on the same loops (``tile.loop`` ids), so that core group
``b``'s AIC and AIV visit the same tiles; the launch gets ``aiv_blocks = r * blocks``,
``r`` the AIVs per group ``tile-kernels`` gave it (the preset's
:attr:`~tilegraph.hardware.HardwareModel.aiv_per_aic` — 2 where ``vector_cores >= 2 *
cube_cores``, 910B and the test preset; else 1 — or 1 for an AIV part that does not tell
its AIVs apart, :func:`~tilegraph.dialects.tile.cores.aivs_per_group`), whose
instances read the group index from ``tile.block_idx`` like the AIC's. The groups run at
once, so each gets a region of the mix kernel's GM workspace of its own
(:mod:`tilegraph.lowering.analysis.mix_workspace`: the workspace grows to ``blocks``
regions, every access offset by the group's).

**Tiling parameter** ``split_cores.loops`` (in the kernel's ``tile.params``, see
:mod:`tilegraph.lowering.analysis.tuning_params`): which of the candidates is shared out,
named by the loops' induction variables (``"m+n"``), or ``"none"`` (one block); default the
heuristic's. :func:`split_cores_space` lists it for a tiled kernel.

Statistics: ``split-kernels``, ``collapsed-nests``, ``split-sibling-nests``,
``single-block-kernels``, ``blocks`` (summed over kernels).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil, prod

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, UnitAttr, i64
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tilegraph.dialects.graph.provenance import locate
from tilegraph.dialects.tile import BlockIdxOp, BlockNumOp, LaunchOp, TileOp
from tilegraph.dialects.tile.base import module_preset
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.gm_access import passes_data_through_gm
from tilegraph.lowering.analysis.kernel_attrs import (
    LOOP_ID_ATTR,
    PARALLEL_ATTR,
    TILES_ATTR,
    kernel_unit,
    mix_part,
)
from tilegraph.lowering.analysis.mix_workspace import workspace_per_group
from tilegraph.lowering.analysis.tuning_params import (
    TilingParam,
    checked_choice,
    kernel_params,
)
from tilegraph.passes.registry import register_pass
from tilegraph.passes.statistics import start_pass


def _constant(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def loop_trips(loop: scf.ForOp) -> int | None:
    """Iterations of a loop with constant bounds (None otherwise)."""
    lb, ub, step = (_constant(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0:
        return None
    return len(range(lb, ub, step))


def _parallel_loops(block_owner: Operation) -> list[tuple[scf.ForOp, int]]:
    """Parallel loops with constant bounds reachable through parallel loops only, outermost
    first, with their trip counts."""
    found: list[tuple[scf.ForOp, int]] = []
    for region in block_owner.regions:
        for block in region.blocks:
            for op in block.ops:
                if not isinstance(op, scf.ForOp) or PARALLEL_ATTR not in op.attributes:
                    continue
                trips = loop_trips(op)
                if trips is None:
                    continue
                found.append((op, trips))
                found.extend(_parallel_loops(op))
    return found


def _writes_gm(op: Operation) -> bool:
    return any(isinstance(inner, TileOp) and inner.writes_gm() for inner in op.walk())


def loop_nest(loop: scf.ForOp) -> list[scf.ForOp]:
    """``loop`` and the parallel loops with constant bounds nested in it, outermost first:
    each next loop is the last op of its parent's body, and what comes before it there
    writes no GM (so that running it once per iteration of the inner loop changes nothing
    but the time it takes)."""
    nest = [loop]
    while True:
        body = [op for op in nest[-1].body.block.ops if not isinstance(op, scf.YieldOp)]
        if not body or not isinstance(inner := body[-1], scf.ForOp):
            return nest
        if PARALLEL_ATTR not in inner.attributes or loop_trips(inner) is None or inner.iter_args:
            return nest
        if any(_writes_gm(op) for op in body[:-1]):
            return nest
        nest.append(inner)


def _busiest_share(trips: int, cores: int) -> float:
    return ceil(trips / cores) / trips


def _outermost_loop(owner: Operation, cores: int, itself: bool = False) -> scf.ForOp | None:
    """The outermost candidate loop in ``owner`` (``itself``: ``owner`` too, a loop)
    whose trip count reaches ``cores``, else the one with the most trips (None without
    candidates)."""
    found = _parallel_loops(owner)
    if itself and isinstance(owner, scf.ForOp) and PARALLEL_ATTR in owner.attributes:
        trips = loop_trips(owner)
        found = found if trips is None else [(owner, trips), *found]
    candidates = [(loop, trips) for loop, trips in found if trips > 1]
    if not candidates:
        return None
    for loop, trips in candidates:
        if trips >= cores:
            return loop
    return max(candidates, key=lambda c: c[1])[0]


SPLIT_PARAM = "split_cores.loops"
"""Tiling parameter: the loops shared out over the cores, named by their induction
variables outermost first (``"m+n"``: the M x N grid collapsed), or :data:`NO_SPLIT`."""

NO_SPLIT = "none"
"""``split_cores.loops``: the kernel runs on one block."""


def split_candidates(
    fn: func.FuncOp, cores: int, within: scf.ForOp | None = None
) -> list[tuple[str, list[scf.ForOp], int]]:
    """The work loops ``fn`` could share out over ``cores`` cores, each (name, loops
    outermost first, joint trip count), in the heuristic's order of preference: the
    smallest share of the iterations for the busiest block, then the fewest loops, then
    the outermost (see :func:`choose_split_loop`). Empty without any. ``within``: only
    the loops of that top-level nest (it included).

    The starting point is the outermost loop with enough trips (blocks then repeat the
    least work around it); the nest it belongs to (:func:`loop_nest`) offers the
    alternatives: every run of its loops with more than one trip."""
    start = _outermost_loop(fn if within is None else within, cores, within is not None)
    if start is None:
        return []
    top = start
    while isinstance(parent := top.parent_op(), scf.ForOp) and (
        PARALLEL_ATTR in parent.attributes and loop_trips(parent) is not None
    ):
        if parent.iter_args or loop_nest(parent)[1:2] != [top]:
            break
        top = parent
    nest = loop_nest(top) if not top.iter_args else [top]
    ranked: list[tuple[tuple[float, int, int], list[scf.ForOp], int]] = []
    for first in range(len(nest)):
        for last in range(first + 1, len(nest) + 1):
            trips = prod(loop_trips(loop) or 1 for loop in nest[first:last])
            if trips > 1:
                key = (_busiest_share(trips, cores), last - first, first)
                ranked.append((key, nest[first:last], trips))
    ranked.sort(key=lambda r: r[0])  # stable: equal keys cannot occur (first, last differ)
    names = [_nest_name(loops) for _, loops, _ in ranked]
    unique = [n if names.count(n) == 1 else f"{n}@{i}" for i, n in enumerate(names)]
    return [(name, loops, trips) for name, (_, loops, trips) in zip(unique, ranked, strict=True)]


def _nest_name(loops: list[scf.ForOp]) -> str:
    return "+".join(loop.body.block.args[0].name_hint or "loop" for loop in loops)


def choose_split_loop(fn: func.FuncOp, cores: int) -> tuple[list[scf.ForOp], int] | None:
    """The work loop to share out over ``cores`` cores — one loop, or a nest of
    loops to collapse (outermost first) — with its trip count, or None: the heuristic's
    first of :func:`split_candidates` (the run of loops whose busiest block gets the
    smallest share of the iterations; fewest loops, then outermost, on a tie)."""
    candidates = split_candidates(fn, cores)
    return None if not candidates else (candidates[0][1], candidates[0][2])


def split_param(candidates: list[tuple[str, list[scf.ForOp], int]]) -> TilingParam | None:
    """``split_cores.loops`` over ``candidates`` (None when there are none)."""
    if not candidates:
        return None
    return TilingParam(
        SPLIT_PARAM,
        (*(name for name, _, _ in candidates), NO_SPLIT),
        candidates[0][0],
        "loops shared out over the cores (induction variables, outermost first), or none",
    )


def chosen_split_loop(fn: func.FuncOp, cores: int) -> tuple[list[scf.ForOp], int] | None:
    """:func:`choose_split_loop` at the point the kernel's ``tile.params`` chooses
    (``split_cores.loops``; :class:`TilingParamError` for a name not among the
    candidates)."""
    candidates = split_candidates(fn, cores)
    param = split_param(candidates)
    if param is None:
        return None
    chosen = checked_choice(param, kernel_params(fn), f"kernel @{fn.sym_name.data}")
    found = [(loops, trips) for name, loops, trips in candidates if name == chosen]
    return found[0] if found else None


def kernel_cores(fn: func.FuncOp, hw: HardwareModel, cores: int = 0) -> int:
    """The cores a tiled kernel is shared out over: ``cores`` when given, else the preset's
    cube cores for a cube kernel, its vector cores for a vector kernel."""
    return cores or (hw.cube_cores if kernel_unit(fn) == "cube" else hw.vector_cores)


def split_cores_space(fn: func.FuncOp, hw: HardwareModel) -> list[TilingParam]:
    """The parameters ``split-cores`` reads on tiled kernel ``fn`` (its AIC part for a
    mix kernel; nothing for the AIV part, which follows it)."""
    if kernel_unit(fn) not in ("cube", "vector") or mix_part(fn) == "aiv" or _is_split(fn):
        return []
    cores = kernel_cores(fn, hw)
    param = split_param(split_candidates(fn, cores)) if cores > 1 else None
    return [] if param is None else [param]


def collapse_nest(nest: list[scf.ForOp]) -> scf.ForOp:
    """Replace a nest of constant-bound loops (:func:`loop_nest`) by one ``tile.parallel``
    loop over their joint iterations (row-major: the innermost loop varies fastest); each
    old induction variable is recomputed from the new one with floordiv / rem, and the work
    an outer loop did before its inner loop runs in every joint iteration, in order."""
    outer, innermost = nest[0], nest[-1]
    parent = outer.parent_block()
    assert parent is not None and len(nest) > 1
    trips = [loop_trips(loop) or 1 for loop in nest]

    def index(value: int, into: list[Operation]) -> SSAValue:
        op = arith.ConstantOp(IntegerAttr(value, IndexType()))
        into.append(op)
        return op.result

    before: list[Operation] = []
    lb, ub, step = index(0, before), index(prod(trips), before), index(1, before)
    parent.insert_ops_before(before, outer)
    body = Block(arg_types=[IndexType()])
    joint = body.args[0]
    joint.name_hint = "".join(loop.body.block.args[0].name_hint or "" for loop in nest) or None
    shared: list[Operation] = []  # what the outer loops did before their inner loop
    for loop, inner in zip(nest[:-1], nest[1:], strict=True):
        for op in [
            o for o in loop.body.block.ops if o is not inner and not isinstance(o, scf.YieldOp)
        ]:
            op.detach()
            if isinstance(op, arith.ConstantOp):  # the inner loops' bounds may use them
                body.add_op(op)
            else:
                shared.append(op)
    ops: list[Operation] = []
    rest = joint
    for loop, n in reversed(list(zip(nest, trips, strict=True))):
        if loop is outer:
            position = rest
        else:
            extent = index(n, ops)
            ops.append(arith.RemSIOp(rest, extent))
            position = ops[-1].results[0]
            ops.append(arith.FloorDivSIOp(rest, extent))
            rest = ops[-1].results[0]
        value = position
        if (loop_step := _constant(loop.step)) != 1:
            ops.append(arith.MuliOp(value, loop.step))
            value = ops[-1].results[0]
        if _constant(loop.lb) != 0 or loop_step is None:
            ops.append(arith.AddiOp(loop.lb, value))
            value = ops[-1].results[0]
        iv = loop.body.block.args[0]
        value.name_hint = iv.name_hint
        iv.replace_all_uses_with(value)
    body.add_ops(ops)
    body.add_ops(shared)
    for op in [o for o in innermost.body.block.ops if not isinstance(o, scf.YieldOp)]:
        op.detach()
        body.add_op(op)
    body.add_op(scf.YieldOp())
    collapsed = scf.ForOp(lb, ub, step, [], body)
    collapsed.attributes[PARALLEL_ATTR] = UnitAttr()
    parent.insert_op_before(collapsed, outer)
    outer.detach()
    outer.erase()
    return collapsed


def split_loop(loop: scf.ForOp) -> None:
    """Give block ``b`` of ``n`` the iterations ``lb + b·step, lb + (b + n)·step, ...``."""
    fn = loop.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    assert isinstance(fn, func.FuncOp)
    entry = fn.body.block
    index = next((op for op in entry.ops if isinstance(op, BlockIdxOp)), None)
    count = next((op for op in entry.ops if isinstance(op, BlockNumOp)), None)
    if index is None or count is None:  # the first loop split: read them once, up front
        index, count = BlockIdxOp(), BlockNumOp()
        index.result.name_hint, count.result.name_hint = "block", "blocks"
        anchor = entry.first_op
        assert anchor is not None
        entry.insert_ops_before([index, count], anchor)
    new_ops: list[Operation] = []

    def emit(op: Operation, name: str) -> SSAValue:
        op.results[0].name_hint = name
        new_ops.append(op)
        return op.results[0]

    step, lb = _constant(loop.step), _constant(loop.lb)
    offset = index.result if step == 1 else emit(arith.MuliOp(index.result, loop.step), "offset")
    first = offset if lb == 0 else emit(arith.AddiOp(loop.lb, offset), "first")
    stride = count.result if step == 1 else emit(arith.MuliOp(loop.step, count.result), "stride")
    parent = loop.parent_block()
    assert parent is not None
    if new_ops:
        parent.insert_ops_before(new_ops, loop)
    loop.operands = [first, loop.ub, stride, *loop.iter_args]


def _sibling_splits(
    fn: func.FuncOp, chosen: list[scf.ForOp], cores: int
) -> list[tuple[list[scf.ForOp], int]]:
    """The work loop of each other top-level nest shared out beside ``chosen`` (see
    :func:`sibling_nests`; the heuristic's choice in each), with its trips; a nest that is
    one parallel loop of one trip (a region of a single tile) goes to block 0 alone."""
    found = []
    for nest in sibling_nests(fn, chosen):
        candidates = split_candidates(fn, cores, within=nest)
        if candidates:
            found.append((candidates[0][1], candidates[0][2]))
        elif loop_trips(nest) == 1:  # a nest of one tile: block 0 runs it, no other block
            found.append(([nest], 1))
    return found


def _loop_id(loop: scf.ForOp) -> int | None:
    found = loop.attributes.get(LOOP_ID_ATTR)
    return found.value.data if isinstance(found, IntegerAttr) else None


def matching_nest(kernel: func.FuncOp, nest: list[scf.ForOp]) -> list[scf.ForOp] | None:
    """The loops of ``kernel`` (a mix kernel's AIV part) that come from the same loops of
    the unsplit kernel as ``nest`` (its AIC part's chosen work loops,
    :data:`LOOP_ID_ATTR`), when they form a nest there too; else None (then
    neither part is split: their blocks must visit the same tiles)."""
    ids = [_loop_id(loop) for loop in nest]
    if None in ids:
        return None
    by_id = {_loop_id(o): o for o in kernel.walk() if isinstance(o, scf.ForOp)}
    if any(i not in by_id for i in ids):
        return None
    found = loop_nest(by_id[ids[0]])[: len(ids)]
    return found if [_loop_id(loop) for loop in found] == ids else None


def sibling_nests(fn: func.FuncOp, chosen: list[scf.ForOp]) -> list[scf.ForOp]:
    """The other top-level loops of ``fn`` that may each be shared out over the cores on
    their own, besides the nest holding ``chosen``: every one when no tile op of the
    kernel reads a GM buffer some tile op of it writes (a data-movement kernel's regions,
    a concat's inputs, a resize's row nests: each nest reads inputs and writes its own
    part of the outputs, so no block waits for another's); else none (a kernel that
    passes data between its nests through GM, a reduction's workspace, needs every
    block to have run the nest before)."""
    if passes_data_through_gm(fn):
        return []
    holder = chosen[0]
    while holder.parent_op() is not fn:
        parent = holder.parent_op()
        assert isinstance(parent, scf.ForOp)
        holder = parent
    return [
        op
        for op in fn.body.block.ops
        if isinstance(op, scf.ForOp) and PARALLEL_ATTR in op.attributes and op is not holder
    ]


def _is_split(fn: func.FuncOp) -> bool:
    return any(isinstance(op, BlockIdxOp) for op in fn.walk())


@register_pass
@dataclass(frozen=True)
class SplitCoresPass(ModulePass):
    """Share each tiled kernel's parallel loop out over the preset's cores."""

    name = "split-cores"

    cores: int = 0
    """Cores to use (0: the preset's cube cores for cube kernels, vector cores for vector
    kernels)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stats = start_pass(self.name)
        hw = module_preset(op)
        blocks_of: dict[str, int] = {}
        functions = {f.sym_name.data: f for f in op.ops if isinstance(f, func.FuncOp)}
        partner = {
            launch.callee.string_value(): functions[launch.aiv_callee]
            for launch in op.walk()
            if isinstance(launch, LaunchOp) and launch.aiv_callee in functions
        }
        for fn in functions.values():
            unit = kernel_unit(fn)
            if unit not in ("cube", "vector") or TILES_ATTR not in fn.attributes:
                continue
            if _is_split(fn) or mix_part(fn) == "aiv":
                continue  # a mix kernel's AIV part is split with its AIC part
            cores = kernel_cores(fn, hw, self.cores)
            chosen = chosen_split_loop(fn, cores) if cores > 1 else None
            aiv = partner.get(fn.sym_name.data)
            aiv_nest = None if chosen is None or aiv is None else matching_nest(aiv, chosen[0])
            if chosen is None or (aiv is not None and aiv_nest is None):
                stats.add("single-block-kernels")
                continue
            nest, trips = chosen
            siblings = [] if aiv is not None else _sibling_splits(fn, nest, cores)
            for kernel, loops in ((fn, nest), (aiv, aiv_nest)):
                if kernel is None or loops is None:
                    continue
                if len(loops) > 1:
                    stats.add("collapsed-nests")
                split_loop(collapse_nest(loops) if len(loops) > 1 else loops[0])
                locate(kernel.body.ops, kernel.location)  # the block index arithmetic
            for loops, sibling_trips in siblings:
                stats.add("split-sibling-nests")
                split_loop(collapse_nest(loops) if len(loops) > 1 else loops[0])
                trips = max(trips, sibling_trips)
            locate(fn.body.ops, fn.location)
            blocks_of[fn.sym_name.data] = min(cores, trips)
            stats.add("split-kernels")
            stats.add("blocks", min(cores, trips))
        for launch in op.walk():
            if isinstance(launch, LaunchOp):
                blocks = blocks_of.get(launch.callee.string_value())
                if blocks is not None:
                    # a mix launch keeps the AIVs per group tile-kernels gave it (r, or 1)
                    per_group = launch.aiv_block_count // launch.block_count
                    launch.blocks = IntegerAttr(blocks, i64)
                    if launch.is_mix:  # in groups: the AIVs visit their AIC's iterations
                        launch.aiv_blocks = IntegerAttr(per_group * blocks, i64)
        launches = [launch for launch in op.walk() if isinstance(launch, LaunchOp)]
        for name, blocks in blocks_of.items():
            if (aiv := partner.get(name)) is not None:  # each core group its own workspace
                mine = [launch for launch in launches if launch.callee.string_value() == name]
                workspace_per_group(functions[name], aiv, mine, blocks)
