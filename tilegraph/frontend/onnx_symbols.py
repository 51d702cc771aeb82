"""Names and dims of an ONNX graph's inputs: SSA names from ONNX names, and the symbol (or
size) each input axis gets — named dim_params share a symbol, anonymous ones get fresh
symbols, and with a :class:`ShapeEnv` the env decides from concrete inputs' sizes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import onnx
from xdsl.ir import Attribute

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.layout import TensorType
from tilegraph.formats.dims import Dim, shape_symbol
from tilegraph.frontend.onnx_subgraphs import proto_value_type
from tilegraph.symbolic.env import ShapeEnv
from tilegraph.symbolic.guards import GuardError

_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")


def ssa_name(onnx_name: str) -> str | None:
    """An SSA name hint for an ONNX value name (``123`` -> ``v123``, ``a/b:0`` -> ``a_b_0``)."""
    if not onnx_name:
        return None
    name = _NAME_CHARS.sub("_", onnx_name)
    return name if name[0].isalpha() or name[0] == "_" else f"v{name}"


def value_type_of(value_info: onnx.ValueInfoProto, fresh: SymbolSource) -> Attribute:
    t = value_info.type
    if not t.HasField("tensor_type"):
        return proto_value_type(t, f"input '{value_info.name}'")
    tt = t.tensor_type
    dtype = onnx_dtype_name(tt.elem_type)
    if not tt.HasField("shape"):
        raise ValueError(f"input '{value_info.name}' has unknown rank")
    dims: list[Dim] = []
    for axis, d in enumerate(tt.shape.dim):
        if d.HasField("dim_value") and d.dim_value >= 0:
            dims.append(fresh.static(value_info.name, axis, int(d.dim_value)))
        else:
            dims.append(fresh.dim(value_info.name, axis, d.dim_param if _is_named(d) else None))
    return TensorType(dims, element_type_of(dtype))


_ANONYMOUS_DIM_PARAMS = ("", "?")
"""dim_params that name no dimension: each such axis is its own unknown (exporters such as
Paddle2ONNX write ``?``); only equal *named* dim_params are the same dimension."""


def _is_named(d: onnx.TensorShapeProto.Dimension) -> bool:
    return d.HasField("dim_param") and d.dim_param.strip() not in _ANONYMOUS_DIM_PARAMS


def named_dim_symbols(graph: onnx.GraphProto) -> set[str]:
    """Symbol names of the named input dims, reserved so that a fresh ``sK`` for an
    anonymous axis never coincides with a dim_param that happens to be called ``sK``."""
    return {
        ssa_name(d.dim_param) or "s"
        for vi in graph.input
        if vi.type.HasField("tensor_type")
        for d in vi.type.tensor_type.shape.dim
        if _is_named(d)
    }


@dataclass
class SymbolSource:
    """Dims of the graph inputs' axes: a static size, a named dim's symbol (equal names are
    one symbol), a fresh symbol for an anonymous one. Shared with :mod:`tilegraph.builder`."""

    used: set[str] = field(default_factory=set)
    counter: int = 0

    def static(self, name: str, axis: int, size: int) -> Dim:
        return size

    def dim(self, name: str, axis: int, param: str | None) -> Dim:
        return self.named(param) if param is not None else self.next()

    def named(self, name: str) -> Dim:
        ident = ssa_name(name) or "s"
        self.used.add(ident)
        return shape_symbol(ident)

    def next(self) -> Dim:
        while f"s{self.counter}" in self.used:
            self.counter += 1
        name = f"s{self.counter}"
        self.used.add(name)
        return shape_symbol(name)


@dataclass
class HintedSymbols(SymbolSource):
    """Input dims from a :class:`ShapeEnv` and the sizes of concrete inputs (the hints):
    every axis that is not a static size becomes what the env's mode makes of it (a symbol,
    a duck-shared symbol, or a specialised constant, with its guard); static sizes must
    match the inputs."""

    env: ShapeEnv = field(default_factory=ShapeEnv)
    shapes: Mapping[str, Sequence[int]] = field(default_factory=dict)
    origins: dict[str, tuple[str, int]] = field(default_factory=dict)

    def _hint(self, name: str, axis: int) -> int:
        shape = self.shapes.get(name)
        if shape is None:
            raise ValueError(f"no shape given for input '{name}'")
        if axis >= len(shape):
            raise ValueError(f"input '{name}' has rank {len(shape)}, the model says more")
        return int(shape[axis])

    def static(self, name: str, axis: int, size: int) -> Dim:
        if name in self.shapes and self._hint(name, axis) != size:
            raise ValueError(
                f"input '{name}' axis {axis} is {size} in the model, but the given shape is "
                f"{list(self.shapes[name])}"
            )
        return size

    def dim(self, name: str, axis: int, param: str | None) -> Dim:
        before = len(self.env.symbols)
        try:
            dim = self.env.create_symbol(
                self._hint(name, axis),
                f"input '{name}' axis {axis}",
                name=(ssa_name(param) or "s") if param is not None else None,
            )
        except GuardError as e:
            raise ValueError(str(e)) from None
        if len(self.env.symbols) > before:
            self.origins[self.env.symbols[-1].name] = (name, axis)
        return dim
