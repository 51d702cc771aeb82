"""``graph.fused`` and ``graph.yield``: a group of ops that runs as one kernel.

``fuse-ops`` wraps each group it forms in one ``graph.fused`` op. The op is isolated from
above: every value the group reads is an operand, bound to a block argument of its body,
and the body yields the group's results::

    %y = graph.fused "fused_conv2d_add_relu_3" <out_elemwise_fusable> (%x, %w, %r)
        : (T0, T1, T2) -> T3 {
    ^bb0(%x_1: T0, %w_1: T1, %r_1: T2):
      %c = graph.conv2d %x_1, %w_1 : (T0, T1) -> T3
      %s = graph.add %c, %r_1 : T3
      %o = graph.relu %s : T3
      graph.yield %o : T3
    }

The kernel name is unique in its function; the kind is the group's TVM pattern kind (the
kind of its anchor op, or the largest kind of its members when it has no anchor). The body
holds graph ops and ``layout.trans_data`` only, in dataflow order.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import FunctionType, StringAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, OpTrait, Pure
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.graph.facts import FusionKind

FUSION_KIND_NAMES = {k.name.lower(): k for k in FusionKind}


class GraphBodies(OpTrait):
    """The op's regions are graph-op bodies that end in ``graph.yield`` (``graph.fused`` and
    the control-flow ops)."""


@irdl_op_definition
class FusedOp(IRDLOperation):
    """A fused kernel: a region of graph ops run as one (see the module docstring)."""

    name = "graph.fused"
    inputs = var_operand_def()
    outputs = var_result_def()
    kernel_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), Pure(), GraphBodies())

    def __init__(
        self,
        kernel_name: str,
        kind: FusionKind,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={
                "kernel_name": StringAttr(kernel_name),
                "kind": StringAttr(kind.name.lower()),
            },
            regions=[body],
        )

    @property
    def fusion_kind(self) -> FusionKind:
        return FUSION_KIND_NAMES[self.kind.data]

    @property
    def yield_op(self) -> YieldOp:
        last = self.body.block.last_op
        assert isinstance(last, YieldOp)
        return last

    def member_ops(self) -> list:
        """The grouped ops, in order (the terminator excluded)."""
        return [op for op in self.body.block.ops if not isinstance(op, YieldOp)]

    def verify_(self) -> None:
        if self.kind.data not in FUSION_KIND_NAMES:
            raise VerifyException(
                f"unknown fusion kind '{self.kind.data}' (one of {', '.join(FUSION_KIND_NAMES)})"
            )
        block = self.body.block
        arg_types = [a.type for a in block.args]
        if arg_types != [v.type for v in self.inputs]:
            raise VerifyException("the body's arguments must have the operands' types")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException("the body must end with graph.yield")
        if [v.type for v in last.values] != [r.type for r in self.outputs]:
            raise VerifyException("graph.yield must yield the op's result types")
        for op in block.ops:
            if isinstance(op, FusedOp):
                raise VerifyException("graph.fused cannot be nested")

    @classmethod
    def parse(cls, parser: Parser) -> FusedOp:
        kernel_name = parser.parse_str_literal("kernel name")
        parser.parse_punctuation("<")
        pos = parser.pos
        kind_name = parser.parse_identifier("fusion kind")
        if kind_name not in FUSION_KIND_NAMES:
            parser.raise_error(
                f"unknown fusion kind '{kind_name}' (one of {', '.join(FUSION_KIND_NAMES)})",
                pos,
            )
        parser.parse_punctuation(">")
        unresolved = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        function_type = parser.parse_function_type()
        inputs = parser.resolve_operands(unresolved, function_type.inputs.data, pos)
        body = parser.parse_region()
        op = cls(
            kernel_name,
            FUSION_KIND_NAMES[kind_name],
            inputs,
            function_type.outputs.data,
            body,
        )
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.kernel_name.data)
        printer.print_string(f" <{self.kind.data}> (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(
            FunctionType.from_lists([v.type for v in self.inputs], [r.type for r in self.outputs])
        )
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True, print_empty_block=True)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The results of a body (``graph.fused``, ``graph.if``, ...):
    ``graph.yield %a, %b : T0, T1``."""

    name = "graph.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())

    def verify_(self) -> None:
        parent = self.parent_op()
        if parent is None or not parent.has_trait(GraphBodies):
            raise VerifyException(
                "graph.yield must be the terminator of a graph.fused or control-flow body"
            )

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        unresolved = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        values: Sequence[SSAValue] = []
        if unresolved:
            parser.parse_punctuation(":")
            pos = parser.pos
            types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            values = parser.resolve_operands(unresolved, types, pos)
        return cls(*values)

    def print(self, printer: Printer) -> None:
        if not self.values:
            return
        printer.print_string(" ")
        printer.print_list(self.values, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in self.values], printer.print_attribute)


def new_body(input_types: Sequence[Attribute]) -> tuple[Region, Block]:
    """An empty single-block region with one argument per input type."""
    block = Block(arg_types=list(input_types))
    return Region(block), block


FUSED_OPS = [FusedOp, YieldOp]
