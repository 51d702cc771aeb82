"""The storage-selection problem of one function.

A *plan* maps every selectable op (graph ops other than constants) to a
:class:`~tilegraph.passes.layout_plan.KernelChoice`. A plan implies, for every SSA value, the
storage type it is produced in and the storage types its consumers need; each distinct needed
type that differs from the produced one is one TransData (conversions of one value to one
type are shared, as ``cancel-trans-data`` guarantees).

Cost of a TransData = bytes read + bytes written (storage bytes of both types, padding
included). Conversions of constants cost nothing at run time — ``fold-trans-data`` stores the
weights pre-converted — and are counted separately. Function arguments and results keep their
origin view: users see the layout they gave.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.ir import Operation, OpResult, SSAValue

from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.graph.control_flow import has_only_tensors, walk_outside_bodies
from tilegraph.dialects.layout_type import TensorType
from tilegraph.passes.layout_plan import KernelChoice, LayoutPlanner, origin_view

Plan = Mapping[GraphOp, KernelChoice]


def conversion_bytes(source: TensorType, target: TensorType) -> int:
    """Bytes a TransData reads and writes (storage layouts, padding included)."""
    return _bytes(source) + _bytes(target)


def _bytes(t: TensorType) -> int:
    b = t.storage_bytes()
    if b is not None:
        return b
    # unknown or symbolic dims: count them as 1 so that the model stays usable
    n = 1
    for d in t.storage_shape:
        n *= d if isinstance(d, int) and d > 0 else 1
    return (n * t.dtype.bits + 7) // 8


@dataclass(frozen=True)
class Use:
    """Operand ``index`` of ``consumer`` reads ``value``."""

    value: SSAValue
    consumer: Operation
    index: int


@dataclass
class PlanCost:
    """What a plan costs: run-time conversions on activations, and folded ones on constants."""

    activation_count: int = 0
    activation_bytes: int = 0
    constant_count: int = 0
    constant_bytes: int = 0
    conversions: list[tuple[SSAValue, TensorType, TensorType]] = field(default_factory=list)


class SelectionProblem:
    """Ops, their kernel choices, and the values between them, for one function."""

    def __init__(self, fn: func.FuncOp, planner: LayoutPlanner):
        self.fn = fn
        self.planner = planner
        self.ops: list[GraphOp] = [
            op
            for op in walk_outside_bodies(fn.body)
            if isinstance(op, GraphOp) and not isinstance(op, ConstantOp) and has_only_tensors(op)
        ]
        self.choices: dict[GraphOp, list[KernelChoice]] = {
            op: planner.choices(op) for op in self.ops
        }
        self._selectable = set(self.ops)
        self.values: list[SSAValue] = list(fn.body.block.args)
        for op in walk_outside_bodies(fn.body):
            self.values.extend(op.results)
        self.uses: dict[SSAValue, list[Use]] = {v: [] for v in self.values}
        for op in walk_outside_bodies(fn.body):
            for i, operand in enumerate(op.operands):
                if operand in self.uses and isinstance(operand.type, TensorType):
                    self.uses[operand].append(Use(operand, op, self._slot_index(op, i)))

    @staticmethod
    def _slot_index(op: Operation, flat_index: int) -> int:
        """Slot index (absent optional operands counted) of the ``flat_index``-th operand."""
        if not isinstance(op, GraphOp):
            return flat_index
        seen = -1
        for slot, value in enumerate(op.operand_slots()):
            if value is not None:
                seen += 1
                if seen == flat_index:
                    return slot
        raise IndexError(flat_index)

    # ---- types under a plan -------------------------------------------------------------
    def producer(self, value: SSAValue) -> GraphOp | None:
        owner = value.owner
        return owner if isinstance(owner, GraphOp) and owner in self._selectable else None

    def is_constant(self, value: SSAValue) -> bool:
        return isinstance(value.owner, ConstantOp)

    def produced_type(self, value: SSAValue, plan: Plan) -> TensorType:
        t = value.type
        assert isinstance(t, TensorType)
        producer = self.producer(value)
        if producer is None:
            return t if not self.is_constant(value) else origin_view(t)
        assert isinstance(value, OpResult)
        return self.planner.result_type(producer, plan[producer], value.index)

    def required_type(self, use: Use, plan: Plan) -> TensorType | None:
        if isinstance(use.consumer, func.ReturnOp):
            out = self.fn.function_type.outputs.data[use.index]
            return origin_view(out) if isinstance(out, TensorType) else None
        if isinstance(use.consumer, GraphOp) and use.consumer in self._selectable:
            return self.planner.operand_type(use.consumer, plan[use.consumer], use.index)
        t = use.value.type
        return t if isinstance(t, TensorType) else None  # other ops take what they get

    def required_types(self, value: SSAValue, plan: Plan) -> set[TensorType]:
        found = set()
        for use in self.uses[value]:
            t = self.required_type(use, plan)
            if t is not None:
                found.add(t)
        return found

    # ---- cost ---------------------------------------------------------------------------
    def cost(self, plan: Plan, values: Iterable[SSAValue] | None = None) -> PlanCost:
        """The conversions a plan implies (of ``values`` only, when given)."""
        total = PlanCost()
        for value in self.values if values is None else values:
            if not isinstance(value.type, TensorType):
                continue
            source = self.produced_type(value, plan)
            for target in sorted(self.required_types(value, plan), key=str):
                if target == source:
                    continue
                moved = conversion_bytes(source, target)
                total.conversions.append((value, source, target))
                if self.is_constant(value):
                    total.constant_count += 1
                    total.constant_bytes += moved
                else:
                    total.activation_count += 1
                    total.activation_bytes += moved
        return total

    def local_bytes(self, plan: Plan, op: GraphOp) -> int:
        """Activation bytes converted on ``op``'s operands and results under ``plan``: the
        part of the total cost that changing ``op``'s choice can change."""
        values = {v for v in op.operands if v in self.uses} | set(op.results)
        return self.cost(plan, values).activation_bytes

    # ---- helpers for strategies ---------------------------------------------------------
    def origin_choice(self, op: GraphOp) -> KernelChoice:
        """The choice that keeps every tensor in its origin view (the first if several)."""
        for choice in self.choices[op]:
            if all(
                t is None or t == origin_view(t) for t in self.planner.operand_types(op, choice)
            ) and all(
                self.planner.result_type(op, choice, j) == origin_view(r.type)  # type: ignore[arg-type]
                for j, r in enumerate(op.results)
            ):
                return choice
        return self.choices[op][0]

    def consumers(self, op: GraphOp) -> Iterable[Use]:
        for r in op.results:
            yield from self.uses.get(r, [])
