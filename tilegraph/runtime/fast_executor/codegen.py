"""The fast executor's code generator: each function of a tile-level module compiled to
Python source.

Loops become Python ``for`` loops over ``range``, index arithmetic becomes Python
expressions, and every tile op calls the same numpy closure the interpreter calls (its
registered kernel, :func:`~tilegraph.runtime.tile_interpreter.kernels.kernel_of`); inside a
nest of loops run as one batch (:mod:`.batching`), its batched form (:mod:`.forms`). The
tiling is executed exactly as the IR states — every tile, in order — only the interpreter's
per-op dispatch is gone. Host kernels (macro bodies) call the graph ops' reference kernels
as the interpreter does.

``compile_module(module).run("main", args)`` returns the host function's results;
``source(name)`` shows the generated code of a function (for debugging and the docs).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from tilegraph.dialects import index_arith
from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_storage import convert
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import (
    BlockIdxOp,
    BlockNumOp,
    LaunchOp,
    LoopLaunchesOp,
    MmadOp,
    SubBlockIdxOp,
    TileOp,
)
from tilegraph.dialects.tile.barrier import KERNEL_FUNCTION_ATTR, SyncAllOp, zero_filled
from tilegraph.dialects.tile.cross_core import CrossCoreOp, SyncBlockWaitOp
from tilegraph.dialects.tile.host import AllocOp
from tilegraph.dialects.tile.sync import SyncOp
from tilegraph.runtime.fast_executor.batching import (
    BLOCK_COUNT,
    BLOCK_INDEX,
    SUB_BLOCK_INDEX,
    NestPlan,
    kernel_over_batch,
    plan_nest,
)
from tilegraph.runtime.fast_executor.blocks import blocks_run_as_one
from tilegraph.runtime.fast_executor.forms import batched_kernel_of, nest_kernel_of
from tilegraph.runtime.fast_executor.invariants import (
    Invariants,
    entry,
    find_invariants,
    in_device_loop,
)
from tilegraph.runtime.fast_executor.launch_plans import LaunchPlans
from tilegraph.runtime.fast_executor.lockstep import (
    first_point,
    per_group,
    slotted,
)
from tilegraph.runtime.fast_executor.mix import (
    barrier_kernel,
    run_lockstep_launch,
    run_mix_launch,
    set_kernel,
    wait_kernel,
)
from tilegraph.runtime.fast_executor.mix_batch import BatchedMix, HandOver
from tilegraph.runtime.fast_executor.row_slots import row_major_axis, row_major_slots
from tilegraph.runtime.fast_executor.scratch import slots
from tilegraph.runtime.interpreter import run_graph_op
from tilegraph.runtime.tile_interpreter.host import run_device_loop
from tilegraph.runtime.tile_interpreter.kernels import kernel_of


class FastExecutorError(RuntimeError):
    """An op the fast executor cannot compile (the message names it)."""


class _FunctionWriter:
    def __init__(
        self,
        module: CompiledModule,
        fn: func.FuncOp,
        python_name: str | None = None,
        handover: HandOver | None = None,
        groups: NestPlan | None = None,
        invariants: Invariants | None = None,
    ):
        self.module = module
        self.fn = fn
        self.python_name = python_name
        """The generated function's name (default: the module's name for ``fn``)."""
        self.handover = handover
        """A batched mix part's workspace, read and written one copy per hand-over
        (:mod:`.mix_batch`)."""
        self.names: dict[SSAValue, str] = {}
        self.lines: list[str] = []
        self.groups = groups
        """The batch of a function run for all blocks of a launch at once
        (:mod:`.lockstep`): the whole body is emitted inside it."""
        self.plan: NestPlan | None = groups
        """The batch being emitted (inside a nest of loops run as one, or ``groups``)."""
        self.invariants = invariants
        """Loads run on a device loop's first step only (:mod:`.invariants`)."""
        self.stepped: list[Operation] = []
        """Invariant loads found inside a loop run step by step (or in row-major slots):
        the function is written again without them."""
        self._steps = 0  # loops run step by step around the op being emitted
        self._alloc_lines: dict[SSAValue, int] = {}  # each tile.alloc's line (_template)

    def name(self, value: SSAValue) -> str:
        found = self.names.get(value)
        if found is None:
            found = self.names[value] = f"v{len(self.names)}"
        return found

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def write(self) -> str:
        fname = self.python_name or self.module.python_name(self.fn.sym_name.data)
        args = [self.name(a) for a in self.fn.body.block.args]
        block = [f"{BLOCK_INDEX}=0", f"{BLOCK_COUNT}=1", f"{SUB_BLOCK_INDEX}=0"]
        self.emit(0, f"def {fname}({', '.join([*args, *block])}):")
        if self.invariants is not None:  # the held loads of this call (.invariants)
            read = "".join(f"{args[i]}, " for i in self.invariants.args)
            blocks = f"{BLOCK_INDEX}, {BLOCK_COUNT}, {SUB_BLOCK_INDEX}"
            reads = repr(tuple(self.invariants.reads))
            self.emit(1, f"__inv = _invariants({fname!r}, ({read}), {reads}, {blocks})")
        self.block(self.fn.body.block.ops, 1)
        if self.lines[-1].startswith("def "):
            self.emit(1, "return ()")
        return "\n".join(self.lines)

    def block(self, ops, depth: int) -> None:
        for op in ops:
            self.op(op, depth)

    def operands(self, op: Operation) -> str:
        """The Python source of ``op``'s operands (a hand-over's workspace: its copy)."""
        handover = self.handover
        if handover is None or handover.workspace not in op.operands:
            return ", ".join(self.name(v) for v in op.operands)
        view = self.handover_view(op, handover)
        return ", ".join(view if v is handover.workspace else self.name(v) for v in op.operands)

    def handover_view(self, op: Operation, handover: HandOver) -> str:
        """The workspace copy ``op`` (a hand-over) uses: indexed by the iteration numbers
        of the loops around it, ``(iv - lb) // step``; inside a batch, with a dim per
        axis of the batch (all of a batched loop's iterations, size 1 for the axes not
        around ``op``) before the workspace's own."""
        plan = self.plan
        axes = [loop for loop in handover.loops if plan is not None and loop in plan.axis_of]
        outer: list[str] = []  # loops run one by one around the batch (or no batch)
        inner: list[str] = []  # loops run one by one inside the batch
        for depth, loop in enumerate(handover.loops):
            if loop in axes:
                continue
            iv, lb, step = (self.name(v) for v in (loop.body.block.args[0], loop.lb, loop.step))
            inside = bool(axes) and depth > handover.loops.index(axes[0])
            (inner if inside else outer).append(f"({iv} - {lb}) // {step}")
        index = outer
        if plan is not None:
            dims = [f"0:{a.size}" if a.loop in axes else "None" for a in plan.axes]
            index = [*outer, *dims, *inner]
        return f"{self.name(handover.workspace)}[{', '.join([*index, '...'])}]"

    def op(self, op: Operation, depth: int) -> None:
        invariants = self.invariants
        if invariants is not None and op in invariants.ops:
            if self._steps:
                self.stepped.append(op)
            assert isinstance(op, TileOp) and (written := op.written()) is not None
            index = invariants.buffers[written]
            self.emit(depth, f"if __inv.run({index}):")  # held: the first step only
            self._op(op, depth + 1)
            self.emit(depth + 1, f"__inv.freeze({index}, {self.name(written)})")
        elif invariants is not None and op.results and op.results[0] in invariants.buffers:
            index = invariants.buffers[op.results[0]]
            handle = self.module.bind(op)
            self._alloc_lines[op.results[0]] = len(self.lines)
            self.emit(depth, f"{self.name(op.results[0])} = __inv.buffer({index}, {handle})")
        else:
            if isinstance(op, AllocOp):
                self._alloc_lines[op.result] = len(self.lines)
            self._op(op, depth)

    def _op(self, op: Operation, depth: int) -> None:
        out = ", ".join(self.name(r) for r in op.results)
        args = self.operands(op)
        if isinstance(op, arith.ConstantOp):
            literal = index_arith.constant(op)
            assert literal is not None, op
            self.emit(depth, f"{out} = {literal!r}")
        elif (expr := self.index_expression(op)) is not None:
            self.emit(depth, f"{out} = {expr}")
        elif isinstance(op, SubBlockIdxOp):  # a mix launch's AIV: its sub-block in the group
            self.emit(depth, f"{out} = {SUB_BLOCK_INDEX}")
        elif self.groups is not None and isinstance(op, BlockIdxOp):
            self.emit(depth, f"{out} = np.arange({BLOCK_COUNT})")  # every block's index
        elif isinstance(op, BlockIdxOp | BlockNumOp):
            # the running block, as the launch gave it (a batched loop whose bounds depend
            # on it, split-cores' work loop, has them in the source: batching.Bound)
            self.emit(
                depth, f"{out} = {BLOCK_INDEX if isinstance(op, BlockIdxOp) else BLOCK_COUNT}"
            )
        elif isinstance(op, scf.ForOp):
            self._for(op, depth)
        elif isinstance(op, scf.YieldOp):
            if op.operands:
                self.emit(depth, f"__yield = ({args},)")
        elif isinstance(op, func.ReturnOp):
            self.emit(depth, f"return ({args}{',' if op.operands else ''})")
        elif isinstance(op, SyncOp):
            pass  # one op at a time: every flag is set before it is waited for
        elif isinstance(op, LaunchOp):
            callee = op.callee.string_value()
            self.emit(depth, f"_count({callee!r})")
            for position in zero_filled(op):  # the runtime's memset before the launch
                self.emit(depth, f"{self.name(op.args[position])}[...] = 0")
            blocks = op.block_count
            batched = self.module.batched_mix_launch(op) if op.is_mix else None
            if batched is not None:  # each part's tile loop batched (.mix_batch)
                call = f"({args}{',' if op.operands else ''}), {blocks}, {op.aiv_block_count}"
                self.emit(depth, f"{batched}({call})")
            elif (groups := self.module.lockstep_launch(op)) is not None:  # .lockstep
                self.emit(depth, f"{groups}(({args}{',' if op.operands else ''}))")
            elif op.is_mix:  # AIC and AIV parts as coroutines switching at cross-core flags
                parts = ", ".join(f"({n!r}, {self.module.python_name(n)})" for n in op.callees())
                call = f"({parts}), ({args}{',' if op.operands else ''}), {blocks}"
                lockstep = any(self.module.has_barrier(n) for n in op.callees())
                self.emit(depth, f"_mix({call}, {op.aiv_block_count}, {lockstep})")
            elif self.module.has_barrier(callee) and blocks > 1:  # blocks in lockstep
                part = f"({callee!r}, {self.module.python_name(callee)})"
                core = self.module.core_of(callee)
                call = f"{part}, ({args}{',' if op.operands else ''}), {blocks}, {core!r}"
                self.emit(depth, f"_lockstep({call})")
            else:
                # a generator (a part with flag waits) launched alone: run it to its first
                # flag op, which fails as outside a mix launch
                run = "_plain" if self.module.is_generator(callee) else ""
                if self.module.blocks_run_as_one(callee, blocks):
                    self.emit(depth, f"{run}({self.module.python_name(callee)}({args}))")
                else:  # every block, one after the other, as the interpreter runs them
                    self.emit(depth, f"for __b in range({blocks}):")
                    call = ", ".join(filter(None, (args, "__b", str(blocks))))
                    self.emit(depth + 1, f"{run}({self.module.python_name(callee)}({call}))")
        elif isinstance(op, LoopLaunchesOp):
            self._loop_launches(op, depth)
        elif isinstance(op, SyncAllOp):  # a block in lockstep is a generator (.mix)
            self.emit(depth, f"yield from {self.module.bind_kernel(barrier_kernel(op))}()")
        elif isinstance(op, CrossCoreOp):  # a mix part is a generator (.mix)
            if isinstance(op, SyncBlockWaitOp):
                self.emit(depth, f"yield from {self.module.bind_kernel(wait_kernel(op))}({args})")
            else:
                self.emit(depth, f"{self.module.bind_kernel(set_kernel(op))}({args})")
        elif isinstance(op, TileOp) and self.plan is not None:
            self._batched_op(op, depth)
        elif isinstance(op, TileOp | GraphOp | TransDataOp):
            handle = self.module.bind(op)
            call = f"{handle}({args})"
            self.emit(
                depth, f"{out}{',' if len(op.results) == 1 else ''} = {call}" if out else call
            )
        else:
            raise FastExecutorError(f"the fast executor cannot run '{op.name}'")

    def _loop_launches(self, op: LoopLaunchesOp, depth: int) -> None:
        """A device loop: its region's launches as a local function of the buffers, run
        per iteration by :func:`~tilegraph.runtime.tile_interpreter.host.run_device_loop`
        (the copies between iterations)."""
        run = self.module.bind_kernel(in_device_loop(partial(run_device_loop, op)))
        body = f"{run}_body"
        args = [self.name(a) for a in op.body.block.args]
        self.emit(depth, f"def {body}(__buffers):")
        self.emit(depth + 1, f"({', '.join(args)}{',' if len(args) == 1 else ''}) = __buffers")
        self.block(op.body.block.ops, depth + 1)
        operands = self.operands(op)
        self.emit(depth, f"{run}(({operands}{',' if len(op.operands) == 1 else ''}), {body})")

    def index_expression(self, op: Operation) -> str | None:
        """Python source of the index arithmetic ``op`` computes
        (:mod:`tilegraph.dialects.index_arith`): on arrays when an operand varies along a
        batch, else on ints; None when ``op`` is not index arithmetic."""
        plan = self.plan
        vector = plan is not None and any(v in plan.varying for v in op.operands)
        return index_arith.expression(op, [self.name(v) for v in op.operands], vector)

    def _batched_op(self, op: TileOp, depth: int) -> None:
        """A tile op inside a batch: its batched kernel, its kernel once per point of the
        batch, or (nothing varying) its kernel once."""
        args = self.operands(op)
        plan = self.plan
        assert plan is not None
        workspace = self.handover.workspace if self.handover is not None else None
        mask = [v in plan.varying or v in plan.batched or v is workspace for v in op.operands]
        if not any(mask):
            handle = self.module.bind(op)
        else:
            summed = plan.summed.get(op) if isinstance(op, MmadOp) else None
            # a lockstep launch's groups are one flat batch, a batched form's as it is (for
            # mmad the kernel itself: a few groups' small tiles in one stacked product)
            flat = self.groups is plan
            kernel = batched_kernel_of(op, mask) if flat else None
            if kernel is None:
                kernel = nest_kernel_of(op, mask, plan.rank, summed)
            if kernel is None:
                kernel, per_tile = kernel_over_batch(op, mask, plan.rank, flat)
                if per_tile:
                    self.module.per_tile_ops.append((self.fn.sym_name.data, op.name))
            handle = self.module.bind_kernel(kernel)
        out = ", ".join(self.name(r) for r in op.results)  # a scalar read: per point
        self.emit(depth, f"{out}, = {handle}({args})" if out else f"{handle}({args})")
        for result in op.results:  # a buffer allocated in a batch (.lockstep): its slots
            if result in plan.batched:
                shape = plan.shape(plan.batched[result])
                self.emit(depth, f"{self.name(result)} = _slotted({self.name(result)}, {shape})")

    def _for(self, op: scf.ForOp, depth: int) -> None:
        plan = self.plan
        if plan is not None:
            if op in plan.axis_of:
                self._batched_loop(op, plan, depth)
            elif op in plan.shifted:
                self._shifted_for(op, depth)
            else:
                self._sequential_for(op, depth)
            return
        if self.module.batch:
            handover = self.handover
            plan = plan_nest(op, None if handover is None else (handover.workspace, handover.loops))
            if plan is not None:
                self._nest(op, plan, depth)
                return
        self._sequential_for(op, depth)

    def _nest(self, op: scf.ForOp, plan: NestPlan, depth: int) -> None:
        """A nest of loops run as one batch: buffers with a slot per point of their axes,
        then the loops, then the last slot of each buffer used after the nest."""
        saved = {}
        inside = set(op.body.block.walk())  # once: a walk per use is quadratic in big kernels
        for ordinal, (buffer, axes) in enumerate(plan.batched.items()):
            outer = self.name(buffer)
            saved[buffer] = outer
            self._template(buffer, inside)
            shape = plan.shape(axes)
            rows = row_major_axis(buffer, plan, op)  # an img2col tile the GEMM reads as is
            slots = "_slots(" if rows is None else f"_row_slots({rows}, "
            held = None if self.invariants is None else self.invariants.buffers.get(buffer)
            if held is not None and rows is None:
                call = f"{held}, {outer}, {shape}, _slots, {ordinal}"
                self.emit(depth, f"{outer}_b = __inv.slots({call})")
            else:
                if held is not None:  # held loads are not written in row-major slots
                    assert self.invariants is not None
                    self.stepped += [o for o in self.invariants.ops if o.written() is buffer]
                self.emit(depth, f"{outer}_b = {slots}{ordinal}, {outer}, {shape})")
            self.names[buffer] = f"{outer}_b"
        self.plan = plan
        self._batched_loop(op, plan, depth)
        self.plan = None
        last = (-1,) * plan.rank
        for buffer, outer in saved.items():
            if any(use.operation not in inside for use in buffer.uses):
                self.emit(depth, f"{outer}[...] = {self.name(buffer)}[{last!r}]")
            self.names[buffer] = outer

    def _template(self, buffer: SSAValue, inside: set[Operation]) -> None:
        """A ``tile.alloc`` buffer that a nest batches and nothing outside it uses only
        gives the slots (each iteration writes what it reads) their shape and type: its
        definition becomes a read-only array bound once, no allocation per call."""
        at, owner = self._alloc_lines.get(buffer), buffer.owner
        if at is None or not isinstance(owner, AllocOp):
            return
        if any(use.operation not in inside for use in buffer.uses):
            return  # read or written around the nest (or its last slot copied back)
        template = kernel_of(owner)()[0]
        template.flags.writeable = False  # only its shape and type are read
        handle = self.module.bind_kernel(template)
        line = self.lines[at]
        indent = line[: len(line) - len(line.lstrip())]
        self.lines[at] = f"{indent}{self.name(buffer)} = {handle}"
        self.module.slot_templates.append((self.fn.sym_name.data, self.name(buffer)))

    def _batched_loop(self, op: scf.ForOp, plan: NestPlan, depth: int) -> None:
        """One loop of a nest: its induction variable laid along its axis, its body once;
        afterwards the buffers that vary along the axis are their last iteration's slot."""
        lb, ub, step = plan.axes[plan.axis_of[op]].trips
        iv = self.name(op.body.block.args[0])
        self.emit(depth, f"{iv} = np.arange({lb}, {ub}, {step}).reshape({plan.index_shape(op)!r})")
        self.block(op.body.block.ops, depth)
        axis = plan.axis_of[op]
        inside = set(op.body.block.walk())
        for buffer, axes in plan.batched.items():
            if axis in axes and any(use.operation not in inside for use in buffer.uses):
                last = ", ".join(["-1:" if i == axis else ":" for i in range(plan.rank)])
                view = f"{self.name(buffer)}_{axis}"
                self.emit(depth, f"{view} = {self.name(buffer)}[{last}]")
                self.names[buffer] = view

    def _shifted_for(self, op: scf.ForOp, depth: int) -> None:
        """A loop whose bounds vary along the batch, each point with as many trips
        (proved by :mod:`.lockstep`): trip by trip, as many as the first point's, its
        induction variable ``lb + k * step`` per point."""
        body = op.body.block
        iv = self.name(body.args[0])
        lb, ub, step = (self.name(v) for v in (op.lb, op.ub, op.step))
        trips = f"len(range(_first({lb}), _first({ub}), _first({step})))"
        self.emit(depth, f"for {iv}_k in range({trips}):")
        at = f"{lb} + {iv}_k * {step}"
        self.emit(depth + 1, f"{iv} = _per_group({at}, {BLOCK_COUNT})")
        self._stepped_block(body, depth + 1)

    def _stepped_block(self, body: Block, depth: int) -> None:
        """A loop body run once per step (an invariant load there runs every step)."""
        self._steps += 1
        self.block(body.ops, depth)
        self._steps -= 1

    def _sequential_for(self, op: scf.ForOp, depth: int) -> None:
        body = op.body.block
        iv = self.name(body.args[0])
        carried = [self.name(a) for a in body.args[1:]]
        lb, ub, step = (self.name(v) for v in (op.lb, op.ub, op.step))
        for name, init in zip(carried, op.iter_args, strict=True):
            self.emit(depth, f"{name} = {self.name(init)}")
        self.emit(depth, f"for {iv} in range({lb}, {ub}, {step}):")
        before = len(self.lines)
        self._stepped_block(body, depth + 1)
        if carried:
            self.emit(depth + 1, f"{', '.join(carried)}, = __yield")
        if len(self.lines) == before:
            self.emit(depth + 1, "pass")
        for result, name in zip(op.results, carried, strict=True):
            self.emit(depth, f"{self.name(result)} = {name}")


