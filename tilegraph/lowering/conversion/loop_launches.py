"""A ``graph.loop`` with a compile-time trip count as a device loop: ``tile.loop_launches``.

GE runs a TensorFlow while loop as a functional While: its body is compiled to kernels like
any graph and the iterations are driven by stream control tasks on the device; the host
does not step it. :func:`lower_loop` does the same for a ``graph.loop`` of
``lower-graph-to-kernels`` whose trip count is known once shapes are bound
(:func:`static_trip`):

1. the body becomes a graph function (:func:`body_function`): its arguments are the
   iteration number (when the body reads it), the carried values and the captures, except
   those that are constants outside (a carried value the body passes through unchanged,
   or a capture): those go in as the constant, so that the format engine gives weights
   their storage formats; its results are the next carried values, then the scan slices;
2. it is optimised with O2 as the outer function was and lowered by
   :func:`~.graph_to_kernels.lower_function` itself, in a module of its own;
3. its GM buffers and constants join the outer host sequence before the loop (reused by
   every iteration) and its launches become the region of one ``tile.loop_launches``
   (:mod:`tilegraph.dialects.tile.loop`), with a state buffer per carried value and a
   ``[trip, ...]`` buffer per scan output.

A loop stays a host kernel, with the reason, when its trip count is known only at run
time, when a value's storage is not row-major ND, when a carried value changes shape, or
when a kernel of its body would run on the host (the loop runs on the host whole).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue

from tilegraph.dialects.graph import ConstantOp
from tilegraph.dialects.graph.binary import AddOp, LessOp
from tilegraph.dialects.graph.control_flow import LoopOp
from tilegraph.dialects.graph.data_movement import GatherOp
from tilegraph.dialects.graph.elementwise import CastOp, IdentityOp
from tilegraph.dialects.graph.fused import YieldOp
from tilegraph.dialects.graph.linalg import GemmOp, MatMulOp
from tilegraph.dialects.graph.loop_scalars import LoopScalars, through_casts
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import AllocOp, LaunchOp, LoopLaunchesOp
from tilegraph.dialects.tile import ConstantOp as TileConstantOp
from tilegraph.formats import Format

BODY_PIPELINE = "O2{disable=matmul-add-to-gemm}"
"""What the body function is optimised with: the default pipeline of the outer function,
but for the rule that would join a split Gemm again (:func:`_gemm_as_matmul_add`)."""


def static_trip(loop: LoopOp) -> int | str:
    """The loop's trip count when it is a compile-time constant, else why not: ``M`` a
    constant, and a condition that starts true and is yielded unchanged, constant true,
    or tf2onnx's ``Less(t + 1, n)`` (see the module docstring)."""
    scalars = LoopScalars(loop)
    limits: list[int] = []
    if loop.max_trip_count is not None:
        m = scalars.constant(loop.max_trip_count)
        if m is None:
            return "a Loop whose trip count M is known only at run time"
        limits.append(m)
    if loop.condition is not None and scalars.constant(loop.condition) != 1:
        return "a Loop whose initial condition is not a constant true"
    cond = scalars.yielded[0]
    if cond is not loop.body.block.args[1] and scalars.constant(cond) != 1:
        owner = through_casts(cond).owner
        if not isinstance(owner, LessOp):
            return "a Loop whose condition is computed from data (not a counter's bound)"
        start = scalars.counter_start(owner.operands[0])
        bound = scalars.constant(owner.operands[1])
        if start is None or bound is None:
            return "a Loop whose condition is computed from data (not a counter's bound)"
        limits.append(max(1, bound - start))  # the first iteration runs: cond starts true
    if not limits:
        return "a Loop with neither a trip count M nor a counted condition"
    trip = min(limits)
    if trip < 1:
        return "a Loop that runs no iteration"
    return trip


def _nd_type(value: SSAValue) -> TensorType | str:
    t = value.type
    if not isinstance(t, TensorType):
        return f"a Loop operand of type {t}"
    if t.storage_format != Format.ND or tuple(t.storage_shape) != tuple(t.origin_shape):
        return "a Loop operand stored in another layout than row-major ND"
    return t


@dataclass
class LoopBody:
    """The body as a graph function and what each of its arguments and results is."""

    fn: func.FuncOp
    counter: bool
    """Its first argument is the iteration number."""
    carried: list[int]
    """The carried values that are arguments (the others go in as constants), in order."""
    captures: list[SSAValue]
    """The outer values of the remaining arguments."""
    scans: int


