"""ONNX -> graph dialect, built directly in Python (no text round trip).

``load_onnx(path_or_model)`` returns a ``builtin.module`` with one ``func.func @main`` whose
arguments are the model's (non-initializer) inputs and whose results are its outputs.

* IR versions 3+ and default-domain opsets from 1 to the newest the installed onnx package
  defines (:data:`MAX_OPSET`; 28 for onnx 1.23). Graph ops implement their ONNX op as of
  opset 21 (:mod:`tilegraph.frontend.onnx_versions`):

  - models below opset 18 are converted to 18 with ``onnx.version_converter`` first, so the
    graph dialect sees opset-18 forms (reduction axes, Split/Pad/Slice/Clip parameters as
    inputs);
  - opset 18-21 nodes are taken as they are;
  - a node whose op version is newer than opset 21 is mapped onto the opset-21 form by the
    reviewed per-version steps of :mod:`~tilegraph.frontend.onnx_versions` (most of those
    versions only widen element types); a version with no step, or a new attribute value or
    input the graph op does not implement, is refused naming node, op and attribute.
* Initializers become ``graph.constant`` ops, also when an old model lists them among the
  graph inputs.
* ``dim_param`` dims become symbols of that name; dims with neither value nor name, and the
  anonymous dim_params ``""`` and ``?``, each get a fresh symbol ``s0, s1, ...``.
* The data input of a 4-D Conv, and its output, have origin format NCHW.
* Every problem is reported as one :class:`OnnxImportError` that names the place: unsupported
  (op type, node name) pairs and missing inputs are all listed before anything is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, LocationAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph import GraphOp, ShapeError
from tilegraph.dialects.graph.control_flow import RegionOp, identity_body
from tilegraph.dialects.graph.fused import YieldOp
from tilegraph.dialects.graph.operand_values import known_value
from tilegraph.dialects.graph.provenance import node_location
from tilegraph.dialects.guards import record_shape_env
from tilegraph.dialects.layout import TensorType
from tilegraph.formats import FormatError
from tilegraph.frontend.onnx_attributes import (
    attribute_args,
    attribute_value,
    constant_node_value,
    constant_op,
)
from tilegraph.frontend.onnx_checks import (
    check_inference_dropout,
    check_scan_version,
    check_structure,
    check_support,
    read_onnx_model,
)
from tilegraph.frontend.onnx_errors import OnnxImportError
from tilegraph.frontend.onnx_opsets import (
    TARGET_OPSET,
    default_opset,
    normalize_opset,
    ops_by_onnx_type,
)
from tilegraph.frontend.onnx_subgraphs import free_names, subgraphs
from tilegraph.frontend.onnx_symbols import (
    HintedSymbols,
    SymbolSource,
    named_dim_symbols,
    ssa_name,
    value_type_of,
)
from tilegraph.frontend.onnx_value_dependence import sizes_needed, value_dependent
from tilegraph.frontend.onnx_versions import NodeForm, UnmappedVersion, map_node
from tilegraph.symbolic.env import ShapeEnv
from tilegraph.symbolic.inference import DimSizesNeeded, inferring
from tilegraph.symbolic.inference import shape_env as shape_env_active


def supported_onnx_ops() -> set[str]:
    """ONNX op types the importer handles."""
    return set(ops_by_onnx_type())


class _GraphBuilder:
    def __init__(
        self,
        model: onnx.ModelProto,
        where: str,
        extra_initializers: Sequence[onnx.TensorProto],
        symbols: SymbolSource | None = None,
        input_values: Mapping[str, np.ndarray] | None = None,
    ):
        self.input_values = dict(input_values or {})
        self.arg_sources: dict[BlockArgument, SSAValue | str | None] = {}
        self.initializers = [*model.graph.initializer, *extra_initializers]
        self.model = model
        self.graph = model.graph
        self.where = where
        self.file = Path(where).name
        """The model's file name, for locations."""
        self.opset = default_opset(model) or TARGET_OPSET
        self.table = ops_by_onnx_type()
        self.values: dict[str, SSAValue] = {}
        self.symbols = symbols or SymbolSource(used=named_dim_symbols(self.graph))
        self.uses = _names_read(self.graph)

    def build(self) -> ModuleOp:
        initializer_names = {t.name for t in self.initializers}
        inputs = [vi for vi in self.graph.input if vi.name not in initializer_names]
        try:
            arg_types = [value_type_of(vi, self.symbols) for vi in inputs]
        except (ValueError, ShapeError) as e:
            raise OnnxImportError(f"{self.where}: {e}") from None
        arg_types = self._mark_conv_inputs(inputs, arg_types)
        block = Block(arg_types=arg_types)
        for vi, arg in zip(inputs, block.args, strict=True):
            arg.name_hint = ssa_name(vi.name)
            arg.location = self._location(vi.name)
            self.values[vi.name] = arg
            self.arg_sources[arg] = vi.name
        builder = Builder(InsertPoint.at_end(block))
        self._bind_values(builder, inputs, block)
        for tensor in self.initializers:
            self._constant(builder, tensor.name, numpy_helper.to_array(tensor))
        for node in self.graph.node:
            self._node(builder, node)
        results = []
        for out in self.graph.output:
            if out.name not in self.values:
                raise OnnxImportError(f"{self.where}: graph output '{out.name}' is never produced")
            results.append(self.values[out.name])
        builder.insert(func.ReturnOp(*results))
        fn = func.FuncOp("main", (arg_types, [r.type for r in results]), Region(block))
        fn.attributes["onnx.input_names"] = ArrayAttr([StringAttr(v.name) for v in inputs])
        fn.attributes["onnx.output_names"] = ArrayAttr(
            [StringAttr(o.name) for o in self.graph.output]
        )
        return ModuleOp([fn])

    def _bind_values(
        self, builder: Builder, inputs: Sequence[onnx.ValueInfoProto], block: Block
    ) -> None:
        """Inputs specialised by value read as constants of that value."""
        unknown = sorted(set(self.input_values) - {vi.name for vi in inputs})
        if unknown:
            raise OnnxImportError(f"{self.where}: input_values names no input: {unknown}")
        for vi, arg in zip(inputs, block.args, strict=True):
            if vi.name not in self.input_values:
                continue
            t = arg.type
            assert isinstance(t, TensorType)
            array = np.asarray(self.input_values[vi.name]).astype(t.dtype.numpy, copy=False)
            if t.is_static and list(array.shape) != [int(d) for d in t.origin_shape]:
                raise OnnxImportError(
                    f"{self.where}: input '{vi.name}': the bound value has shape "
                    f"{list(array.shape)}, the model declares {list(t.origin_shape)}"
                )
            self._constant(builder, vi.name, array)

    def _mark_conv_inputs(
        self, inputs: Sequence[onnx.ValueInfoProto], types: list[Attribute]
    ) -> list[Attribute]:
        """Graph inputs read as the data operand of a 4-D Conv are NCHW."""
        conv_data = {n.input[0] for n in self.graph.node if n.op_type == "Conv" and n.input}
        return [
            t.with_origin_format("NCHW")
            if vi.name in conv_data and isinstance(t, TensorType) and t.rank == 4
            else t
            for vi, t in zip(inputs, types, strict=True)
        ]

    def _location(self, name: str) -> LocationAttr:
        """The location of the node (or initializer) ``name``: it over the model's file."""
        return node_location(name, self.file)

    def _constant(
        self, builder: Builder, name: str, array: np.ndarray, node: str | None = None
    ) -> None:
        """A constant for the tensor ``name`` (from the node ``node``, else an initializer)."""
        try:
            op = constant_op(array)
        except (ValueError, FormatError) as e:
            raise OnnxImportError(f"{self.where}: constant '{name}': {e}") from None
        op.results[0].name_hint = ssa_name(name)
        op.location = self._location(node or name)
        builder.insert(op)
        self.values[name] = op.results[0]

    def _map_version(self, form: NodeForm, label: str) -> None:
        """The node's op version brought onto the graph form (onnx_versions), in place."""
        try:
            map_node(form, self.opset)
        except UnmappedVersion as e:
            raise OnnxImportError(f"{label}: {e}") from None

    def _node_label(self, node: onnx.NodeProto) -> str:
        return f"{self.where}: node '{node.name or node.output[0]}' ({node.op_type})"

    def _node(self, builder: Builder, node: onnx.NodeProto) -> None:
        label = self._node_label(node)
        attrs: dict[str, Any] = {}
        try:
            for a in node.attribute:
                attrs[a.name] = attribute_value(a)
        except ValueError as e:
            raise OnnxImportError(f"{label}: {e}") from None
        operands: list[SSAValue | None] = []
        for name in node.input:
            if not name:
                operands.append(None)
            elif name not in self.values:
                raise OnnxImportError(f"{label}: input '{name}' is not defined before the node")
            else:
                operands.append(self.values[name])
        while operands and operands[-1] is None:
            operands.pop()
        if node.op_type == "If" and operands and known_value(operands[0]) is not None:
            self._inline_known_if(builder, node, attrs, bool(known_value(operands[0])))
            return
        if node.op_type == "Constant":
            self._map_version(NodeForm(node.op_type, attrs, operands, None), label)
            value = constant_node_value(attrs, label)
            self._constant(builder, node.output[0], value, node.name or node.output[0])
            return
        if node.op_type == "If" and operands:
            try:
                self._op_node(builder, node, attrs, operands, label)
            except OnnxImportError as e:
                raise value_dependent(node, operands[0], label, e, self.arg_sources.get) from None
            return
        self._op_node(builder, node, attrs, operands, label)

    def _op_node(
        self,
        builder: Builder,
        node: onnx.NodeProto,
        attrs: dict[str, Any],
        operands: list[SSAValue | None],
        label: str,
    ) -> None:
        """The node as the first graph op of its ONNX type that takes it."""
        types = [None if v is None else v.type for v in operands]
        ranks = [t.rank if isinstance(t, TensorType) else None for t in types]
        candidates = [
            c
            for c in self.table[node.op_type]
            if c.accepts_onnx(ranks) and c.accepts_operand_types(types)
        ]
        if not candidates:
            raise OnnxImportError(f"{label}: no graph op implements it for input ranks {ranks}")
        used = [i for i, name in enumerate(node.output) if name and name in self.uses]
        enough = [
            c for c in candidates if len(c.get_irdl_definition().results) > max(used, default=0)
        ]
        # the first variant, among those with the optional outputs the model uses, that
        # takes the node (BatchNormalization: graph.batch_norm refuses training_mode = 1,
        # graph.batch_norm_training takes it)
        first_error: OnnxImportError | None = None
        for cls in enough or candidates:
            try:
                op = self._make_op(cls, node, list(operands), dict(attrs), label)
                break
            except OnnxImportError as e:
                first_error = first_error or e
        else:
            assert first_error is not None
            raise first_error
        op.location = self._location(node.name or node.output[0])
        builder.insert(op)
        for i, name in enumerate(node.output):
            if not name:
                continue
            if i >= len(op.results):
                if name in self.uses:
                    raise OnnxImportError(
                        f"{label}: output #{i} ('{name}') is used, but {cls.name} produces "
                        f"{len(op.results)} result(s)"
                    )
                continue
            op.results[i].name_hint = ssa_name(name)
            self.values[name] = op.results[i]

    def _make_op(
        self,
        cls: type[GraphOp],
        node: onnx.NodeProto,
        operands: list[SSAValue | None],
        attrs: dict[str, Any],
        label: str,
    ) -> GraphOp:
        """The graph op ``cls`` for the node (its version mapped onto the op's form)."""
        self._map_version(NodeForm(node.op_type, attrs, operands, cls), label)
        if node.op_type == "Dropout":
            check_inference_dropout(operands, label)
        known = set(cls.get_irdl_definition().properties)
        if issubclass(cls, RegionOp):
            known |= {*cls.ONNX_SUBGRAPHS, *cls.ONNX_STRUCTURAL_ATTRS}
        for name in list(attrs):
            if name in cls.ONNX_IGNORED_ATTRS:
                del attrs[name]
            elif name not in known:
                raise OnnxImportError(f"{label}: unsupported attribute '{name}'")
        try:
            with inferring(node.name or node.output[0]):
                if issubclass(cls, RegionOp):
                    return self._region_op(cls, node, operands, attrs, label)
                return cls.make(*operands, **attribute_args(cls, attrs))
        except OnnxImportError:
            raise  # from a subgraph: located already
        except DimSizesNeeded as e:
            raise sizes_needed(node, operands[e.operand], label, e, self.arg_sources.get) from None
        except (ShapeError, FormatError, TypeError, ValueError) as e:
            raise OnnxImportError(f"{label}: {e}") from None

    def _inline_known_if(
        self, builder: Builder, node: onnx.NodeProto, attrs: dict[str, Any], cond: bool
    ) -> None:
        """An If whose condition follows from constants and static shapes: the taken branch
        is imported in place. The other branch need not even type-check for these shapes
        (AffineGrid's function body splits a 2-D and a 3-D case this way)."""
        branch = attrs["then_branch" if cond else "else_branch"]
        for tensor in branch.initializer:
            self._constant(builder, tensor.name, numpy_helper.to_array(tensor))
        for inner in branch.node:
            self._node(builder, inner)
        for name, out in zip(node.output, branch.output, strict=True):
            if name:
                self.values[name] = self.values[out.name]

    def _region_op(
        self,
        cls: type[RegionOp],
        node: onnx.NodeProto,
        operands: Sequence[SSAValue | None],
        attrs: dict[str, Any],
        label: str,
    ) -> RegionOp:
        """A control-flow op: its subgraphs become bodies that capture the outer values they
        read (:mod:`tilegraph.frontend.onnx_subgraphs`)."""
        graphs = {name: attrs.pop(name) for name in cls.ONNX_SUBGRAPHS if name in attrs}
        optional = cls.ONNX_OPTIONAL_SUBGRAPHS
        missing = [n for n in cls.ONNX_SUBGRAPHS if n not in graphs and n not in optional]
        if missing:
            raise OnnxImportError(f"{label}: missing graph attribute '{missing[0]}'")
        names = list(dict.fromkeys(n for g in graphs.values() for n in free_names(g)))
        unknown = [n for n in names if n not in self.values]
        if unknown:
            raise OnnxImportError(f"{label}: a subgraph reads '{unknown[0]}', which is not defined")

        captures = [self.values[n] for n in names]

        def build_body(attr: str, formal: Sequence[Attribute]) -> Block:
            if attr not in graphs:  # an absent optional subgraph: the identity
                return identity_body(formal, [v.type for v in captures])
            return self._body(graphs[attr], formal, names, f"{label}: {attr}")

        return cls.from_onnx(operands, attrs, captures, build_body)

    def _body(
        self,
        graph: onnx.GraphProto,
        formal: Sequence[Attribute],
        capture_names: Sequence[str],
        where: str,
    ) -> Block:
        """``graph`` as a block: arguments of the ``formal`` types for its inputs, then the
        captures; ends with ``graph.yield`` of its outputs."""
        if len(graph.input) != len(formal):
            raise OnnxImportError(
                f"{where}: the subgraph takes {len(graph.input)} inputs, expected {len(formal)}"
            )
        captured = [self.values[n] for n in capture_names]
        block = Block(arg_types=[*formal, *(v.type for v in captured)])
        saved = (self.values, self.uses, self.where)
        self.values, self.uses, self.where = {}, _names_read(graph), where
        try:
            names = [vi.name for vi in graph.input] + list(capture_names)
            for name, arg in zip(names, block.args, strict=True):
                arg.name_hint = ssa_name(name)
                self.values[name] = arg
            for arg, outer in zip(block.args[len(graph.input) :], captured, strict=True):
                self.arg_sources[arg] = outer
            builder = Builder(InsertPoint.at_end(block))
            for tensor in graph.initializer:
                self._constant(builder, tensor.name, numpy_helper.to_array(tensor))
            for node in graph.node:
                self._node(builder, node)
            missing = [o.name for o in graph.output if o.name not in self.values]
            if missing:
                raise OnnxImportError(f"{where}: output '{missing[0]}' is never produced")
            builder.insert(YieldOp(*(self.values[o.name] for o in graph.output)))
        finally:
            self.values, self.uses, self.where = saved
        return block


