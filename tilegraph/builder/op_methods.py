"""The builder's op methods, generated from the graph op classes.

:func:`method_specs` reads every class of :data:`~tilegraph.dialects.graph.GRAPH_OPS` (its
name, operand and property definitions, ``DEFAULTS``) into an :class:`OpSpec`;
:func:`make_method` turns a spec into a ``GraphBuilder`` method that binds operands and
attributes, checks them (errors name the method and the argument) and calls the class's
``make``. Nothing here is written per op.
"""

from __future__ import annotations

import difflib
import inspect
import keyword
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import OptionalDef, VariadicDef, VerificationContext
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.graph import GRAPH_OPS, ConstantOp, GraphOp
from tilegraph.dialects.graph.base import _coerce, to_attribute
from tilegraph.dialects.graph.dense import DenseAttr
from tilegraph.dialects.layout_type import TensorType

if TYPE_CHECKING:
    from tilegraph.builder.graph_builder import GraphBuilder

ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "batch_normalization": "batch_norm",
        "instance_normalization": "instance_norm",
        "layer_normalization": "layer_norm",
        "rms_normalization": "rms_norm",
        "average_pool": "avg_pool",
        "global_average_pool": "global_avg_pool",
    }
)
"""ONNX's names of ops whose graph name is shorter (alias -> method)."""


@dataclass(frozen=True)
class Slot:
    """One operand definition: its name, and whether it may be absent or repeated."""

    name: str
    optional: bool
    variadic: bool


