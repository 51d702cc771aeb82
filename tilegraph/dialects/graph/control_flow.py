"""Control flow as regions: ``graph.if``, ``graph.loop``, ``graph.scan``, ``graph.sequence_map``.

The structured form of ONNX's If / Loop / Scan / SequenceMap, like MLIR's ``scf``: each body
is a single-block region ending in ``graph.yield``. Bodies are isolated from above: the outer
values an ONNX subgraph reads by name (its captures) are trailing operands of the op, bound to
the trailing block arguments of every body, so a body is self-contained and the op runs like
any other op (its reference kernel evaluates the body)::

    %y = graph.if cond[%c] captures[%x] : (!layout.tensor<i1>, T) -> T {
    ^bb0(%x_1: T):
      %a = graph.relu %x_1 : T
      graph.yield %a : T
    } {
    ^bb0(%x_2: T):
      graph.yield %x_2 : T
    }

Each bracketed list is one operand group, named and in the order the op declares them (an
empty group is not printed). Values are ND:
the format engine and fusion leave the bodies alone (:func:`walk_outside_bodies`), so the
bodies run as host code with their reference kernels, unoptimised — except a Loop with a
compile-time trip count, whose body ``lower-graph-to-kernels`` optimises and lowers as a
device loop (:mod:`tilegraph.lowering.conversion.loop_launches`). Types of values whose shape
changes from one iteration to the next are joined (:func:`.value_types.join_types`): a dim
that differs becomes ``?``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, TypeVar, cast

import numpy as np
from xdsl.dialects.builtin import DenseArrayBase, FunctionType, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.traits import IsolatedFromAbove, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.base import GraphOp, ShapeError, ints_attr, to_attribute
from tilegraph.dialects.graph.fused import GraphBodies, YieldOp
from tilegraph.dialects.graph.sequence import ValueOp
from tilegraph.dialects.graph.shape_utils import normalize_axis
from tilegraph.dialects.graph.value_types import (
    SequenceType,
    element_tensor,
    join_types,
    sequence_of,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.formats.dims import UNKNOWN, Dim

T = TypeVar("T")

BodyBuilder = Callable[[str, Sequence[Attribute]], Block]
"""What the importer gives :meth:`RegionOp.from_onnx`: build the ONNX subgraph attribute
``name`` as a block whose leading arguments have the given types (the captures follow)."""

I64_SCALAR = TensorType([], element_type_of("int64"))
BOOL_SCALAR = TensorType([], element_type_of("bool"))


def nd(t: Attribute) -> Attribute:
    """``t`` with a tensor's storage view dropped (bodies hold ND values)."""
    if isinstance(t, TensorType):
        return TensorType(t.origin_shape, t.element_type, Format.ND)
    return t


def run_body(region: Region, args: Sequence[Any]) -> list[Any]:
    """Evaluate a body with the ops' reference kernels: the values ``graph.yield`` yields."""
    block = region.block
    env: dict[SSAValue, Any] = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        if isinstance(op, YieldOp):
            return [env[v] for v in op.values]
        if not isinstance(op, GraphOp):
            raise ShapeError(f"{op.name} cannot run in a control-flow body (graph ops only)")
        inputs = [None if v is None else env[v] for v in op.operand_slots()]
        with np.errstate(all="ignore"):  # IEEE values, as the interpreter runs them
            outputs = op.reference(*inputs)
        env.update(zip(op.results, outputs, strict=True))
    raise ShapeError("a control-flow body must end with graph.yield")


def yielded_types(block: Block) -> list[Attribute]:
    last = block.last_op
    if not isinstance(last, YieldOp):
        raise ShapeError("a control-flow body must end with graph.yield")
    return [v.type for v in last.values]