def _graph_kernel(op: Operation) -> Callable[..., Any]:
    if isinstance(op, TransDataOp):
        source, target = op.input.type, op.output.type
        assert isinstance(source, TensorType) and isinstance(target, TensorType)
        return lambda array: (convert(array, source, target),)
    assert isinstance(op, GraphOp)
    return lambda *args: run_graph_op(op, args)


class CompiledModule(LaunchPlans):
    """Every function of a module as Python; see the module docstring.

    ``batch``: run the iterations of ``tile.parallel`` loops together
    (:mod:`.batching`)."""

    def __init__(self, module: ModuleOp, batch: bool = True):
        self.batch = batch
        self.namespace: dict[str, Any] = {
            **index_arith.NAMESPACE,
            "np": np,
            "_count": lambda name: None,
            "_slots": slots,
            "_row_slots": row_major_slots,
            "_mix": run_mix_launch,
            "_lockstep": run_lockstep_launch,
            "_slotted": slotted,
            "_first": first_point,
            "_per_group": per_group,
            "_plain": _plain,
            "_invariants": entry,
        }
        self._handles = 0
        self.per_tile_ops: list[tuple[str, str]] = []
        """(function, op name) of each op in a batch that has no batched form for its
        operands there and runs its kernel once per tile (what batching could not help)."""
        self.slot_templates: list[tuple[str, str]] = []
        """(function, buffer) of each ``tile.alloc`` bound once (``_template``)."""
        self.invariant_ops: list[tuple[str, str]] = []
        """(function, op name) of each load a device loop runs on its first step only
        (:mod:`.invariants`)."""
        self._sources: dict[str, str] = {}
        self._batched_mixes: dict[tuple[str, ...], BatchedMix | None] = {}
        self._lockstep: dict[tuple[tuple[str, ...], int, int], str | None] = {}
        functions = [op for op in module.ops if isinstance(op, func.FuncOp)]
        self._python_names = {f.sym_name.data: f"f_{i}" for i, f in enumerate(functions)}
        self._functions = {f.sym_name.data: f for f in functions}
        self._generators = {
            f.sym_name.data
            for f in functions
            if any(isinstance(op, SyncBlockWaitOp | SyncAllOp) for op in f.walk())
        }
        self._barriers = {
            f.sym_name.data for f in functions if any(isinstance(op, SyncAllOp) for op in f.walk())
        }
        self._in_loops = {
            name
            for loop in module.walk()
            if isinstance(loop, LoopLaunchesOp)
            for launch in loop.body.block.ops
            if isinstance(launch, LaunchOp)
            for name in launch.callees()
        }
        """Functions launched on the steps of a device loop (their loads may be held)."""
        for fn in functions:
            if fn.is_declaration:
                continue
            text = self._write(fn)
            self._sources[fn.sym_name.data] = text
            exec(compile(text, f"<tile:{fn.sym_name.data}>", "exec"), self.namespace)

    def _write(
        self,
        fn: func.FuncOp,
        python_name: str | None = None,
        handover: HandOver | None = None,
        groups: NestPlan | None = None,
    ) -> str:
        """The Python source of ``fn``; launched in a device loop (batching on, not all
        groups at once), with its invariant loads held (:mod:`.invariants`) — written
        again without those the writer finds run step by step."""
        name = fn.sym_name.data
        excluded: list[Operation] = []
        per_tile, templates = len(self.per_tile_ops), len(self.slot_templates)
        holds = self.batch and groups is None and name in self._in_loops
        while True:
            found = find_invariants(fn, excluded) if holds else None
            writer = _FunctionWriter(self, fn, python_name, handover, groups, found)
            text = writer.write()
            if not writer.stepped:
                break
            excluded += writer.stepped
            del self.per_tile_ops[per_tile:], self.slot_templates[templates:]
        if found is not None:
            self.invariant_ops += [(name, op.name) for op in found.ops]
        return text

    def python_name(self, symbol: str) -> str:
        found = self._python_names.get(symbol)
        if found is None:
            raise FastExecutorError(f"no function @{symbol} in the module")
        return found

    def blocks_run_as_one(self, symbol: str, blocks: int) -> bool:
        """Whether a launch of ``blocks`` blocks of ``@symbol`` may call it once, as block
        0 of 1 (:func:`~tilegraph.runtime.fast_executor.blocks.blocks_run_as_one`: proved
        from the IR; never with ``batch=False``, which runs everything as the IR says)."""
        if blocks == 1:
            return True
        fn = self._functions.get(symbol)
        return self.batch and fn is not None and blocks_run_as_one(fn, blocks)

    def has_barrier(self, symbol: str) -> bool:
        """Whether ``@symbol`` holds an all-core barrier (its blocks run in lockstep)."""
        return symbol in self._barriers

    def core_of(self, symbol: str) -> str:
        """The core a plain launch's blocks of ``@symbol`` run on: "aiv" for a vector
        kernel, else "aic"."""
        fn = self._functions.get(symbol)
        unit = None if fn is None else fn.attributes.get(KERNEL_FUNCTION_ATTR)
        return "aiv" if isinstance(unit, StringAttr) and unit.data == "vector" else "aic"

    def is_generator(self, symbol: str) -> bool:
        """Whether ``@symbol`` compiles to a generator (it waits for cross-core flags)."""
        return symbol in self._generators

    def bind(self, op: Operation) -> str:
        return self.bind_kernel(kernel_of(op) if isinstance(op, TileOp) else _graph_kernel(op))

    def bind_kernel(self, kernel: Callable[..., Any]) -> str:
        handle = f"k{self._handles}"
        self._handles += 1
        self.namespace[handle] = kernel
        return handle

    def source(self, symbol: str) -> str:
        return self._sources[symbol]

    def run(self, symbol: str, args: Sequence[Any], counters: Any = None) -> tuple[Any, ...]:
        self.namespace["_count"] = counters.launch if counters is not None else lambda n: None
        return self.namespace[self.python_name(symbol)](*args)


def _plain(result: Any) -> None:
    """A launched function's result; a generator (a mix part launched alone) is run."""
    if inspect.isgenerator(result):
        for _ in result:
            pass


def compile_module(module: ModuleOp, batch: bool = True) -> CompiledModule:
    return CompiledModule(module, batch)