def body_function(loop: LoopOp, name: str) -> LoopBody | str:
    """The loop's body as a graph function (see the module docstring), or why not."""
    scalars = LoopScalars(loop)
    block = loop.body.block
    n = len(loop.initial)
    arg_types: list[TensorType] = []
    indices = _counters_as_indices(scalars)
    counter = bool(block.args[0].uses) or bool(indices)
    if counter:
        arg_types.append(TensorType([], block.args[0].type.element_type))  # type: ignore[union-attr]
    carried: list[int] = []
    captures: list[SSAValue] = []
    constants: dict[SSAValue, ConstantOp] = {}

    def taken(inner: SSAValue, same: SSAValue | None, outer: SSAValue) -> bool | str:
        """Whether ``inner`` is an argument of ``outer``'s type (True) or the constant
        ``same`` stands for in every iteration (False), or why neither."""
        if same is not None and isinstance(same.owner, ConstantOp):
            constants[inner] = same.owner
            return False
        t = _nd_type(outer)
        if isinstance(t, str):
            return t
        arg_types.append(t)
        return True

    for k, init in enumerate(loop.initial):
        if k in indices:
            continue  # its reads are the iteration number's (below)
        arg = taken(block.args[2 + k], scalars.outer_of(block.args[2 + k]), init)
        if isinstance(arg, str):
            return arg
        if arg:
            carried.append(k)
    inner_captures = list(block.args[2 + n :])
    for inner, outer in zip(inner_captures, loop.captured_values, strict=True):
        arg = taken(inner, outer, outer)
        if isinstance(arg, str):
            return arg
        if arg:
            captures.append(outer)
    fn_block = Block(arg_types=arg_types)
    mapping: dict[SSAValue, SSAValue] = {}
    inner_args = [block.args[0]] if counter else []
    inner_args += [block.args[2 + k] for k in carried]
    inner_args += [a for a in inner_captures if a not in constants]
    for arg, inner in zip(fn_block.args, inner_args, strict=True):
        arg.name_hint = inner.name_hint
        mapping[inner] = arg
    for k in indices:
        mapping[block.args[2 + k]] = fn_block.args[0]
    for inner, constant in constants.items():
        clone = constant.clone()
        fn_block.add_op(clone)
        mapping[inner] = clone.output
    if block.args[1].uses:  # the condition holds in every iteration that runs
        true = ConstantOp(np.array(True))
        fn_block.add_op(true)
        mapping[block.args[1]] = true.output
    yielded = scalars.yielded
    outs = [yielded[1 + k] for k in carried] + yielded[1 + n :]
    needed = _computing(outs)
    for op in block.ops:
        if op is block.last_op:
            break
        if op not in needed:  # the condition's ops (and a replaced counter's t + 1)
            continue
        parts = _gemm_as_matmul_add(op, mapping)
        if parts is None:
            parts = [op.clone(value_mapper=mapping)]
        for old, new in zip(op.results, parts[-1].results, strict=True):
            mapping[old] = new
        for part in parts:
            fn_block.add_op(part)
    results: list[SSAValue] = [mapping[v] if v in mapping else v for v in outs]
    fn_block.add_op(func.ReturnOp(*results))
    fn = func.FuncOp(
        name, FunctionType.from_lists(arg_types, [r.type for r in results]), Region(fn_block)
    )
    fn.location = loop.location
    return LoopBody(fn, counter, carried, captures, len(yielded) - 1 - n)


def _computing(values: list[SSAValue]) -> set[Operation]:
    """The ops of a body that ``values`` are computed from."""
    found: set[Operation] = set()
    stack = [v.owner for v in values if isinstance(v.owner, Operation)]
    while stack:
        op = stack.pop()
        if op in found:
            continue
        found.add(op)
        stack.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
    return found


def _counters_as_indices(scalars: LoopScalars) -> set[int]:
    """The carried counters the body function replaces by the iteration number: tf2onnx's
    ``time`` starting at 0, read only as Gather indices (``TensorListGetItem``) and by
    its own ``t + 1``, whose value only the next iteration and the condition read, and
    whose final value no op after the loop reads. Each would otherwise be a state of its
    own and a one-element kernel per iteration adding 1 (a Gather takes the int64 index
    as it takes the int32 one)."""
    loop, block = scalars.loop, scalars.block
    found: set[int] = set()
    for k in range(len(loop.initial)):
        t = block.args[2 + k]
        if loop.results[k].uses or not scalars.is_counter(t):
            continue
        if scalars.constant(loop.initial[k]) != 0:
            continue
        step = through_casts(scalars.yielded[1 + k])
        reads = [use.operation for use in t.uses]
        if all(
            op is step.owner
            or (isinstance(op, GatherOp) and op.operands[1] is t and t is not op.operands[0])
            for op in reads
        ) and _only_carried(step, scalars, k):
            found.add(k)
    return found