class RegionOp(ValueOp):
    """Base of the control-flow ops: operand groups in brackets, bodies after (see the
    module docstring), and the ONNX construction protocol used by the importer."""

    traits = traits_def(IsolatedFromAbove(), RecursiveMemoryEffect(), GraphBodies())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    ONNX_SUBGRAPHS: ClassVar[tuple[str, ...]] = ()
    """The ONNX graph attributes that become this op's regions, in region order."""
    ONNX_OPTIONAL_SUBGRAPHS: ClassVar[frozenset[str]] = frozenset()
    """Subgraphs a node may leave out: the body is then the identity (:func:`identity_body`)."""
    ONNX_STRUCTURAL_ATTRS: ClassVar[tuple[str, ...]] = ()
    """ONNX attributes that :meth:`from_onnx` turns into structure (not properties)."""

    @classmethod
    def from_onnx(
        cls, operands: Sequence[SSAValue | None], attrs: dict[str, Any], captures: list[SSAValue],
        build_body: BodyBuilder,
    ) -> RegionOp:  # fmt: skip
        """The op for an ONNX node (graph attributes already taken out of ``attrs``)."""
        raise NotImplementedError

    @classmethod
    def build(
        cls,
        groups: Sequence[Sequence[SSAValue]],
        result_types: Sequence[Attribute],
        regions: Sequence[Region],
        props: dict[str, Attribute] | None = None,
    ) -> RegionOp:
        props = dict(props or {})
        props["operandSegmentSizes"] = DenseArrayBase.from_list(i32, [len(g) for g in groups])
        return cls.create(
            operands=[v for g in groups for v in g],
            result_types=list(result_types),
            properties=props,
            regions=list(regions),
        )

    @property
    def captured_values(self) -> Sequence[SSAValue]:
        """The captures: the last operand group of every control-flow op."""
        return self.split_groups(self.operands)[-1]

    def sync_capture_types(self) -> None:
        """Give each body's trailing (capture) arguments their captured values' types again,
        after those values were retyped (a dim observed at run time)."""
        captured = self.captured_values
        for region in self.regions:
            args = region.block.args[len(region.block.args) - len(captured) :]
            for arg, value in zip(args, captured, strict=True):
                if arg.type != value.type:
                    Rewriter.replace_value_with_new_type(arg, value.type)

    def verify_(self) -> None:
        n_captures = len(self.captured_values)
        for region in self.regions:
            block = region.block
            tail = [a.type for a in block.args[len(block.args) - n_captures :]]
            if n_captures and tail != [v.type for v in self.captured_values]:
                raise VerifyException("a body's trailing arguments must have the captures' types")
            if not isinstance(block.last_op, YieldOp):
                raise VerifyException("a body must end with graph.yield")
        super().verify_()

    def reference(self, *inputs: Any) -> tuple[Any, ...]:
        groups = self.split_groups(inputs)
        return tuple(self.run(groups[:-1], groups[-1]))

    def run(self, groups: list[list[Any]], captured: list[Any]) -> list[Any]:
        """Execute the op: operand values by group (captures apart)."""
        raise NotImplementedError

    def split_groups(self, items: Sequence[T]) -> list[list[T]]:
        """``items`` (one per operand: the operands, or their run-time values) cut into the
        op's operand groups, in declaration order."""
        groups, start = [], 0
        for size in self.segment_sizes():
            groups.append(list(items[start : start + size]))
            start += size
        return groups

    def segment_sizes(self) -> list[int]:
        """The number of operands in each operand group, in declaration order."""
        attr = self.properties["operandSegmentSizes"]
        assert isinstance(attr, DenseArrayBase)
        return [int(s) for s in attr.get_values()]

    def operand_slots(self) -> list[SSAValue | None]:
        return list(self.operands)

    # ---- syntax -------------------------------------------------------------------------
    def print(self, printer: Printer) -> None:
        for (name, _), group in zip(
            self.get_irdl_definition().operands, self.split_groups(self.operands), strict=True
        ):
            if group:
                printer.print_string(f" {name}[")
                printer.print_list(group, printer.print_operand)
                printer.print_string("]")
        props = {k: v for k, v in self.properties.items() if k != "operandSegmentSizes"}
        printer.print_op_attributes({**props, **self.attributes})
        printer.print_string(" : ")
        printer.print_attribute(
            FunctionType.from_lists([v.type for v in self.operands], [r.type for r in self.results])
        )
        for region in self.regions:
            printer.print_string(" ")
            printer.print_region(region, print_entry_block_args=True, print_empty_block=True)

    @classmethod
    def parse(cls, parser: Parser) -> RegionOp:
        groups: list[list[UnresolvedOperand]] = []
        for name, _ in cls.get_irdl_definition().operands:
            if parser.parse_optional_keyword(name):
                groups.append(
                    parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE, parser.parse_unresolved_operand
                    )
                )
            else:
                groups.append([])
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        function_type = parser.parse_function_type()
        flat = [u for g in groups for u in g]
        values = parser.resolve_operands(flat, function_type.inputs.data, pos)
        regions = [parser.parse_region() for _ in cls.get_irdl_definition().regions]
        resolved, start = [], 0
        for g in groups:
            resolved.append(values[start : start + len(g)])
            start += len(g)
        prop_names = set(dict(cls.get_irdl_definition().properties))
        props = {k: v for k, v in attrs.items() if k in prop_names}
        op = cls.build(resolved, function_type.outputs.data, regions, props)
        op.attributes.update({k: v for k, v in attrs.items() if k not in prop_names})
        return op


