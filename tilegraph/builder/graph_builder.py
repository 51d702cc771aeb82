""":class:`GraphBuilder`: inputs, constants, ops, outputs -> a verified graph-level module.

The op methods (``b.conv2d``, ``b.relu``, ...) are generated at import from the op classes
(:mod:`tilegraph.builder.op_methods`) and set on the class; :meth:`GraphBuilder.op` builds
any graph op by name.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import sympy
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from tilegraph.builder.op_methods import OpSpec, attribute, make_method, method_specs
from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph import GraphOp, ShapeError, op_class
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format, FormatError, parse_format
from tilegraph.formats.dims import Dim
from tilegraph.frontend.onnx_attributes import constant_op
from tilegraph.frontend.onnx_symbols import SymbolSource, ssa_name
from tilegraph.symbolic.inference import inferring

ENTRY = "main"
"""The builder's function: the one ``run_reference``, ``compile`` and the tools run."""

Operand = SSAValue | np.ndarray | np.generic | None
"""An operand argument: a value of the same builder, numpy data (becomes a
``graph.constant``) or None for an absent optional operand."""


class GraphBuilder:
    """Accumulates the inputs, ops and outputs of one graph; :meth:`build` makes the module.

    ``name`` names the module (``builtin.module @name``); the function is always ``@main``.
    Values are xDSL ``SSAValue``s, and the module :meth:`build` returns holds them: a
    builder makes one module (after ``build``, making anything raises RuntimeError).
    """

    def __init__(self, name: str | None = None):
        self.name = name
        self.block = Block()
        """The function body being built (callers may append ops or arguments directly)."""
        self._input_names: dict[BlockArgument, str] = {}
        self._symbols = SymbolSource()
        self._anonymous: dict[str, str] = {}  # fresh symbol name -> the axis it stands for
        self._outputs: list[tuple[SSAValue, str | None]] = []
        self._built = False

    # ---- values -------------------------------------------------------------------------
    def input(
        self,
        name: str,
        shape: Sequence[int | str | Dim | None],
        dtype: str | np.dtype | type = "float32",
        format: Format | str | None = None,  # noqa: A002 - GE's and ONNX's word for it
        *,
        storage_format: Format | str | None = None,
        origin_format: Format | str | None = None,
    ) -> SSAValue:
        """A graph input: the next argument of ``@main``.

        ``shape``: ints; dim names (``"N"``: a symbol named as the importer names a
        dim_param, equal names are one dimension); ``None``, ``""`` or ``"?"`` (a fresh
        symbol ``s0, s1, ...``, as the importer gives an anonymous dim); or sympy
        expressions. ``dtype``: a tilegraph dtype name or a numpy dtype. ``format``: the
        origin format, default ND (``origin_format`` is its older spelling);
        ``storage_format``: the layout the caller holds the data in (default: the origin's).

        Raises ValueError naming the input for a repeated name, a negative dim, a dim name
        taken by an anonymous dim, an unknown dtype or format, a storage format given as
        origin, or a shape of higher rank than the format's; TypeError for a dim of
        another kind.
        """
        self._check_open()
        where = f"input '{name}'"
        if format is not None and origin_format is not None:
            raise TypeError(f"{where}: give format or origin_format, not both")
        if not isinstance(name, str) or not name:
            raise TypeError(f"input(): the name must be a non-empty string, got {name!r}")
        if name in self._input_names.values():
            raise ValueError(f"{where}: there is already an input of that name")
        dims = [self._dim(where, axis, d) for axis, d in enumerate(shape)]
        try:
            origin = parse_format(format or origin_format or Format.ND)
            if not origin.is_origin:
                raise FormatError(f"{origin} is a storage format, not an origin format")
            if origin.rank is not None and len(dims) > origin.rank:
                raise FormatError(f"a rank {len(dims)} shape cannot have format {origin}")
            dt = dtype if isinstance(dtype, str) else np.dtype(dtype)
            t = TensorType(dims, element_type_of(dt), origin, storage_format)
        except (FormatError, ValueError, TypeError) as e:
            raise ValueError(f"{where}: {e}") from None
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = ssa_name(name)
        self._input_names[arg] = name
        return arg

    def _dim(self, where: str, axis: int, d: object) -> Dim:
        where = f"{where} axis {axis}"
        if d is None or (isinstance(d, str) and d.strip() in ("", "?")):
            dim = self._symbols.next()
            self._anonymous[str(dim)] = where
            return dim
        if isinstance(d, str):
            ident = ssa_name(d) or d
            if ident in self._anonymous:
                raise ValueError(
                    f"{where}: '{d}' is the symbol of the unnamed dim of "
                    f"{self._anonymous[ident]}; name that dim or choose another name"
                )
            return self._symbols.named(d)
        if isinstance(d, bool) or not isinstance(d, int | np.integer | sympy.Expr):
            raise TypeError(f"{where}: a dim is an int, a name or None, got {d!r}")
        if isinstance(d, int | np.integer):
            if d < 0:
                raise ValueError(f"{where}: a dim is >= 0 (None for an unknown one), got {d}")
            return int(d)
        return d

    def constant(
        self,
        data: Any,
        format: Format | str | None = None,  # noqa: A002
        name: str | None = None,
    ) -> SSAValue:
        """A ``graph.constant`` holding ``data``, of origin ``format`` (default ND).

        numpy data keeps its dtype (ml_dtypes' bfloat16, float8 and int4 are held as the
        importer holds them); Python numbers and lists become float32 (floats), int64
        (ints) or bool. ValueError for data of no tensor dtype or a bad format.
        """
        self._check_open()
        where = f"constant{f' {name!r}' if name else ''}"
        array = _as_array(data, where)
        try:
            op = constant_op(array, format or Format.ND)
        except (FormatError, ValueError) as e:
            raise ValueError(f"{where}: {e}") from None
        return self._append(op, name)[0]

    def output(self, *values: SSAValue, name: str | Sequence[str] | None = None) -> None:
        """Make ``values`` results of the graph, after those already made.

        ``name``: one per value, the names the runtime gives the results (default
        ``output<i>``, ``i`` counting all results)."""
        self._check_open()
        if name is None:
            names: list[str | None] = [None] * len(values)
        else:
            names = [name] if isinstance(name, str) else list(name)
        if len(names) != len(values):
            raise ValueError(f"output(): {len(values)} value(s) but {len(names)} name(s)")
        for i, v in enumerate(values):
            self._own("output", f"#{len(self._outputs) + i}", v)
        self._outputs += list(zip(values, names, strict=True))

    # ---- ops ----------------------------------------------------------------------------
    def op(
        self,
        kind: str | type[GraphOp],
        *operands: Operand,
        name: str | None = None,
        result_types: Sequence[Attribute] | None = None,
        **attrs: Any,
    ) -> SSAValue:
        """Append the graph op ``kind`` (``"conv2d"``, ``"graph.conv2d"`` or its class)
        with operands in slot order (None for an absent optional one) and attributes;
        returns its first result. Checks as the op methods do; ``result_types`` replaces
        the shape function (tests use it to build ill-typed IR)."""
        return self.op_results(kind, *operands, name=name, result_types=result_types, **attrs)[0]

    def op_results(
        self,
        kind: str | type[GraphOp],
        *operands: Operand,
        name: str | None = None,
        result_types: Sequence[Attribute] | None = None,
        **attrs: Any,
    ) -> list[SSAValue]:
        """Like :meth:`op`, returning all results."""
        if isinstance(kind, str):
            qualified = kind if kind.startswith("graph.") else f"graph.{kind}"
            try:
                cls = op_class(qualified)
            except KeyError:
                close = difflib.get_close_matches(kind, list(OP_METHODS), 3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise ValueError(f"op(): there is no graph op {kind!r}{hint}") from None
        else:
            cls = kind
        spec = OpSpec.of(cls.name.split(".", 1)[1], [cls])
        return self._call(spec, operands, attrs, name, result_types)

    def append(self, op: Operation) -> Operation:
        """Append an op built elsewhere (e.g. ``layout.trans_data``)."""
        self._check_open()
        self.block.add_op(op)
        return op

    def _call(
        self,
        spec: OpSpec,
        args: Sequence[Any],
        kwargs: Mapping[str, Any],
        name: str | None,
        result_types: Sequence[Attribute] | None = None,
    ) -> list[SSAValue]:
        """Bind, check and build one op of ``spec`` (what every op method runs)."""
        self._check_open()
        spec.check_keywords(kwargs)
        slot_names = {s.name for s in spec.slots}
        bound = spec.bind(args, {k: v for k, v in kwargs.items() if k in slot_names})
        made: list[Operation] = []  # constants made for numpy operands: dropped on failure
        try:
            values = [self._operand(spec.method, slot, v, made) for slot, v in bound]
            cls = spec.choose(values)
            props = {
                k: attribute(spec.method, cls, k, v)
                for k, v in kwargs.items()
                if k not in slot_names and v is not None
            }
            try:
                # guards and messages of the shape function name the value when it has one
                with inferring(name or cls.name):
                    op = cls.make(*values, result_types=result_types, **props)
            except (ShapeError, FormatError) as e:
                where = f" '{name}'" if name else ""
                raise type(e)(f"{spec.method}(){where}: {e}") from None
        except Exception:
            for c in reversed(made):
                c.detach()
                c.erase()
            raise
        return self._append(op, name)

    def _operand(
        self, method: str, slot: str, value: Any, made: list[Operation]
    ) -> SSAValue | None:
        if value is None:
            return None
        if isinstance(value, np.ndarray | np.generic):
            const = self.constant(value)
            assert isinstance(const.owner, Operation)
            made.append(const.owner)
            return const
        if not isinstance(value, SSAValue):
            advice = (
                "unpack a tuple of results"
                if isinstance(value, tuple)
                else "for data, pass np.array(..., dtype)"
            )
            raise TypeError(
                f"{method}(): operand '{slot}' must be a value of this builder or a numpy "
                f"array, got {type(value).__name__} {reprlib.repr(value)} ({advice})"
            )
        self._own(method, f"operand '{slot}'", value)
        return value

    def _own(self, method: str, what: str, value: object) -> None:
        if not isinstance(value, SSAValue):
            hint = " (unpack a tuple of results with *)" if isinstance(value, tuple) else ""
            raise TypeError(f"{method}(): {what} must be a value, got {type(value).__name__}{hint}")
        owner = value.owner
        block = owner if isinstance(owner, Block) else owner.parent_block()
        if block is not self.block:
            raise ValueError(f"{method}(): {what} is not a value of this builder")

    def _append(self, op: Operation, name: str | None) -> list[SSAValue]:
        self.block.add_op(op)
        hint = ssa_name(name) if name else f"v{len(self.block.ops) - 1}"
        results: list[SSAValue] = list(op.results)
        for r in results:
            r.name_hint = hint  # several results print as %hint, %hint_1, ...
        return results

    # ---- the module ---------------------------------------------------------------------
    def build(self, *outputs: SSAValue) -> ModuleOp:
        """The verified module: ``func.func @main`` over the inputs, returning the values
        given to :meth:`output`, then ``outputs``. ValueError without outputs or with a
        repeated output name."""
        self._check_open()
        if outputs:
            self.output(*outputs)
        if not self._outputs:
            raise ValueError("build(): the graph has no outputs (call output() or pass them)")
        values = [v for v, _ in self._outputs]
        out_names = [n or f"output{i}" for i, (_, n) in enumerate(self._outputs)]
        if len(set(out_names)) != len(out_names):
            raise ValueError(f"build(): output names repeat: {out_names}")
        self.block.add_op(func.ReturnOp(*values))
        arg_types = [a.type for a in self.block.args]
        fn = func.FuncOp(ENTRY, (arg_types, [v.type for v in values]), Region(self.block))
        # The runtime names arguments by their SSA names and results output<i> unless the
        # function carries the names, as the importer writes them (an input "in.1" has the
        # SSA name %in_1; named outputs).
        ssa_names = [a.name_hint or f"arg{i}" for i, a in enumerate(fn.args)]
        in_names = [self._input_names.get(a, n) for a, n in zip(fn.args, ssa_names, strict=True)]
        if in_names != ssa_names:
            fn.attributes["onnx.input_names"] = ArrayAttr([StringAttr(n) for n in in_names])
        if any(n != f"output{i}" for i, n in enumerate(out_names)):
            fn.attributes["onnx.output_names"] = ArrayAttr([StringAttr(n) for n in out_names])
        module = ModuleOp([fn], sym_name=StringAttr(self.name) if self.name else None)
        self._built = True
        module.verify()
        return module

    def _check_open(self) -> None:
        if self._built:
            raise RuntimeError("GraphBuilder: build() was called; start a new GraphBuilder")

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """Reached only for a name that is no attribute: says which op methods are close.
        (Declared so that type checkers accept the generated op methods.)"""
        if name.startswith("__"):
            raise AttributeError(name)
        close = difflib.get_close_matches(name, list(OP_METHODS), 3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise AttributeError(f"GraphBuilder has no op method '{name}'{hint}")


def _as_array(data: Any, where: str) -> np.ndarray:
    if isinstance(data, np.ndarray | np.generic):
        return np.asarray(data)
    try:
        array = np.asarray(data)
    except ValueError as e:  # ragged lists
        raise ValueError(f"{where}: {e}") from None
    if array.dtype.kind == "f":
        return array.astype(np.float32)
    if array.dtype.kind in "iu":
        return array.astype(np.int64)
    if array.dtype.kind != "b":
        raise ValueError(f"{where}: cannot make a tensor of {type(data).__name__} {data!r}")
    return array


OP_METHODS: Mapping[str, OpSpec] = MappingProxyType(
    method_specs(reserved={n for n in vars(GraphBuilder) if not n.startswith("_")})
)
"""Method name -> what it builds, for every generated op method (aliases included)."""

for _method, _spec in OP_METHODS.items():
    setattr(GraphBuilder, _method, make_method(_spec))
