"""Scoring one candidate: a macro kernel lowered at a point, timed by the cycle model.

A kernel is scored alone: :func:`kernel_module` cuts it out of its model into a module
holding the model's target, the kernel and a host function ``@main`` that launches it once
with the same operand types (the launch the model makes). :func:`evaluate` lowers that
module at the point (``tile.params``, then ``tile-kernels`` and
:data:`~tilegraph.passes.pipelines.NPU_PASSES`: the blocks from ``split-cores``, a mix
kernel's AIC and AIV parts) and returns what
:func:`~tilegraph.cost_model.cycles.simulate_module` reports for it: one launch's µs with
its scheduling, as the whole model's estimate counts each launch
(:attr:`~tilegraph.cost_model.cycles.KernelCycles.total_us` per launch).

Faithfulness: without L2 reuse (``CycleModelOptions(l2_reuse=False)``) the kernel's µs in
the whole model is its launch count times this score exactly (the blocks, the GM share and
the co-simulation of a mix launch depend on that launch only). With L2 reuse (the default
model) the whole model's launch may find its inputs in L2, written there by the kernel
before it, and pays for dirty lines written back: the score here is the cold launch (an
empty L2 at its start), an upper bound of the warm one up to the write-back term.

A task (:class:`KernelTask`) carries the kernel's module as printed IR text: picklable, and
parsed in the worker once per process (later candidates of the same kernel clone the
parsed module: cloning is about 20x cheaper than parsing). A point the lowering rejects —
a value the strategy refuses (:class:`~tilegraph.lowering.analysis.tuning_params.
TilingParamError`) or a kernel that no longer fits and would go to the host — is
infeasible (:attr:`Score.infeasible` says why), not an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region

from tilegraph.cost_model.cycles import CycleModelOptions, simulate_module
from tilegraph.dialects.tile import LaunchOp
from tilegraph.lowering.analysis.kernel_attrs import HOST_REASON_ATTR, SIGNATURE_ATTR, kernel_unit
from tilegraph.lowering.analysis.tuning_params import (
    ParamValue,
    TilingParamError,
    set_kernel_params,
)
from tilegraph.passes.context import make_context
from tilegraph.passes.pipelines import NPU_PASSES, run_pipeline

HOST_NAME = "main"
"""The host function of a kernel's module (:func:`kernel_module`)."""

Point = dict[str, ParamValue]


@dataclass(frozen=True)
class KernelTask:
    """One candidate to score: a kernel's module (:func:`kernel_module`, printed) and a
    point (sorted items, so equal tasks compare equal)."""

    module_text: str
    kernel: str
    point: tuple[tuple[str, ParamValue], ...]


@dataclass(frozen=True)
class Score:
    """A candidate's score: µs of one launch with its scheduling, or why it is infeasible."""

    us: float | None
    infeasible: str | None = None


def launches_of(module: ModuleOp, name: str) -> list[LaunchOp]:
    """The launches of kernel ``name`` in ``module``, in program order."""
    return [
        op for op in module.walk() if isinstance(op, LaunchOp) and op.callee.string_value() == name
    ]


def kernel_module(module: ModuleOp, fn: func.FuncOp) -> ModuleOp:
    """``fn`` (a macro kernel of ``module``, after ``lower-graph-to-kernels``) alone: a
    module with ``module``'s attributes (its target), a copy of ``fn`` and ``@main``
    launching it once on arguments of its first launch's operand types."""
    name = fn.sym_name.data
    found = launches_of(module, name)
    types = [v.type for v in found[0].args] if found else list(fn.function_type.inputs.data)
    block = Block(arg_types=types)
    block.add_ops([LaunchOp(name, list(block.args)), func.ReturnOp()])
    host = func.FuncOp(HOST_NAME, (types, []), Region(block))
    # marks the host function for the NPU passes (plan-memory); only a run would read it
    host.attributes[SIGNATURE_ATTR] = FunctionType.from_lists(types, [])
    kernel_module = ModuleOp([host, fn.clone()])
    for key, value in module.attributes.items():
        kernel_module.attributes[key] = value
    return kernel_module


_PARSED: dict[str, ModuleOp] = {}
"""Kernel modules parsed in this process, by the hash of their text (see the module doc)."""
_PARSED_LIMIT = 64


def _parsed(text: str) -> ModuleOp:
    digest = hashlib.sha256(text.encode()).hexdigest()
    module = _PARSED.get(digest)
    if module is None:
        from xdsl.parser import Parser

        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.pop(next(iter(_PARSED)))
        module = _PARSED[digest] = Parser(make_context(), text).parse_module()
    return module.clone()


def score_module(
    module: ModuleOp, kernel: str, point: Mapping[str, ParamValue], options: CycleModelOptions
) -> Score:
    """Lower a kernel's module (:func:`kernel_module`; changed in place) at ``point`` and
    score it (see the module docstring)."""
    fn = next(f for f in module.ops if isinstance(f, func.FuncOp) and f.sym_name.data == kernel)
    was_host = kernel_unit(fn) == "host"
    set_kernel_params(fn, point)
    try:
        run_pipeline(",".join(("tile-kernels", *NPU_PASSES)), make_context(), module)
    except TilingParamError as e:
        return Score(None, str(e))
    if not was_host and kernel_unit(fn) == "host":
        reason = fn.attributes.get(HOST_REASON_ATTR)
        return Score(None, f"the kernel would run on the host: {getattr(reason, 'data', '?')}")
    return Score(simulate_module(module, options=options).total_us)


def evaluate(task: KernelTask) -> Score:
    """Score one candidate (a top-level function of picklable data: a worker task)."""
    return score_module(
        _parsed(task.module_text), task.kernel, dict(task.point), CycleModelOptions()
    )