def identity_body(formal: Sequence[Attribute], captured: Sequence[Attribute]) -> Block:
    """The body of an absent optional subgraph: it yields its ``formal`` arguments (the
    captured ones follow them, unused)."""
    block = Block(arg_types=[*formal, *captured])
    block.add_op(YieldOp(*block.args[: len(formal)]))
    return block


def settle_carried(
    build: Callable[[list[Attribute]], Block], carried: list[Attribute], first: int, what: str
) -> Block:
    """The body built with ``carried`` types for the values it carries from one iteration to
    the next, joined with the types it yields for them (from yield position ``first``) until
    the two agree: a value whose shape changes across iterations gets ``?`` dims."""
    for _ in range(4):
        block = build(carried)
        yielded = yielded_types(block)
        if len(yielded) < first + len(carried):
            raise ShapeError(
                f"the body yields {len(yielded)} values, expected at least {first + len(carried)}"
            )
        joined = [
            join_types(c, y, f"{what} #{i}")
            for i, (c, y) in enumerate(zip(carried, yielded[first:], strict=False))
        ]
        if joined == carried:
            return block
        carried = joined
    raise ShapeError(f"the {what} types do not settle")


def _check_count(got: int, want: int, what: str) -> None:
    if got != want:
        raise ShapeError(f"{what}: expected {want}, got {got}")


@irdl_op_definition
class IfOp(RegionOp):
    """ONNX If: the results of ``then_region`` when the bool scalar ``cond`` holds, else of
    ``else_region``; each result's type joins the two branches' types."""

    name = "graph.if"
    ONNX_OP: ClassVar = "If"
    ONNX_SUBGRAPHS: ClassVar = ("then_branch", "else_branch")
    cond = operand_def(TensorType)
    captures = var_operand_def()
    outputs = var_result_def()
    then_region = region_def("single_block")
    else_region = region_def("single_block")

    @classmethod
    def from_onnx(cls, operands, attrs, captures, build_body):
        (cond,) = operands
        assert cond is not None
        then_block = build_body("then_branch", [])
        else_block = build_body("else_branch", [])
        return cls.build(
            [[cond], captures],
            cls._joined(then_block, else_block),
            [Region(then_block), Region(else_block)],
        )

    @staticmethod
    def _joined(then_block: Block, else_block: Block) -> list[Attribute]:
        then_types, else_types = yielded_types(then_block), yielded_types(else_block)
        _check_count(len(else_types), len(then_types), "else_branch outputs")
        return [
            join_types(a, b, f"If output #{i}")
            for i, (a, b) in enumerate(zip(then_types, else_types, strict=True))
        ]

    def inferred_result_types(self) -> list[TensorType]:
        return cast(list[TensorType], self._joined(self.then_region.block, self.else_region.block))

    def run(self, groups, captured):
        ((cond,),) = groups
        region = self.then_region if bool(np.asarray(cond).reshape(-1)[0]) else self.else_region
        return run_body(region, captured)


