"""The base class of every ``graph`` op: ONNX-style attributes, one syntax, shape checks.

Each concrete op declares, on its class:

* its operands/results/properties with xDSL's ``operand_def``/``prop_def`` (ONNX attribute
  names kept; use :func:`int_attr`, :func:`ints_attr`, :func:`float_attr`, :func:`str_attr`),
* ``DEFAULTS``: ONNX default values of absent attributes,
* ``FACTS``: its :class:`~tilegraph.dialects.graph.facts.OpFacts`,
* ``infer_shapes``: the static shape function (origin shapes and element types),
* ``reference``: its numpy kernel with origin semantics (used by the reference interpreter),
* optionally ``cost`` for the layout cost model.

Custom syntax shared by all ops (absent optional operands are written ``none``)::

    %y = graph.relu %x : !layout.tensor<...>                      all types equal
    %y = graph.conv2d %x, %w, %b {strides = [2, 2], group = 1} : (T0, T1, T2) -> T3
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import Any, ClassVar, cast

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    OptionalDef,
    VariadicDef,
    VerificationContext,
    irdl_op_definition,
    opt_prop_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.graph.facts import OpCost, OpFacts
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import Dim, dim_to_text, dims_compatible
from tilegraph.symbolic.inference import ShapeError, inferring_unless_labelled

# ---- attribute declarations ---------------------------------------------------------------


def int_attr():
    """An optional ONNX int attribute, stored as ``IntegerAttr`` i64."""
    return opt_prop_def(IntegerAttr[I64])


def ints_attr():
    """An optional ONNX ints attribute, stored as ``DenseArrayBase`` (``array<i64: ...>``)."""
    return opt_prop_def(DenseArrayBase)


def float_attr():
    """An optional ONNX float attribute, stored as ``FloatAttr`` f32."""
    return opt_prop_def(FloatAttr[Float32Type])


def str_attr():
    """An optional ONNX string attribute."""
    return opt_prop_def(StringAttr)


def to_attribute(value: Any) -> Attribute:
    """Python value -> the attribute kind graph ops store (see the declarations above)."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, bool | np.bool_):
        return IntegerAttr(int(value), i64)
    if isinstance(value, int | np.integer):
        return IntegerAttr(int(value), i64)
    if isinstance(value, float | np.floating):
        return FloatAttr(float(value), f32)
    if isinstance(value, str):
        return StringAttr(value)
    if isinstance(value, Sequence | np.ndarray):
        items = (
            list(np.asarray(value).reshape(-1)) if isinstance(value, np.ndarray) else list(value)
        )
        if all(isinstance(v, int | np.integer) for v in items):
            return DenseArrayBase.from_list(i64, [int(v) for v in items])
        if all(isinstance(v, float | int | np.floating | np.integer) for v in items):
            return ArrayAttr([FloatAttr(float(v), f32) for v in items])
        return ArrayAttr([to_attribute(v) for v in items])
    raise TypeError(f"cannot store {value!r} as an attribute")