def _names_read(graph: onnx.GraphProto) -> set[str]:
    """Names the graph's nodes (and their subgraphs) read, and its outputs."""
    names = {name for n in graph.node for name in n.input if name}
    names |= {name for n in graph.node for _, sub in subgraphs(n) for name in free_names(sub)}
    return names | {o.name for o in graph.output}


def load_onnx(
    source: str | Path | bytes | onnx.ModelProto,
    *,
    name: str | None = None,
    shape_env: ShapeEnv | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    input_values: Mapping[str, np.ndarray] | None = None,
) -> ModuleOp:
    """Import an ONNX model (path, serialized bytes or ModelProto) into the graph dialect.

    Without ``shape_env``, every input axis that is not a static size is a symbol (equal
    dim_params one symbol, each anonymous axis its own). With a ``shape_env`` and the
    ``input_shapes`` of concrete inputs (the hints), the env decides what each such axis is
    (by its mode), the shape functions record their guards in it, and the module carries
    the guards and the inputs each symbol comes from (:mod:`tilegraph.dialects.guards`).

    ``input_values`` specialises the model on the values of some inputs (a scalar such as a
    sample rate that decides an If): inside the function each such input reads as a
    ``graph.constant`` of its value, so conditions computed from it are known and the taken
    branch is imported in place. The argument stays in the signature; the caller must only
    run the module on inputs with these values (:class:`tilegraph.Session` checks them).
    An If whose branches differ in rank and whose condition is unknown raises
    :class:`ValueDependentError` naming the inputs whose shapes or values would decide it.

    Raises :class:`OnnxImportError` with a located message on any problem; messages start
    with ``name`` (default: the path, or ``<model>``).
    """
    where = name or ("<model>" if isinstance(source, onnx.ModelProto | bytes) else str(source))
    model = read_onnx_model(source, where)
    if model.ir_version < 3:
        raise OnnxImportError(f"{where}: IR version {model.ir_version} is not supported (3+)")
    check_support(model.graph, where)
    check_structure(model.graph, where)
    check_scan_version(model, where)
    model, held_back = normalize_opset(model, where)
    check_support(model.graph, where)  # conversion may introduce ops
    symbols = None
    if shape_env is not None:
        symbols = HintedSymbols(env=shape_env, shapes=dict(input_shapes or {}))
    with shape_env_active(shape_env):
        module = _GraphBuilder(model, where, held_back, symbols, input_values).build()
        try:
            module.verify()
        except Exception as e:
            raise OnnxImportError(f"{where}: imported IR does not verify: {e}") from None
    if isinstance(symbols, HintedSymbols):
        record_shape_env(module, symbols.env, symbols.origins)
    return module