def _only_carried(step: SSAValue, scalars: LoopScalars, k: int) -> bool:
    """``step`` (``t + 1``, through casts to the yield) is read only on its way to the
    yield of carried value ``k`` and by the condition ``Less(t + 1, n)``."""
    yielded = scalars.yielded
    cond = through_casts(yielded[0]).owner
    seen: set[SSAValue] = set()
    stack = [step]
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        for use in value.uses:
            op = use.operation
            if isinstance(op, YieldOp):
                if any(v is value and i != 1 + k for i, v in enumerate(op.values)):
                    return False
            elif isinstance(op, CastOp | IdentityOp):
                stack.append(op.results[0])
            elif op is not cond:
                return False
    return True


def _gemm_as_matmul_add(op: Operation, mapping: dict[SSAValue, SSAValue]) -> list[Operation] | None:
    """A Gemm of a full ``C`` (alpha = beta = 1, no transposes) as ``matmul(A, B) + C``
    over the mapped operands, else None. An LSTM cell's ``h R + x W`` is such a Gemm, and
    the format engine stores it FRACTAL_NZ after the ``x W`` matmul, where the matmul
    strategy takes no full C (a gap of the cube strategy, on the main path too); split,
    the matmul goes to the cube and the add to the vector core. :data:`BODY_PIPELINE`
    keeps ``matmul-add-to-gemm`` from joining them again."""
    if not isinstance(op, GemmOp) or op.c is None:
        return None
    attrs = (op.attr("alpha"), op.attr("beta"), op.attr("transA"), op.attr("transB"))
    c, y = op.c.type, op.results[0].type
    if attrs != (1.0, 1.0, 0, 0) or not isinstance(c, TensorType) or not isinstance(y, TensorType):
        return None
    if c.rank != y.rank:
        return None  # a bias row: the strategy adds it in the epilogue
    a, b, c_value = (mapping.get(v, v) for v in (op.a, op.b, op.c))
    product = MatMulOp.make(a, b)
    total = AddOp.make(product.results[0], c_value)
    product.results[0].name_hint = op.results[0].name_hint
    product.location = total.location = op.location
    return [product, total]


Lowerer = Callable[[func.FuncOp, ModuleOp], None]
"""Lowers one graph function of a module into a host sequence and kernels (``lower_function``
with the outer pass's names and statistics)."""


@dataclass
class LoweredLoop:
    """What the outer host sequence gets: ops before the loop, the loop, the kernels, and
    the buffer of each loop result."""

    loop: LoopOp
    ops: list[Operation]
    kernels: list[func.FuncOp]
    results: list[SSAValue]

    def add_to(
        self, host: Block, kernels: list[func.FuncOp], values: dict[SSAValue, SSAValue]
    ) -> None:
        """Append the ops to the outer ``host`` block and the kernels to ``kernels``; the
        loop's results are these buffers from now on (``values``)."""
        for op in self.ops:
            host.add_op(op)
        kernels.extend(self.kernels)
        values.update(zip(self.loop.results, self.results, strict=True))


def lower_loop(
    loop: LoopOp,
    outer_module: ModuleOp,
    values: dict[SSAValue, SSAValue],
    lower: Lowerer,
    buffer_type: Callable[[SSAValue], object],
) -> LoweredLoop | str:
    """``loop`` as a ``tile.loop_launches`` and the kernels of its body, or why it stays a
    host kernel. ``values``: the outer graph values' GM buffers."""
    from tilegraph.lowering.analysis.kernel_attrs import HOST_REASON_ATTR, SIGNATURE_ATTR
    from tilegraph.lowering.conversion.graph_to_kernels import _is_host
    from tilegraph.passes.context import make_context
    from tilegraph.passes.pipelines import run_pipeline

    trip = static_trip(loop)
    if isinstance(trip, str):
        return trip
    body = body_function(loop, "loop_body")
    if isinstance(body, str):
        return body
    inner = ModuleOp([body.fn])
    for key, value in outer_module.attributes.items():
        inner.attributes[key] = value
    run_pipeline(BODY_PIPELINE, make_context(), inner)
    graph_fn = next(f for f in inner.ops if isinstance(f, func.FuncOp))
    n_carried = len(body.carried)
    outs = graph_fn.function_type.outputs.data
    ins = graph_fn.function_type.inputs.data
    first = 1 if body.counter else 0
    for k, (arg_t, out_t) in enumerate(zip(ins[first:], outs[:n_carried], strict=False)):
        if arg_t != out_t:
            return f"a Loop whose carried value #{body.carried[k]} changes type: {out_t}"
    lower(graph_fn, inner)
    host = next(
        f for f in inner.ops if isinstance(f, func.FuncOp) and SIGNATURE_ATTR in f.attributes
    )
    kernels = [f for f in inner.ops if isinstance(f, func.FuncOp) and f is not host]
    for kernel in kernels:
        if _is_host(kernel):
            why = kernel.attributes.get(HOST_REASON_ATTR)
            text = getattr(why, "data", "no kernel")
            return f"a Loop whose body runs {kernel.sym_name.data} on the host: {text}"
    return _assembled(loop, body, trip, host, kernels, values, buffer_type)


