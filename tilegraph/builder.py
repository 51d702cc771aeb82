"""Build graph-level IR from Python, without writing or parsing MLIR text.

::

    b = GraphBuilder("main")
    x = b.input("x", [1, 3, 8, 8], "float32", "NCHW")
    w = b.constant(np.ones([4, 3, 3, 3], np.float32), "NCHW")
    y = b.op("conv2d", x, w, pads=[1, 1, 1, 1])
    module = b.build(b.op("relu", y))

``op`` takes a ``graph`` op name (with or without the ``graph.`` prefix) or class, its
operands (``None`` for an absent optional one) and ONNX attributes as Python values; the
result type comes from the op's shape function, so a shape error surfaces where the op is
built. Values are xDSL ``SSAValue``; ``build`` wraps the function in a verified module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph import ConstantOp, GraphOp, op_class
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import Format
from tilegraph.symbolic.dims import Dim, dim_from_text


class GraphBuilder:
    """Accumulates the ops of one function; see the module docstring."""

    def __init__(self, name: str = "main"):
        self.name = name
        self.block = Block()
        self._arg_names: list[str] = []

    def input(
        self,
        name: str,
        shape: Sequence[Dim | str],
        dtype: str = "float32",
        origin_format: Format | str = "ND",
    ) -> SSAValue:
        """A function argument with an origin-view type; a dim may be a symbol (``"N"``)."""
        dims = [dim_from_text(d) if isinstance(d, str) else d for d in shape]
        t = TensorType(dims, element_type_of(dtype), origin_format)
        arg = self.block.insert_arg(t, len(self.block.args))
        arg.name_hint = name
        self._arg_names.append(name)
        return arg

    def constant(
        self, data: Any, origin_format: Format | str | None = None, name: str | None = None
    ) -> SSAValue:
        """A ``graph.constant`` holding ``data`` (any array-like; its dtype is kept)."""
        array = np.asarray(data)
        op = ConstantOp(array)
        if origin_format is not None:
            t = op.output.type
            assert isinstance(t, TensorType)
            op = ConstantOp(array, t.with_origin_format(origin_format))
        return self._append(op, name)

    def op(
        self,
        kind: str | type[GraphOp],
        *operands: SSAValue | None,
        name: str | None = None,
        result_types: Sequence[Attribute] | None = None,
        **attrs: Any,
    ) -> SSAValue:
        """Append a graph op; its first result (see :meth:`op_results` for all)."""
        return self.op_results(kind, *operands, name=name, result_types=result_types, **attrs)[0]

    def op_results(
        self,
        kind: str | type[GraphOp],
        *operands: SSAValue | None,
        name: str | None = None,
        result_types: Sequence[Attribute] | None = None,
        **attrs: Any,
    ) -> list[SSAValue]:
        cls = kind if isinstance(kind, type) else op_class(_qualified(kind))
        op = cls.make(*operands, result_types=result_types, **attrs)
        self._append(op, name)
        return list(op.results)

    def append(self, op: Operation) -> Operation:
        """Append an op built elsewhere (e.g. ``layout.trans_data``)."""
        self.block.add_op(op)
        return op

    def _append(self, op: Operation, name: str | None) -> SSAValue:
        self.block.add_op(op)
        result = op.results[0]
        result.name_hint = name or f"v{len(self.block.ops) - 1}"
        return result

    def build(self, *outputs: SSAValue) -> ModuleOp:
        """The module holding the function that returns ``outputs``; verified."""
        self.block.add_op(func.ReturnOp(*outputs))
        fn = func.FuncOp(
            self.name,
            ([a.type for a in self.block.args], [o.type for o in outputs]),
            Region(self.block),
        )
        module = ModuleOp([fn])
        module.verify()
        return module


def _qualified(name: str) -> str:
    return name if name.startswith("graph.") else f"graph.{name}"