@dataclass(frozen=True)
class OpSpec:
    """One builder method: the op class it builds, or the ONNX family it chooses from by
    the operands, as the importer chooses (``conv``: ``graph.conv2d`` for a 4-D input,
    ``graph.conv`` for a 3-D or 5-D one)."""

    method: str
    classes: tuple[type[GraphOp], ...]
    slots: tuple[Slot, ...]
    attributes: tuple[str, ...]

    @staticmethod
    def of(method: str, classes: Sequence[type[GraphOp]]) -> OpSpec:
        slots, attributes = call_form(classes[0])
        return OpSpec(method, tuple(classes), slots, attributes)

    @property
    def single_result(self) -> bool:
        """One fixed result (the method returns it; otherwise a tuple)."""
        results = self.classes[0].get_irdl_definition().results
        return len(results) == 1 and not isinstance(results[0][1], VariadicDef)

    def choose(self, values: Sequence[SSAValue | None]) -> type[GraphOp]:
        """The class to build for these operands: the first that takes their ranks (and,
        where the op class says, their types), the importer's rule. ValueError if none."""
        if len(self.classes) == 1:
            return self.classes[0]
        types = [None if v is None else v.type for v in values]
        ranks = [t.rank if isinstance(t, TensorType) else None for t in types]
        while ranks and ranks[-1] is None:
            ranks.pop()
        for cls in self.classes:
            takes_types = getattr(cls, "accepts_operand_types", None)
            if cls.accepts_onnx(ranks) and (takes_types is None or takes_types(types)):
                return cls
        names = ", ".join(c.name for c in self.classes)
        raise ValueError(f"{self.method}(): none of {names} takes operands of ranks {ranks}")

    def bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """(slot name, argument) per operand in slot order, a variadic slot's arguments
        one by one, an absent optional one as None. TypeError for too many, missing or
        repeated operands."""
        slots = self.slots
        variadic = next((i for i, s in enumerate(slots) if s.variadic), None)
        given: dict[str, Any] = {}
        if variadic is None:
            if len(args) > len(slots):
                raise TypeError(
                    f"{self.method}() takes at most {len(slots)} operand(s) "
                    f"({self.operand_list()}), got {len(args)}"
                )
            given.update(zip((s.name for s in slots), args, strict=False))
        else:
            # the slots after the variadic one take the last positional arguments
            after = min(len(slots) - variadic - 1, max(len(args) - variadic, 0))
            middle = args[variadic : len(args) - after]
            given.update(zip((s.name for s in slots[:variadic]), args[:variadic], strict=False))
            if middle:
                given[slots[variadic].name] = list(middle)
            tail = args[len(args) - after :] if after else []
            given.update(zip((s.name for s in slots[variadic + 1 :]), tail, strict=False))
        for k, v in kwargs.items():
            if k in given:
                raise TypeError(f"{self.method}() got operand '{k}' twice")
            given[k] = v
        bound: list[tuple[str, Any]] = []
        for s in slots:
            value = given.get(s.name)
            if s.variadic:
                items = [] if value is None else value
                if not isinstance(items, Sequence) or isinstance(items, str):
                    raise TypeError(f"{self.method}(): operand '{s.name}' takes a list of values")
                bound += [(s.name, v) for v in items]
            elif value is None and not s.optional:
                raise TypeError(f"{self.method}() missing operand '{s.name}'")
            else:
                bound.append((s.name, value))
        return bound

    def operand_list(self) -> str:
        """``input, weight, bias=None`` / ``*inputs``, for messages and docs."""
        return ", ".join(
            f"*{s.name}" if s.variadic else f"{s.name}=None" if s.optional else s.name
            for s in self.slots
        )

    def describe(self) -> str:
        """The method's docstring: the op(s), operands, attributes with ONNX defaults."""
        cls = self.classes[0]
        ops = " / ".join(f"``{c.name}``" for c in self.classes)
        onnx = f" (ONNX {cls.ONNX_OP})" if cls.ONNX_OP else ""
        lines = [f"Append {ops}{onnx}; returns {self._returns()}."]
        if len(self.classes) > 1:
            lines.append("The op is chosen from the operands, as the ONNX importer chooses.")
        own = next((c for c in self.classes if c.name == f"graph.{self.method}"), cls)
        summary = (inspect.getdoc(own) or "").split("\n\n")[0].strip()
        if summary:
            lines += ["", summary]
        lines += ["", f"Operands: {self.operand_list() or 'none'}."]
        if self.attributes:
            defaults = cls.DEFAULTS
            attrs = [f"{a}={defaults[a]!r}" if a in defaults else a for a in self.attributes]
            lines.append(f"Attributes (keywords; left out: the ONNX default): {', '.join(attrs)}.")
        return "\n".join(lines)

    def _returns(self) -> str:
        if self.single_result:
            return "its result"
        results = self.classes[0].get_irdl_definition().results
        return f"a tuple of its results ({', '.join(n for n, _ in results)})"

    def signature(self) -> inspect.Signature:
        """For ``help()`` and ``inspect``: operands, then the attributes and ``name`` as
        keywords (an attribute's default shown is the ONNX default it gets when left out)."""
        P = inspect.Parameter
        params = [P("self", P.POSITIONAL_ONLY)]
        kind, optional_seen = P.POSITIONAL_OR_KEYWORD, False
        for s in self.slots:
            if s.variadic:
                params.append(P(s.name, P.VAR_POSITIONAL, annotation="Operand"))
                kind = P.KEYWORD_ONLY
                continue
            optional_seen = optional_seen or s.optional  # no required one after a default
            default = None if optional_seen else P.empty
            params.append(P(s.name, kind, default=default, annotation="Operand"))
        defaults = self.classes[0].DEFAULTS
        for a in self.attributes:
            params.append(P(a, P.KEYWORD_ONLY, default=defaults.get(a), annotation="Any"))
        params.append(P("name", P.KEYWORD_ONLY, default=None, annotation="str | None"))
        return inspect.Signature(params, return_annotation="Any")

    def check_keywords(self, kwargs: Collection[str]) -> None:
        """TypeError for a keyword that is neither an operand nor an attribute."""
        known = [*(s.name for s in self.slots), *self.attributes]
        for k in kwargs:
            if k not in known:
                close = difflib.get_close_matches(k, known, 1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise TypeError(
                    f"{self.method}() got an unexpected keyword '{k}'{hint}; operands: "
                    f"{self.operand_list() or 'none'}; attributes: "
                    f"{', '.join(self.attributes) or 'none'}"
                )


def call_form(cls: type[GraphOp]) -> tuple[tuple[Slot, ...], tuple[str, ...]]:
    """An op class's operand slots and attribute names (how it is called)."""
    op_def = cls.get_irdl_definition()
    slots = tuple(
        Slot(
            n,
            optional=isinstance(d, OptionalDef),
            variadic=isinstance(d, VariadicDef) and not isinstance(d, OptionalDef),
        )
        for n, d in op_def.operands
    )
    attributes = tuple(p for p in op_def.properties if p != "operandSegmentSizes")
    return slots, attributes


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def _chooses_by_operands(cls: type[GraphOp]) -> bool:
    """Whether the class narrows the operands it takes (so a family can choose by them)."""
    mine = [getattr(cls, n, None) for n in ("accepts_onnx", "accepts_operand_types")]
    base = [getattr(GraphOp, n, None) for n in ("accepts_onnx", "accepts_operand_types")]
    return any(
        m is not None and getattr(m, "__func__", m) is not getattr(b, "__func__", b)
        for m, b in zip(mine, base, strict=True)
    )


def method_specs(reserved: Collection[str]) -> dict[str, OpSpec]:
    """Method name -> spec for every graph op built from operands and attributes (ops
    with regions are not; ``graph.constant`` is the builder's ``constant``).

    A method is named after its op (``graph.max_pool`` -> ``max_pool``), with ``_``
    appended to a Python keyword or a name in ``reserved`` (the builder's own methods).
    A method named after an ONNX op that several graph ops implement (``conv``) takes the
    whole ONNX op: it chooses among them by the operands, when they are called alike and
    say which operands they take. :data:`ALIASES` add ONNX's long names.
    """
    families: dict[str, list[type[GraphOp]]] = {}
    for cls in GRAPH_OPS:
        if cls.ONNX_OP is not None:
            families.setdefault(cls.ONNX_OP, []).append(cls)
    specs: dict[str, OpSpec] = {}
    for cls in GRAPH_OPS:
        if cls is ConstantOp or cls.get_irdl_definition().regions:
            continue
        method = cls.name.split(".", 1)[1]
        if keyword.iskeyword(method) or method in reserved:
            method += "_"
        members = families.get(cls.ONNX_OP or "", [cls])
        whole_onnx_op = (
            _snake(cls.ONNX_OP or "") == method
            and len({call_form(c) for c in members}) == 1
            and any(_chooses_by_operands(c) for c in members)
        )
        specs[method] = OpSpec.of(method, members if whole_onnx_op else [cls])
    for alias, target in ALIASES.items():
        if target in specs and alias not in specs:
            specs[alias] = replace(specs[target], method=alias)
    return specs


def attribute_kind(constr: Any) -> str:
    """What a property constraint takes, in words (for error messages)."""
    base = getattr(constr, "base_attr", None) or getattr(constr, "attr", None)
    kinds = {
        "IntegerAttr": "an int",
        "FloatAttr": "a float",
        "StringAttr": "a string",
        "DenseArrayBase": "a list of ints",
        "ArrayAttr": "a list",
        "DenseAttr": "a numpy array",
    }
    return kinds.get(getattr(base, "__name__", ""), f"a value matching {constr}")


def attribute(method: str, cls: type[GraphOp], name: str, value: Any) -> Attribute:
    """``value`` (a Python value or an attribute) as the property ``cls`` declares for
    ``name``: the conversion ``make`` applies, checked here so that a wrong kind is a
    TypeError naming the method and attribute instead of an op that fails later."""
    constr = cls.get_irdl_definition().properties[name].constr
    kind = attribute_kind(constr)
    try:
        if isinstance(value, np.ndarray) and kind == "a numpy array":
            return DenseAttr.from_array(value)
        attr = _coerce(to_attribute(value), constr)
        constr.verify(attr, VerificationContext())
        return attr
    except (TypeError, ValueError, VerifyException):
        raise TypeError(f"{method}(): attribute '{name}' takes {kind}, got {value!r}") from None


def make_method(spec: OpSpec) -> Callable[..., Any]:
    """The ``GraphBuilder`` method for ``spec`` (documented and introspectable)."""
    single = spec.single_result

    def method(self: GraphBuilder, *args: Any, name: str | None = None, **kwargs: Any) -> Any:
        results = self._call(spec, args, kwargs, name)
        return results[0] if single else tuple(results)

    method.__name__ = spec.method
    method.__qualname__ = f"GraphBuilder.{spec.method}"
    method.__doc__ = spec.describe()
    method.__signature__ = spec.signature()  # type: ignore[attr-defined]
    return method