def _assembled(
    loop: LoopOp,
    body: LoopBody,
    trip: int,
    host: func.FuncOp,
    kernels: list[func.FuncOp],
    values: dict[SSAValue, SSAValue],
    buffer_type: Callable[[SSAValue], object],
) -> LoweredLoop | str:
    """The outer host ops for a lowered body: state / counter / stack buffers, the body's
    buffers and constants, the loop op."""
    ops: list[Operation] = []

    def alloc(t, hint: str | None) -> SSAValue:
        op = AllocOp(t)  # type: ignore[arg-type]
        op.location = loop.location
        op.result.name_hint = hint
        ops.append(op)
        return op.result

    args = list(host.body.block.args)
    bound: dict[SSAValue, SSAValue] = {}
    counter = [alloc(args[0].type, "iteration")] if body.counter else []
    first = len(counter)
    inits = [values[loop.initial[k]] for k in body.carried]
    states = [alloc(a.type, a.name_hint) for a in args[first : first + len(inits)]]
    for arg, outer in zip(args, [*counter, *states], strict=False):
        bound[arg] = outer
    for arg, outer in zip(args[first + len(states) :], body.captures, strict=True):
        bound[arg] = values[outer]
    launches: list[LaunchOp] = []
    returned: list[SSAValue] = []
    for op in host.body.block.ops:
        if isinstance(op, AllocOp | TileConstantOp):
            clone = op.clone()
            ops.append(clone)
            bound[op.results[0]] = clone.results[0]
        elif isinstance(op, LaunchOp):
            launches.append(op)
        elif isinstance(op, func.ReturnOp):
            returned = [bound[v] for v in op.operands]
        else:  # a device loop of the body's own: nesting is not built
            return f"a Loop whose body holds a {op.name} (nested device loops are not built)"
    nexts, slices = returned[: len(states)], returned[len(states) :]
    scan_results = list(loop.results[len(loop.initial) :])
    if len(scan_results) != len(slices):
        return "a Loop whose scan outputs do not match its body's"
    stacks = [alloc(buffer_type(result), result.name_hint) for result in scan_results]
    operands = [counter, inits, states, nexts, slices, stacks]
    listed = {v for group in operands for v in group}
    others = [bound[a] for op in launches for a in op.args if bound[a] not in listed]
    operands.append(list(dict.fromkeys(others)))
    flat = [v for group in operands for v in group]
    region = Block(arg_types=[v.type for v in flat])
    inner_of: dict[SSAValue, SSAValue] = {}
    for arg, outer in zip(region.args, flat, strict=True):
        arg.name_hint = outer.name_hint
        inner_of.setdefault(outer, arg)
    for launch in launches:
        launch.detach()
        launch.operands = [inner_of[bound[a]] for a in launch.args]
        region.add_op(launch)
    try:
        op = LoopLaunchesOp(trip, operands, region)
        op.verify()
    except Exception as e:  # noqa: BLE001 - a stack whose storage is not [trip, slice]
        return f"a Loop that cannot be a device loop: {e}"
    op.location = loop.location
    ops.append(op)
    results: list[SSAValue] = []
    for k in range(len(loop.initial)):
        if k in body.carried:
            results.append(states[body.carried.index(k)])
        else:
            results.append(values[loop.initial[k]])
    results.extend(stacks)
    for kernel in kernels:
        kernel.detach()
    return LoweredLoop(loop, ops, kernels, results)