@irdl_op_definition
class LoopOp(RegionOp):
    """ONNX Loop: runs the body while ``iteration < max_trip_count`` (if given) and the
    condition holds (``condition`` first, then the body's first result). Body arguments:
    the iteration number (int64), the condition (bool), the loop-carried values; it yields
    the condition, the carried values and the scan outputs. Results: the final carried
    values, then each scan output stacked along a new leading axis."""

    name = "graph.loop"
    ONNX_OP: ClassVar = "Loop"
    ONNX_SUBGRAPHS: ClassVar = ("body",)
    max_trip_count = opt_operand_def(TensorType)
    condition = opt_operand_def(TensorType)
    initial = var_operand_def()
    captures = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")

    @classmethod
    def from_onnx(cls, operands, attrs, captures, build_body):
        trip, cond, *initial = list(operands) + [None] * max(0, 2 - len(operands))
        if any(v is None for v in initial):
            raise ShapeError("a loop-carried initial value is missing")
        carried = [nd(v.type) for v in cast(list[SSAValue], initial)]
        block = settle_carried(
            lambda types: build_body("body", [I64_SCALAR, BOOL_SCALAR, *types]),
            carried,
            first=1,
            what="loop-carried value",
        )
        groups = [[v] if v is not None else [] for v in (trip, cond)]
        result_types = cls._result_types(block, len(initial))
        return cls.build(
            [*groups, cast(list[SSAValue], initial), captures], result_types, [Region(block)]
        )

    @staticmethod
    def _result_types(block: Block, n_carried: int) -> list[Attribute]:
        carried = [a.type for a in block.args[2 : 2 + n_carried]]
        scans = [_stacked(t, 0, UNKNOWN) for t in yielded_types(block)[1 + n_carried :]]
        return [*carried, *scans]

    def inferred_result_types(self) -> list[TensorType]:
        return cast(list[TensorType], self._result_types(self.body.block, len(self.initial)))

    def run(self, groups, captured):
        (trip,), (cond,) = (g or [None] for g in groups[:2])
        carried = list(groups[2])
        limit = None if trip is None else int(np.asarray(trip).reshape(-1)[0])
        go = True if cond is None else bool(np.asarray(cond).reshape(-1)[0])
        scans: list[list[np.ndarray]] = []
        i = 0
        while go and (limit is None or i < limit):
            outs = run_body(self.body, [np.array(i, np.int64), np.array(go), *carried, *captured])
            go = bool(np.asarray(outs[0]).reshape(-1)[0])
            carried = outs[1 : 1 + len(carried)]
            scans.append([np.asarray(s) for s in outs[1 + len(carried) :]])
            i += 1
        stacked = []
        for k, r in enumerate(self.results[len(carried) :]):
            if scans:
                stacked.append(np.stack([s[k] for s in scans]))
            else:
                stacked.append(_empty_like_type(r.type))
        return [*carried, *stacked]


def _stacked(t: Attribute, axis: int, length: Dim) -> Attribute:
    """The type of slices of type ``t`` stacked along a new ``axis`` of ``length``."""
    if not isinstance(t, TensorType):
        raise ShapeError(f"a scan output must be a tensor, got {t}")
    dims = list(t.origin_shape)
    dims.insert(normalize_axis(axis, t.rank + 1, "scan output axis"), length)
    return TensorType(dims, t.element_type)


def _empty_like_type(t: Attribute) -> np.ndarray:
    assert isinstance(t, TensorType)
    shape = [0] + [d if isinstance(d, int) and d >= 0 else 0 for d in t.origin_shape[1:]]
    return np.zeros(shape, t.dtype.numpy)


