"""``specialize-shapes{sizes="b=4,w=100"}``: a symbolic module made static for given sizes.

Every shape symbol named in ``sizes`` is replaced by its size in every tensor type of the
module (function signatures, block arguments, op results); expression dims evaluate
(``24*floor(w/2)`` becomes 1200 with ``w=100``). The module's guards are checked on the
sizes first: a failed guard is an error naming it (the specialised module would be wrong).
Symbols not named stay symbolic. The tile level needs static shapes (tile counts, loop
bounds); :class:`~tilegraph.runtime.session.Session` specialises its symbolic graph-level
artifact this way for each concrete shape it runs on the tiled path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from tilegraph.dialects.guards import module_guards
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats.dims import Dim, normalize_dim, shape_symbol
from tilegraph.passes.registry import register_pass
from tilegraph.symbolic.guards import check_guards


def parse_sizes(text: str) -> dict[str, int]:
    """``"b=4, w=100"`` -> {"b": 4, "w": 100}; ValueError on anything else."""
    sizes: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name.strip().isidentifier() or not value.strip().isdigit():
            raise ValueError(f"sizes must be NAME=SIZE pairs, got '{item}'")
        sizes[name.strip()] = int(value)
    return sizes


def _specialized(t: Attribute, values: Mapping[sympy.Symbol, sympy.Integer]) -> Attribute:
    if not isinstance(t, TensorType) or not t.has_symbolic_dims:
        return t
    dims: list[Dim] = [
        d if isinstance(d, int) else normalize_dim(d.xreplace(values)) for d in t.origin_shape
    ]
    return t.with_shape(dims)


def specialize_shapes(module: ModuleOp, sizes: Mapping[str, int]) -> None:
    """Replace the symbols named in ``sizes`` throughout ``module`` (see the module doc)."""
    failures = check_guards(
        [g for g in module_guards(module) if _binds(g.cond, sizes)], sizes, None
    )
    if failures:
        raise ValueError(failures[0].message)
    values = {shape_symbol(name): sympy.Integer(size) for name, size in sizes.items()}
    blocks: list[Block] = []
    for op in module.walk():
        for region in op.regions:
            blocks.extend(region.blocks)
        for result in list(op.results):
            _retype(result, values)
        if isinstance(op, func.FuncOp):
            inputs = [_specialized(t, values) for t in op.function_type.inputs.data]
            outputs = [_specialized(t, values) for t in op.function_type.outputs.data]
            op.function_type = FunctionType.from_lists(inputs, outputs)
    for block in blocks:
        for arg in list(block.args):
            _retype(arg, values)


def _binds(cond: sympy.Basic, sizes: Mapping[str, int]) -> bool:
    return all(s.name in sizes for s in cond.free_symbols if isinstance(s, sympy.Symbol))


def _retype(value: SSAValue, values: Mapping[sympy.Symbol, sympy.Integer]) -> None:
    new = _specialized(value.type, values)
    if new != value.type:
        Rewriter.replace_value_with_new_type(value, new)


@register_pass
@dataclass(frozen=True)
class SpecializeShapesPass(ModulePass):
    """Make the named shape symbols static (``sizes="b=4,w=100"``)."""

    name = "specialize-shapes"

    sizes: str = ""
    """Comma-separated NAME=SIZE pairs."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            specialize_shapes(op, parse_sizes(self.sizes))
        except ValueError as e:
            raise DiagnosticException(f"specialize-shapes: {e}") from None
