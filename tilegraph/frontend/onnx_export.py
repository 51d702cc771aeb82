"""Write a graph-level module back to ONNX (``tilegraph-opt MODEL -p O2 --emit-onnx out.onnx``).

:func:`export_onnx` turns the entry function (``@main``, else the only one) into an
``onnx.ModelProto``; :func:`write_onnx` also runs ``onnx.checker`` (full check) and saves it.
``docs/running.md`` ("Exporting to ONNX") has the table; the contract:

* Every ONNX tensor is the **origin view**: origin shape (symbolic dims as ``dim_param``
  expressions, unknown dims empty) and element type, in the signature or in ``value_info``
  (every other tensor, initializers included); a tensor with a format also has
  ``metadata_props["tilegraph.type"]``, its full ``!layout.tensor`` spelling.
* Graph ops are **standard nodes** of their ``ONNX_OP`` with their stored attributes, at
  default-domain opset 21 (the form graph ops implement, ``onnx_versions.NATIVE_MAX_OPSET``)
  or the first newer opset that takes every node (RMSNormalization: 23); versions 22-28 only
  add types or attributes whose absence keeps the old behaviour, so opset-21 forms stay
  valid (onnxruntime 1.32 loads up to 28). A newer-only attribute at its default is dropped;
  DFT-17's ``axis`` attribute becomes DFT-20's input.
* **Constants are initializers** in origin layout (pre-converted weights are converted
  back); inside a function, ``Constant`` nodes.
* The **``tilegraph`` domain** (opset 1): ``layout.trans_data`` is ``TransData`` (formats,
  storage shapes and parameters as attributes) with an ``Identity`` function (nothing changes
  on the origin view); each ``graph.fused`` group is a ``<kernel name>`` node whose
  FunctionProto holds the group (Netron expands it, onnxruntime inlines it); a graph op with
  no ONNX op is a ``<CamelCaseName>`` node without a function. Discardable op attributes go
  to node ``metadata_props``, function and module attributes to the model's.
* **Control flow** (``graph.if`` / ``loop`` / ``scan`` / ``sequence_map``) becomes the ONNX
  op with its bodies as subgraphs that read the captures by their outer names; sequences and
  optionals have their ONNX types (:mod:`.onnx_export_parts`).
* Anything else (tile-level ops, calls, elided constants) raises :class:`OnnxExportError`,
  one message naming the op.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tilegraph.dialects.entry import InputError, entry_function, input_names, output_names
from tilegraph.dialects.graph import ConstantOp, FusedOp, GraphOp, YieldOp
from tilegraph.dialects.graph.base import from_attribute
from tilegraph.dialects.graph.control_flow import RegionOp
from tilegraph.dialects.layout import TransDataOp
from tilegraph.formats.dims import dim_to_text
from tilegraph.frontend.onnx_export_parts import (
    OnnxExportError,
    attr_text,
    attribute_kind,
    attribute_proto,
    camel_name,
    constant_data,
    operand_names,
    region_node,
    tensor_proto,
    tensor_type_of,
    value_info,
    yield_of,
)
from tilegraph.frontend.onnx_versions import NATIVE_MAX_OPSET
from tilegraph.version import __version__

DOMAIN = "tilegraph"
"""The custom domain of TransData, fused groups and graph ops with no ONNX op."""
DOMAIN_VERSION = 1
BASE_OPSET = NATIVE_MAX_OPSET
"""The default-domain opset of an export unless a node needs a newer one."""
MAX_OPSET = onnx.defs.onnx_opset_version()
"""The newest opset the installed onnx defines (28 for onnx 1.23; onnxruntime 1.32 loads it)."""
_MIN_IR_VERSION = 10
"""IR 10 (onnx 1.16) brought value_info and metadata_props on functions, nodes and values."""

_ATTRIBUTE_INPUTS: Mapping[str, Mapping[str, int]] = {"DFT": {"axis": 2}}
"""Attributes graph ops keep from an older version that are inputs at opset 21+: op type ->
attribute -> input position (graph.dft holds DFT-17's ``axis`` for opset 18-19 models)."""


# ---- ONNX schema queries -----------------------------------------------------------------


@cache
def _schema(op_type: str, opset: int) -> onnx.defs.OpSchema | None:
    try:
        return onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None


def _fits(params: Sequence[onnx.defs.OpSchema.FormalParameter], count: int) -> bool:
    variadic = (
        bool(params) and params[-1].option == onnx.defs.OpSchema.FormalParameterOption.Variadic
    )
    return count <= len(params) or variadic


def _node_fits(schema: onnx.defs.OpSchema, node: onnx.NodeProto) -> bool:
    names = {a.name for a in node.attribute}
    return (
        names <= set(schema.attributes)
        and _fits(schema.inputs, len(node.input))
        and _fits(schema.outputs, len(node.output))
    )


def _min_opset(node: onnx.NodeProto) -> int | None:
    """The first opset from BASE_OPSET on whose version of the op ``node`` is valid."""
    for opset in range(BASE_OPSET, MAX_OPSET + 1):
        schema = _schema(node.op_type, opset)
        if schema is not None and _node_fits(schema, node):
            return opset
    return None


def _is_newer_default(op_type: str, attr: onnx.AttributeProto) -> bool:
    """``attr`` does not exist at BASE_OPSET and holds its default in the newest version
    (so leaving it out means the same and keeps the node at the base opset)."""
    base, newest = _schema(op_type, BASE_OPSET), _schema(op_type, MAX_OPSET)
    if base is None or newest is None or attr.name in base.attributes:
        return False
    spec = newest.attributes.get(attr.name)
    if spec is None or not spec.default_value.name:
        return False
    return helper.get_attribute_value(spec.default_value) == helper.get_attribute_value(attr)


# ---- types, data and attributes ----------------------------------------------------------


@dataclass
class _Scope:
    """The graph, or one function body, being written: nodes, value names, types."""

    where: str
    in_function: bool
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    value_info: list[onnx.ValueInfoProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    names: dict[SSAValue, str] = field(default_factory=dict)
    claimed: dict[SSAValue, str] = field(default_factory=dict)
    """Results that are named after an output of the graph / function."""
    used: set[str] = field(default_factory=set)

    def fresh(self, hint: str | None) -> str:
        base = hint or "t"
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    def name_of(self, value: SSAValue | None) -> str:
        if value is None:
            return ""
        if value not in self.names:
            raise OnnxExportError(f"{self.where}: a value is used before it is defined")
        return self.names[value]

    def define(self, value: SSAValue, what: str) -> str:
        """Name a result and record its origin type (outputs are typed in the signature)."""
        t = value.type
        name = self.claimed.get(value)
        if name is None:
            name = self.fresh(value.name_hint)
            self.value_info.append(value_info(name, t, what))
        self.names[value] = name
        return name

    def claim_outputs(self, values: Sequence[SSAValue], wanted: Sequence[str]) -> list[str]:
        """Reserve output names; a value that cannot take its name (an input, a constant,
        a value returned twice) gets an Identity, written by :meth:`finish_outputs`."""
        names = []
        for value, name in zip(values, wanted, strict=True):
            if isinstance(value, BlockArgument) and self.names.get(value) == name:
                names.append(name)  # an input returned under its own name
                continue
            name = name if name not in self.used else self.fresh(name)
            self.used.add(name)
            owner = value.owner
            if not isinstance(value, BlockArgument) and value not in self.claimed:
                if not isinstance(owner, ConstantOp) or self.in_function:
                    self.claimed[value] = name
            names.append(name)
        return names

    def finish_outputs(self, values: Sequence[SSAValue], names: Sequence[str]) -> None:
        for value, name in zip(values, names, strict=True):
            if self.names.get(value) != name:
                self.nodes.append(helper.make_node("Identity", [self.name_of(value)], [name]))


# ---- the exporter ------------------------------------------------------------------------


class _Exporter:
    """Writes ops into scopes and collects what the model needs besides its graph: the
    functions, the default-domain nodes (for the opset) and the TransData attributes."""

    def __init__(self) -> None:
        self.functions: list[onnx.FunctionProto] = []
        self.function_names: set[str] = {"TransData"}
        self.standard: list[tuple[str, onnx.NodeProto]] = []
        """Default-domain nodes with the op they came from (for the opset choice)."""
        self.trans_data_attrs: set[str] = set()
        self.uses_domain = False

    # -- blocks and ops --
    def block(self, block: Block, scope: _Scope) -> None:
        """Write the ops of ``block`` but its terminator (the caller writes the outputs)."""
        for op in block.ops:
            if op is not block.last_op or not isinstance(op, func.ReturnOp | YieldOp):
                self.op(op, scope)

    def op(self, op: Operation, scope: _Scope) -> None:
        what = f"{scope.where}: '{op.name}'" + (
            f" (%{op.results[0].name_hint})" if op.results and op.results[0].name_hint else ""
        )
        if isinstance(op, ConstantOp):
            self.constant(op, scope, what)
        elif isinstance(op, RegionOp):
            self.region(op, scope, what)
        elif isinstance(op, TransDataOp):
            self.trans_data(op, scope, what)
        elif isinstance(op, FusedOp):
            self.fused(op, scope, what)
        elif isinstance(op, GraphOp):
            self.graph_op(op, scope, what)
        else:
            raise OnnxExportError(
                f"{what} cannot be exported to ONNX: only graph-level modules (graph and "
                "layout ops in one func.func) can be; export before lower-graph-to-kernels"
            )

    def constant(self, op: ConstantOp, scope: _Scope, what: str) -> None:
        t = tensor_type_of(op.output, what)
        data = constant_data(op, what)
        if scope.in_function:
            name = scope.define(op.output, what)
            tensor = tensor_proto(data, t, name, what)
            scope.nodes.append(helper.make_node("Constant", [], [name], name=name, value=tensor))
            return
        name = scope.fresh(op.output.name_hint or "const")
        scope.names[op.output] = name
        scope.initializers.append(tensor_proto(data, t, name, what))
        scope.value_info.append(value_info(name, t, what))

    def scalar_input(self, value: int, hint: str, scope: _Scope) -> str:
        """An int64 scalar made for an attribute that became an input."""
        name = scope.fresh(hint)
        tensor = numpy_helper.from_array(np.array(value, np.int64), name)
        if scope.in_function:
            scope.nodes.append(helper.make_node("Constant", [], [name], name=name, value=tensor))
        else:
            scope.initializers.append(tensor)
            scope.value_info.append(helper.make_tensor_value_info(name, tensor.data_type, []))
        return name

    def graph_op(self, op: GraphOp, scope: _Scope, what: str) -> None:
        newest = _schema(op.ONNX_OP, MAX_OPSET) if op.ONNX_OP is not None else None
        op_type = op.ONNX_OP if newest is not None else None
        base = _schema(op_type, BASE_OPSET) if op_type is not None else None
        inputs = [scope.name_of(v) for v in op.operand_slots()]
        attrs: list[onnx.AttributeProto] = []
        for key, attr in op.properties.items():
            if key == "operandSegmentSizes":
                continue
            position = _ATTRIBUTE_INPUTS.get(op_type or "", {}).get(key)
            if position is not None:
                inputs += [""] * (position + 1 - len(inputs))
                if not inputs[position]:  # a given input wins over the attribute, as in the op
                    value = int(from_attribute(attr))
                    inputs[position] = self.scalar_input(value, f"{key}_input", scope)
                continue
            spec = (base.attributes.get(key) if base else None) or (
                newest.attributes.get(key) if newest else None
            )
            proto = attribute_proto(key, attr, attribute_kind(spec), what)
            if op_type is not None and _is_newer_default(op_type, proto):
                continue
            attrs.append(proto)
        while inputs and not inputs[-1]:
            inputs.pop()
        outputs = [scope.define(r, what) for r in op.results]
        node = helper.make_node(
            op_type or camel_name(op.name),
            inputs,
            outputs,
            name=outputs[0] if outputs else None,
            domain="" if op_type is not None else DOMAIN,
        )
        node.attribute.extend(attrs)
        self.metadata(node, op)
        if op_type is not None:
            self.standard.append((what, node))
        else:
            self.uses_domain = True
        scope.nodes.append(node)

    def region(self, op: RegionOp, scope: _Scope, what: str) -> None:
        """A control-flow op with its bodies as subgraphs (:mod:`.onnx_export_parts`)."""
        if op.ONNX_OP is None or op.ONNX_DOMAIN:
            raise OnnxExportError(f"{what}: {op.name} has no default-domain ONNX op")
        captured = [scope.name_of(v) for v in op.captured_values]
        bodies = {
            attr: self.body(region.block, captured, scope, f"{what}: {attr}")
            for attr, region in zip(op.ONNX_SUBGRAPHS, op.regions, strict=True)
        }
        inputs = operand_names(op, scope.name_of)
        outputs = [scope.define(r, what) for r in op.results]
        node = region_node(op, inputs, outputs, bodies)
        for key, attr in op.properties.items():
            if key != "operandSegmentSizes":
                node.attribute.append(attribute_proto(key, attr, None, what))
        self.metadata(node, op)
        self.standard.append((what, node))
        scope.nodes.append(node)

    def body(
        self, block: Block, captured: list[str], parent: _Scope, where: str
    ) -> onnx.GraphProto:
        """A body as a subgraph: its leading arguments are the inputs, the trailing ones
        (the captures) read the outer names; names are unique across the whole model."""
        scope = _Scope(where, in_function=True, used=parent.used)
        formal = block.args[: len(block.args) - len(captured)]
        for arg in formal:
            scope.names[arg] = scope.fresh(arg.name_hint or "in")
        scope.names.update(zip(block.args[len(formal) :], captured, strict=True))
        yielded = list(yield_of(block).values)
        out_names = scope.claim_outputs(yielded, [v.name_hint or "out" for v in yielded])
        self.block(block, scope)
        scope.finish_outputs(yielded, out_names)
        return helper.make_graph(
            scope.nodes,
            where.rsplit(": ", 1)[-1],
            [value_info(scope.names[a], a.type, where) for a in formal],
            [value_info(n, v.type, where) for v, n in zip(yielded, out_names, strict=True)],
            value_info=scope.value_info,
        )

    def trans_data(self, op: TransDataOp, scope: _Scope, what: str) -> None:
        src, dst = tensor_type_of(op.input, what), tensor_type_of(op.output, what)
        attrs: dict[str, Any] = {"origin_format": src.origin_format.value}
        for side, t in (("src", src), ("dst", dst)):
            attrs[f"{side}_format"] = t.storage_format.value
            for key, value in t.storage_params().items():
                attrs[f"{side}_{key}"] = value
            shape = [dim_to_text(d) for d in t.storage_shape]
            static = all(s.isdigit() for s in shape)
            attrs[f"{side}_storage_shape"] = [int(s) for s in shape] if static else shape
        inputs = [scope.name_of(op.input)]
        outputs = [scope.define(op.output, what)]
        node = helper.make_node(
            "TransData", inputs, outputs, name=outputs[0], domain=DOMAIN, **attrs
        )
        self.metadata(node, op)
        self.trans_data_attrs.update(attrs)
        self.uses_domain = True
        scope.nodes.append(node)

    def fused(self, op: FusedOp, scope: _Scope, what: str) -> None:
        kernel = op.kernel_name.data
        fname, k = kernel, 0
        while fname in self.function_names:
            k += 1
            fname = f"{kernel}_{k}"
        self.function_names.add(fname)
        body = _Scope(f"{scope.where}: graph.fused '{kernel}'", in_function=True)
        block = op.body.block
        arg_names = [body.fresh(a.name_hint or f"in{i}") for i, a in enumerate(block.args)]
        body.names.update(zip(block.args, arg_names, strict=True))
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise OnnxExportError(f"{body.where}: the body does not end with graph.yield")
        yielded = list(terminator.values)
        out_names = body.claim_outputs(
            yielded, [v.name_hint or f"out{i}" for i, v in enumerate(yielded)]
        )
        self.block(block, body)
        body.finish_outputs(yielded, out_names)
        function = helper.make_function(
            DOMAIN,
            fname,
            arg_names,
            out_names,
            body.nodes,
            opset_imports=[],  # set once the model's opset is known
            attributes=["kernel_name", "kind"],
            doc_string=f"graph.fused <{op.kind.data}>: {len(op.member_ops())} ops",
        )
        function.value_info.extend(body.value_info)
        self.functions.append(function)
        inputs = [scope.name_of(v) for v in op.inputs]
        outputs = [scope.define(r, what) for r in op.outputs]
        node = helper.make_node(
            fname, inputs, outputs, name=kernel, domain=DOMAIN, kernel_name=kernel,
            kind=op.kind.data,
        )  # fmt: skip
        self.metadata(node, op)
        self.uses_domain = True
        scope.nodes.append(node)

    @staticmethod
    def metadata(node: onnx.NodeProto, op: Operation) -> None:
        for key, attr in op.attributes.items():
            node.metadata_props.add(key=key, value=attr_text(attr))

    # -- opsets --
    def opset(self) -> int:
        """The default-domain opset every standard node is valid at (see the module doc)."""
        needed = BASE_OPSET
        for what, node in self.standard:
            first = _min_opset(node)
            if first is None:
                attrs = ", ".join(a.name for a in node.attribute) or "none"
                raise OnnxExportError(
                    f"{what}: no version of ONNX {node.op_type} from opset {BASE_OPSET} to "
                    f"{MAX_OPSET} takes these attributes ({attrs}) and {len(node.input)} inputs"
                )
            needed = max(needed, first)
        for what, node in self.standard:
            schema = _schema(node.op_type, needed)
            if schema is None or not _node_fits(schema, node):
                raise OnnxExportError(
                    f"{what}: ONNX {node.op_type} at opset {needed} (needed by other nodes) "
                    "does not take its attributes and inputs"
                )
        return needed

    def trans_data_function(self, imports: list[onnx.OperatorSetIdProto]) -> onnx.FunctionProto:
        return helper.make_function(
            DOMAIN,
            "TransData",
            ["input"],
            ["output"],
            [helper.make_node("Identity", ["input"], ["output"])],
            opset_imports=imports,
            attributes=sorted(self.trans_data_attrs),
            doc_string="layout.trans_data: changes the storage layout; the origin view "
            "(what ONNX sees) is unchanged",
        )


def _model_metadata(module: ModuleOp, fn: func.FuncOp) -> dict[str, str]:
    skip = {"onnx.input_names", "onnx.output_names", "sym_name", "function_type"}
    props = {k: attr_text(v) for k, v in module.attributes.items()}
    props.update({k: attr_text(v) for k, v in fn.attributes.items() if k not in skip})
    return props


def export_onnx(module: ModuleOp, function: str | None = None) -> onnx.ModelProto:
    """The graph of ``module``'s entry function (``function``, else ``@main``, else the only
    one) as an ONNX model; see the module docstring for what becomes what.

    The model is not checked here (:func:`write_onnx` checks); raises
    :class:`OnnxExportError` for anything that has no ONNX form.
    """
    try:
        fn = entry_function(module, function)
    except InputError as e:
        raise OnnxExportError(f"cannot export to ONNX: {e}") from None
    where = f"@{fn.sym_name.data}"
    exporter = _Exporter()
    graph = _Scope(where, in_function=False)
    block = fn.body.block
    in_names = input_names(fn)
    if len(in_names) != len(block.args) or len(set(in_names)) != len(in_names):
        in_names = [a.name_hint or f"arg{i}" for i, a in enumerate(block.args)]
    inputs = []
    for arg, name in zip(block.args, in_names, strict=True):
        graph.used.add(name)
        graph.names[arg] = name
        inputs.append(value_info(name, arg.type, f"{where}: input '{name}'"))
    last = block.last_op
    if not isinstance(last, func.ReturnOp):
        raise OnnxExportError(f"{where}: the function does not end with func.return")
    returned = list(last.arguments)
    wanted = output_names(fn)
    if len(wanted) != len(returned):
        wanted = [f"output{i}" for i in range(len(returned))]
    out_names = graph.claim_outputs(returned, wanted)
    exporter.block(block, graph)
    graph.finish_outputs(returned, out_names)
    outputs = [
        value_info(name, v.type, f"{where}: output '{name}'")
        for v, name in zip(returned, out_names, strict=True)
    ]

    opset = exporter.opset()
    imports = [helper.make_opsetid("", opset)]
    if exporter.uses_domain:
        imports.append(helper.make_opsetid(DOMAIN, DOMAIN_VERSION))
    functions = list(exporter.functions)
    if exporter.trans_data_attrs:
        functions.append(exporter.trans_data_function(imports[:1]))
    for f in exporter.functions:
        f.opset_import.extend(imports)
    onnx_graph = helper.make_graph(
        graph.nodes,
        fn.sym_name.data,
        inputs,
        outputs,
        initializer=graph.initializers,
        value_info=graph.value_info,
    )
    ir_version = max(_MIN_IR_VERSION, helper.find_min_ir_version_for(imports, True))
    model = helper.make_model(
        onnx_graph,
        opset_imports=imports,
        functions=functions,
        producer_name="tilegraph",
        producer_version=__version__,
        ir_version=ir_version,
    )
    helper.set_model_props(model, _model_metadata(module, fn))
    return model


def write_onnx(module: ModuleOp, path: str | Path, function: str | None = None) -> onnx.ModelProto:
    """Export ``module`` (:func:`export_onnx`), check the model with
    ``onnx.checker.check_model(full_check=True)`` and save it to ``path``.

    Raises :class:`OnnxExportError` when the module cannot be exported, the model does not
    pass the checker, or the file cannot be written.
    """
    model = export_onnx(module, function)
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise OnnxExportError(f"the exported model does not pass onnx.checker: {first}") from e
    try:
        onnx.save(model, str(path))
    except OSError as e:
        raise OnnxExportError(f"cannot write {path}: {e.strerror or e}") from e
    return model


def summary(model: onnx.ModelProto) -> str:
    """One line: node, function and initializer counts and the opsets (for the tools)."""
    opsets = ", ".join(f"{o.domain or 'ai.onnx'} {o.version}" for o in model.opset_import)
    return (
        f"{len(model.graph.node)} nodes, {len(model.functions)} functions, "
        f"{len(model.graph.initializer)} initializers; opsets {opsets}"
    )