@irdl_op_definition
class ScanOp(RegionOp):
    """ONNX Scan (9+): the body runs once per slice of the scan inputs along their scan
    axes (reversed where ``scan_input_directions`` says 1), carrying the states; results are
    the final states, then each scan output's slices stacked along its output axis (in
    reverse order where ``scan_output_directions`` says 1)."""

    name = "graph.scan"
    ONNX_OP: ClassVar = "Scan"
    ONNX_SUBGRAPHS: ClassVar = ("body",)
    ONNX_STRUCTURAL_ATTRS: ClassVar = ("num_scan_inputs",)
    initial = var_operand_def()
    scan_inputs = var_operand_def(TensorType)
    captures = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")
    scan_input_axes = ints_attr()
    scan_input_directions = ints_attr()
    scan_output_axes = ints_attr()
    scan_output_directions = ints_attr()

    @classmethod
    def from_onnx(cls, operands, attrs, captures, build_body):
        n_scan = attrs.pop("num_scan_inputs", None)
        if n_scan is None:
            raise ShapeError("Scan needs the 'num_scan_inputs' attribute")
        values = cast(list[SSAValue], list(operands))
        if any(v is None for v in values) or len(values) < n_scan:
            raise ShapeError(f"Scan takes states and {n_scan} scan inputs, all given")
        states, scans = values[: len(values) - n_scan], values[len(values) - n_scan :]
        props = {k: to_attribute(v) for k, v in attrs.items()}
        in_axes = _ints(attrs, "scan_input_axes", len(scans))
        slices: list[Attribute] = []
        for v, axis in zip(scans, in_axes, strict=True):
            t = cast(TensorType, v.type)
            dims = list(t.origin_shape)
            del dims[normalize_axis(axis, t.rank, "scan input axis")]
            slices.append(TensorType(dims, t.element_type))
        block = settle_carried(
            lambda types: build_body("body", [*types, *slices]),
            [nd(v.type) for v in states],
            first=0,
            what="scan state",
        )
        types = _scan_result_types(block, len(states), scans, attrs)
        return cls.build([states, scans, captures], types, [Region(block)], props)

    def inferred_result_types(self) -> list[TensorType]:
        attrs = self.properties_as_attrs()
        types = _scan_result_types(self.body.block, len(self.initial), self.scan_inputs, attrs)
        return cast(list[TensorType], types)

    def properties_as_attrs(self) -> dict[str, Any]:
        return {k: self.attr(k) for k in self.properties if k != "operandSegmentSizes"}

    def run(self, groups, captured):
        states, scans = list(groups[0]), [np.asarray(s) for s in groups[1]]
        attrs = self.properties_as_attrs()
        in_axes = [
            a % max(s.ndim, 1)
            for a, s in zip(_ints(attrs, "scan_input_axes", len(scans)), scans, strict=True)
        ]
        in_dirs = _ints(attrs, "scan_input_directions", len(scans))
        length = scans[0].shape[in_axes[0]] if scans else 0
        outputs: list[list[np.ndarray]] = []
        for t in range(length):
            slices = [
                np.take(s, length - 1 - t if d else t, axis=a)
                for s, a, d in zip(scans, in_axes, in_dirs, strict=True)
            ]
            outs = run_body(self.body, [*states, *slices, *captured])
            states = outs[: len(states)]
            outputs.append([np.asarray(o) for o in outs[len(states) :]])
        n_out = len(self.results) - len(states)
        out_axes = _ints(attrs, "scan_output_axes", n_out)
        out_dirs = _ints(attrs, "scan_output_directions", n_out)
        stacked = []
        for k in range(n_out):
            parts = [o[k] for o in outputs]
            if out_dirs[k]:
                parts.reverse()
            rank = (
                parts[0].ndim + 1
                if parts
                else cast(TensorType, self.results[len(states) + k].type).rank
            )
            axis = out_axes[k] % rank
            stacked.append(
                np.stack(parts, axis=axis)
                if parts
                else _empty_like_type(self.results[len(states) + k].type)
            )
        return [*states, *stacked]