def from_attribute(attr: Attribute) -> Any:
    """Attribute -> plain Python value (int, float, str, tuple)."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    if isinstance(attr, ArrayAttr):
        return tuple(from_attribute(a) for a in attr.data)
    return attr


def _coerce(attr: Attribute, constr: Any) -> Attribute:
    """Make a parsed short-form value (``1``, ``[1, 2]``, ``0.5``) fit the declared kind."""
    try:
        constr.verify(attr, VerificationContext())
        return attr
    except VerifyException:
        pass
    if isinstance(attr, ArrayAttr) and all(isinstance(a, IntegerAttr) for a in attr.data):
        return DenseArrayBase.from_list(i64, [cast(IntegerAttr, a).value.data for a in attr.data])
    if isinstance(attr, FloatAttr | IntegerAttr):
        return FloatAttr(float(attr.value.data), f32)
    return attr


# ---- shape-function helpers ---------------------------------------------------------------


def constant_value(value: SSAValue | None) -> np.ndarray | None:
    """The data of a value produced by ``graph.constant``, else None."""
    if value is None:
        return None
    owner = value.owner
    fn = getattr(owner, "constant_array", None)
    return fn() if fn is not None else None


def tensor_type(value: SSAValue | None) -> TensorType | None:
    if value is None:
        return None
    t = value.type
    if not isinstance(t, TensorType):
        raise ShapeError(f"expected a !layout.tensor operand, got {t}")
    return t


class GraphOp(IRDLOperation):
    """Base class of graph ops (not an op itself); see the module docstring."""

    FACTS: ClassVar[OpFacts]
    DEFAULTS: ClassVar[Mapping[str, Any]] = {}
    ONNX_OP: ClassVar[str | None] = None
    """The ONNX op type this op mirrors (the importer's lookup key)."""
    ONNX_DOMAIN: ClassVar[str] = ""
    """The ONNX domain of ``ONNX_OP`` ("" = the default domain; e.g. ``ai.onnx.preview``)."""
    ONNX_IGNORED_ATTRS: ClassVar[frozenset[str]] = frozenset()
    """ONNX attributes the importer may drop (e.g. Dropout's ``seed``)."""

    @classmethod
    def accepts_onnx(cls, input_ranks: Sequence[int | None]) -> bool:
        """Whether this op implements an ONNX node with inputs of these ranks.

        Lets two ops share an ONNX op type (``graph.conv2d`` takes 4-D Conv, ``graph.conv``
        the rest). ``None`` stands for an absent optional input or an unknown rank.
        """
        return True

    @classmethod
    def accepts_operand_types(cls, types: Sequence[Attribute | None]) -> bool:
        """Whether this op takes operands of these types (``None``: absent): tensors only,
        unless the op handles sequences or optionals (``sequence.ValueOp``)."""
        return all(t is None or isinstance(t, TensorType) for t in types)

    # ---- attributes -------------------------------------------------------------------
    def attr(self, name: str) -> Any:
        """An attribute's Python value, or its ONNX default (None if it has none)."""
        attr = self.properties.get(name)
        if attr is None:
            return self.DEFAULTS.get(name)
        return from_attribute(attr)

    @classmethod
    def read_attr(cls, props: Mapping[str, Attribute], name: str) -> Any:
        attr = props.get(name)
        return cls.DEFAULTS.get(name) if attr is None else from_attribute(attr)

    # ---- shape inference ----------------------------------------------------------------
    @classmethod
    def infer_shapes(
        cls, operands: Sequence[SSAValue | None], props: Mapping[str, Attribute]
    ) -> list[TensorType]:
        """Result types (origin shape, element type; ND unless the op fixes a format).

        ``operands`` has one entry per operand slot; ``None`` for an absent optional one.
        Raises :class:`ShapeError` for inconsistent inputs.
        """
        raise NotImplementedError(f"{cls.name} has no shape function")

    def operand_slots(self) -> list[SSAValue | None]:
        """Operands by declared slot, ``None`` for absent optional ones."""
        slots: list[SSAValue | None] = []
        op_def = self.get_irdl_definition()
        for field_name, odef in op_def.operands:
            value = getattr(self, field_name)
            if isinstance(odef, VariadicDef) and not isinstance(odef, OptionalDef):
                slots.extend(value)
            else:
                slots.append(value)
        return slots

    def inferred_result_types(self) -> list[TensorType]:
        return self.infer_shapes(self.operand_slots(), self.properties)

    def verify_(self) -> None:
        for v in self.operands:
            if not isinstance(v.type, TensorType):
                raise VerifyException(f"operand of type {v.type} is not a !layout.tensor")
        try:
            inferred = self.inferred_result_types()
        except ShapeError as e:
            raise VerifyException(str(e)) from e
        if len(inferred) != len(self.results):
            raise VerifyException(f"expected {len(inferred)} results, got {len(self.results)}")
        for i, (res, want) in enumerate(zip(self.results, inferred, strict=True)):
            got = res.type
            if not isinstance(got, TensorType):
                raise VerifyException(f"result #{i} of type {got} is not a !layout.tensor")
            if got.element_type != want.element_type:
                raise VerifyException(
                    f"result #{i} has element type {got.element_type}, expected {want.element_type}"
                )
            if not shapes_compatible(got.origin_shape, want.origin_shape):
                raise VerifyException(
                    f"result #{i} has shape {shape_text(got.origin_shape)}, "
                    f"expected {shape_text(want.origin_shape)}"
                )

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def make(
        cls,
        *operands: SSAValue | Operation | None,
        result_types: Sequence[Attribute] | None = None,
        **attrs: Any,
    ) -> GraphOp:
        """Build the op from operand values (None for absent optionals) and Python attrs.

        Result types come from the shape function unless given. Attributes whose value is
        None are left out (ONNX default applies).
        """
        values = [None if o is None else SSAValue.get(o) for o in operands]
        props = {k: to_attribute(v) for k, v in attrs.items() if v is not None}
        op_def = cls.get_irdl_definition()
        prop_names = dict(op_def.properties)
        for k in list(props):
            if k not in prop_names:
                raise TypeError(f"{cls.name} has no attribute '{k}'")
            props[k] = _coerce(props[k], prop_names[k].constr)
        sizes = _segment_sizes(cls, values)
        if any(isinstance(o, AttrSizedOperandSegments) for o in op_def.options):
            props["operandSegmentSizes"] = DenseArrayBase.from_list(i32, sizes)
        if result_types is None:
            with inferring_unless_labelled(cls.name):
                result_types = cls.infer_shapes(values, props)
        return cls.create(
            operands=[v for v in values if v is not None],
            result_types=list(result_types),
            properties=props,
        )

    # ---- semantics hooks ----------------------------------------------------------------
    def storage_applies(
        self, operands: Sequence[TensorType | None], results: Sequence[TensorType]
    ) -> bool:
        """Whether this instance's kernel runs on these storage types: the types a kernel
        choice of ``FACTS.kernels`` gives each operand (None: no requirement) and result.

        The format engine asks it after the declared facts allow the choice
        (``LayoutPlanner``); an op whose kernel depends on its attributes or sizes (a concat
        along C needs whole C0 blocks) refuses what its class declares. Default: accept."""
        return True

    def reference(self, *inputs: np.ndarray | None) -> tuple[np.ndarray, ...]:
        """The op's numpy kernel with origin semantics, one array per result."""
        raise NotImplementedError(f"{self.name} has no reference kernel")

    def cost(self) -> OpCost:
        """Default cost: one flop per output element; bytes of all operands and results."""
        total_bytes = 0
        out_elems = 0
        for v in [*self.operands, *self.results]:
            t = v.type
            if isinstance(t, TensorType) and (n := t.num_elements()) is not None:
                total_bytes += n * t.dtype.bits // 8
        for r in self.results:
            t = r.type
            if isinstance(t, TensorType) and (n := t.num_elements()) is not None:
                out_elems += n
        return OpCost(flops=out_elems, bytes=total_bytes)

    # ---- syntax -------------------------------------------------------------------------
    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        entries: list[UnresolvedOperand | None] = []
        first = parser.parse_optional_unresolved_operand()
        if first is not None or parser.parse_optional_keyword("none"):
            entries.append(first)
            while parser.parse_optional_punctuation(","):
                if parser.parse_optional_keyword("none"):
                    entries.append(None)
                else:
                    entries.append(parser.parse_unresolved_operand())
        attr_pos = parser.pos
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        present = [e for e in entries if e is not None]
        n_results = len(cls.get_irdl_definition().results)
        if parser.parse_optional_punctuation("("):
            operand_types: list[Attribute] = []
            if not parser.parse_optional_punctuation(")"):
                operand_types = [parser.parse_type()]
                while parser.parse_optional_punctuation(","):
                    operand_types.append(parser.parse_type())
                parser.parse_punctuation(")")
            parser.parse_punctuation("->")
            if parser.parse_optional_punctuation("("):
                result_types = [parser.parse_type()]
                while parser.parse_optional_punctuation(","):
                    result_types.append(parser.parse_type())
                parser.parse_punctuation(")")
            else:
                result_types = [parser.parse_type()]
        else:
            t = parser.parse_type()
            operand_types = [t] * len(present)
            result_types = [t] * n_results
        if len(operand_types) != len(present):
            parser.raise_error(
                f"{cls.name}: {len(present)} operands but {len(operand_types)} operand types",
                type_pos,
            )
        resolved = iter(parser.resolve_operands(present, operand_types, type_pos))
        values = [None if e is None else next(resolved) for e in entries]
        op_def = cls.get_irdl_definition()
        prop_defs = dict(op_def.properties)
        props: dict[str, Attribute] = {}
        discardable: dict[str, Attribute] = {}
        for k, v in attrs.items():
            if k in prop_defs:
                props[k] = _coerce(v, prop_defs[k].constr)
            else:
                discardable[k] = v
        try:
            sizes = _segment_sizes(cls, values)
        except TypeError as e:
            parser.raise_error(str(e), attr_pos)
        if any(isinstance(o, AttrSizedOperandSegments) for o in op_def.options):
            props["operandSegmentSizes"] = DenseArrayBase.from_list(i32, sizes)
        return cls.create(
            operands=[v for v in values if v is not None],
            result_types=result_types,
            properties=props,
            attributes=discardable,
        )

    def print(self, printer: Printer) -> None:
        slots = self.operand_slots()
        while slots and slots[-1] is None:
            slots.pop()
        if slots:
            printer.print_string(" ")
            for i, v in enumerate(slots):
                if i:
                    printer.print_string(", ")
                if v is None:
                    printer.print_string("none")
                else:
                    printer.print_operand(v)
        entries = [(k, v) for k, v in self.properties.items() if k != "operandSegmentSizes"] + list(
            self.attributes.items()
        )
        if entries:
            printer.print_string(" {")
            for i, (k, v) in enumerate(entries):
                if i:
                    printer.print_string(", ")
                printer.print_identifier_or_string_literal(k)
                printer.print_string(" = ")
                _print_short(printer, v)
            printer.print_string("}")
        printer.print_string(" : ")
        operand_types = [v.type for v in self.operands]
        result_types = [r.type for r in self.results]
        everything = operand_types + result_types
        if operand_types and len(result_types) == 1 and all(t == everything[0] for t in everything):
            printer.print_attribute(everything[0])
            return
        printer.print_string("(")
        printer.print_list(operand_types, printer.print_attribute)
        printer.print_string(") -> ")
        if len(result_types) == 1:
            printer.print_attribute(result_types[0])
        else:
            printer.print_string("(")
            printer.print_list(result_types, printer.print_attribute)
            printer.print_string(")")


def _segment_sizes(cls: type[IRDLOperation], values: Sequence[SSAValue | None]) -> list[int]:
    """Operand segment sizes from slot values (``None`` = absent optional)."""
    defs = [d for _, d in cls.get_irdl_definition().operands]
    variadic = [
        i
        for i, d in enumerate(defs)
        if isinstance(d, VariadicDef) and not isinstance(d, OptionalDef)
    ]
    n_single = sum(1 for d in defs if not isinstance(d, VariadicDef))
    if variadic:
        if len(variadic) > 1 or any(isinstance(d, OptionalDef) for d in defs):
            raise TypeError(f"{cls.name}: ambiguous operand segments")
        if any(v is None for v in values):
            raise TypeError(f"{cls.name}: 'none' is only allowed for optional operands")
        n_var = len(values) - n_single
        if n_var < 0:
            raise TypeError(f"{cls.name}: expected at least {n_single} operands, got {len(values)}")
        return [n_var if i == variadic[0] else 1 for i in range(len(defs))]
    if len(values) > len(defs):
        raise TypeError(f"{cls.name}: expected at most {len(defs)} operands, got {len(values)}")
    sizes = []
    for i, d in enumerate(defs):
        v = values[i] if i < len(values) else None
        if v is None and not isinstance(d, OptionalDef):
            raise TypeError(f"{cls.name}: operand #{i} is required")
        sizes.append(0 if v is None else 1)
    return sizes


def _print_short(printer: Printer, attr: Attribute) -> None:
    """ONNX-like short forms: ``1``, ``0.5``, ``[1, 2]``, ``"SAME_UPPER"``."""
    if isinstance(attr, IntegerAttr) and attr.type == i64:
        printer.print_string(str(attr.value.data))
    elif isinstance(attr, FloatAttr) and attr.type == f32 and np.isfinite(attr.value.data):
        text = str(np.float32(attr.value.data))
        if "." not in text:  # MLIR float literals need a '.': 1e-05 -> 1.0e-05, 3 -> 3.0
            mantissa, e, exponent = text.partition("e")
            text = f"{mantissa}.0{e}{exponent}"
        printer.print_string(text)
    elif isinstance(attr, DenseArrayBase) and attr.elt_type == i64:
        printer.print_string("[" + ", ".join(str(v) for v in attr.get_values()) + "]")
    else:
        printer.print_attribute(attr)


def shape_text(shape: Sequence[Dim]) -> str:
    return "[" + ", ".join(dim_to_text(d) for d in shape) + "]"


def shapes_compatible(a: Sequence[Dim], b: Sequence[Dim]) -> bool:
    return len(a) == len(b) and all(dims_compatible(x, y) for x, y in zip(a, b, strict=True))


def numel(shape: Sequence[Dim]) -> int | None:
    if all(isinstance(d, int) and d >= 0 for d in shape):
        return prod(cast(Sequence[int], shape))
    return None


def declare_table_op(
    base: type[GraphOp], onnx_op: str, kernel: Callable[..., np.ndarray], doc: str, module: str
) -> type[GraphOp]:
    """An op class of a table-declared family: ``graph.<snake_case(onnx_op)>`` on ``base``,
    whose ``compute`` applies ``kernel`` to the operand arrays (so a family of ops that
    differ only in their numpy function is one line each)."""
    snake = "".join(
        f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(onnx_op)
    )
    namespace = {
        "__module__": module,
        "__qualname__": f"{onnx_op}Op",
        "__doc__": doc,
        "__annotations__": {"ONNX_OP": ClassVar},
        "name": f"graph.{snake}",
        "ONNX_OP": onnx_op,
        "compute": lambda self, *arrays: kernel(*arrays),
    }
    return irdl_op_definition(type(f"{onnx_op}Op", (base,), namespace))