def _scan_result_types(
    block: Block, n_states: int, scans: Sequence[SSAValue], attrs: dict[str, Any]
) -> list[Attribute]:
    """Final states (the body's state arguments), then the scan outputs: the yielded slices
    stacked along their output axes, as long as the scan inputs' scan axis."""
    states = [a.type for a in block.args[:n_states]]
    outs = yielded_types(block)[n_states:]
    out_axes = _ints(attrs, "scan_output_axes", len(outs))
    length: Dim = UNKNOWN
    if scans:
        first = cast(TensorType, scans[0].type)
        axis = _ints(attrs, "scan_input_axes", len(scans))[0]
        length = first.origin_shape[normalize_axis(axis, first.rank, "scan input axis")]
    return [*states, *(_stacked(t, a, length) for t, a in zip(outs, out_axes, strict=True))]


def _ints(attrs: dict[str, Any], name: str, count: int) -> list[int]:
    value = attrs.get(name)
    if value is None:
        return [0] * count
    values = [int(v) for v in value]
    _check_count(len(values), count, name)
    return values


@irdl_op_definition
class SequenceMapOp(RegionOp):
    """ONNX SequenceMap: the body applied to the i-th element of every sequence operand (a
    tensor operand is passed whole each time); each body output gives a sequence."""

    name = "graph.sequence_map"
    ONNX_OP: ClassVar = "SequenceMap"
    ONNX_SUBGRAPHS: ClassVar = ("body",)
    input_sequence = operand_def(SequenceType)
    additional_inputs = var_operand_def()
    captures = var_operand_def()
    outputs = var_result_def()
    body = region_def("single_block")

    @classmethod
    def from_onnx(cls, operands, attrs, captures, build_body):
        values = cast(list[SSAValue], [v for v in operands if v is not None])
        formal = [
            element_tensor(v.type, "SequenceMap")
            if isinstance(v.type, SequenceType)
            else nd(v.type)
            for v in values
        ]
        block = build_body("body", formal)
        types = [sequence_of(t) for t in yielded_types(block)]
        return cls.build([values[:1], values[1:], captures], types, [Region(block)])

    def inferred_result_types(self) -> list[TensorType]:
        return cast(list[TensorType], [sequence_of(t) for t in yielded_types(self.body.block)])

    def run(self, groups, captured):
        inputs = [*groups[0], *groups[1]]
        is_seq = [
            isinstance(v.type, SequenceType) for v in [self.input_sequence, *self.additional_inputs]
        ]
        length = len(inputs[0])
        results: list[list[Any]] = [[] for _ in self.results]
        for i in range(length):
            args = [x[i] if s else x for x, s in zip(inputs, is_seq, strict=True)]
            for acc, out in zip(results, run_body(self.body, [*args, *captured]), strict=True):
                acc.append(np.asarray(out))
        return results


def walk_outside_bodies(root: Operation | Region) -> Iterator[Operation]:
    """Every op nested in ``root`` (and ``root`` itself when it is an op), except the ops
    inside control-flow bodies: what the format engine, fusion and the lowering look at
    (the bodies run as host code, unoptimised)."""
    if isinstance(root, Operation):
        yield root
        if isinstance(root, RegionOp):
            return
        regions: Sequence[Region] = root.regions
    else:
        regions = [root]
    for region in regions:
        for block in region.blocks:
            for inner in block.ops:
                yield from walk_outside_bodies(inner)


def has_only_tensors(op: Operation) -> bool:
    """Whether every operand and result of ``op`` is a tensor (no sequence, no optional)."""
    return all(isinstance(v.type, TensorType) for v in (*op.operands, *op.results))


CONTROL_FLOW_OPS: list[type[GraphOp]] = [IfOp, LoopOp, ScanOp, SequenceMapOp]
