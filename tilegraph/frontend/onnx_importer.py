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

from tilegraph.dialects.element_types import element_type_of, in_container
from tilegraph.dialects.graph import ConstantOp, GraphOp, ShapeError
from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.control_flow import RegionOp, identity_body
from tilegraph.dialects.graph.fused import YieldOp
from tilegraph.dialects.graph.input_dependence import input_dependence
from tilegraph.dialects.graph.operand_values import known_value
from tilegraph.dialects.graph.provenance import node_location
from tilegraph.dialects.guards import record_shape_env
from tilegraph.dialects.layout import TensorType
from tilegraph.formats import Format, FormatError
from tilegraph.frontend.external_data import check_external_data_files, check_no_external_data
from tilegraph.frontend.onnx_errors import OnnxImportError, ValueDependentError
from tilegraph.frontend.onnx_exclusions import exclusion_reason
from tilegraph.frontend.onnx_opsets import (
    TARGET_OPSET,
    default_opset,
    normalize_opset,
    ops_by_onnx_type,
)
from tilegraph.frontend.onnx_subgraphs import all_nodes, free_names, proto_value_type, subgraphs
from tilegraph.frontend.onnx_symbols import (
    HintedSymbols,
    SymbolSource,
    named_dim_symbols,
    ssa_name,
    value_type_of,
)
from tilegraph.frontend.onnx_versions import NodeForm, UnmappedVersion, map_node
from tilegraph.symbolic.env import ShapeEnv
from tilegraph.symbolic.inference import DimSizesNeeded, inferring
from tilegraph.symbolic.inference import shape_env as shape_env_active


def supported_onnx_ops() -> set[str]:
    """ONNX op types the importer handles."""
    return set(ops_by_onnx_type())


def read_onnx_model(source: str | Path | bytes | onnx.ModelProto, where: str) -> onnx.ModelProto:
    """The model of a file, bytes or a ModelProto; OnnxImportError naming ``where`` for a
    missing file or one that is not an ONNX model."""
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        if isinstance(source, bytes):
            model = onnx.load_from_string(source)
            check_no_external_data(model, where)
            return model
        path = Path(source)
        if not path.is_file():
            raise OnnxImportError(f"{where}: no such file")
        model = onnx.load(str(path), load_external_data=False)
        check_external_data_files(model, path.parent, where)
        onnx.load_external_data_for_model(model, str(path.parent))
        return model
    except OnnxImportError:
        raise
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxImportError(
            f"{where}: not a valid ONNX model ({e}); the file is corrupt or truncated, or "
            "not an ONNX model: export or download it again"
        ) from None


def _attribute_value(attr: onnx.AttributeProto) -> Any:
    kind = attr.type
    A = onnx.AttributeProto
    if kind == A.FLOAT:
        return float(attr.f)
    if kind == A.INT:
        return int(attr.i)
    if kind == A.STRING:
        return attr.s.decode()
    if kind == A.INTS:
        return [int(v) for v in attr.ints]
    if kind == A.FLOATS:
        return [float(v) for v in attr.floats]
    if kind == A.STRINGS:
        return [v.decode() for v in attr.strings]
    if kind == A.TENSOR:
        return numpy_helper.to_array(attr.t)
    if kind == A.GRAPH:
        return attr.g
    if kind == A.TYPE_PROTO:
        return proto_value_type(attr.tp, f"attribute '{attr.name}'")
    raise ValueError(f"attribute '{attr.name}' has unsupported type {A.AttributeType.Name(kind)}")


def constant_op(array: np.ndarray, origin_format: Format | str = Format.ND) -> ConstantOp:
    """A ``graph.constant`` of ``array`` (origin ``origin_format``), held the way tilegraph
    holds its element type (ml_dtypes' bfloat16 and int4 arrays in float32 / int8
    containers). ValueError (FormatError, UnsupportedElementType) for data of no tensor
    dtype. Shared with :mod:`tilegraph.builder`."""
    array = np.asarray(array)
    held = TensorType(array.shape, element_type_of(array.dtype), origin_format)
    return ConstantOp(in_container(array), held)


def _check_support(graph: onnx.GraphProto, where: str) -> None:
    table = ops_by_onnx_type()
    excluded = [
        f"{n.op_type} (node '{n.name or '<unnamed>'}'): {reason}"
        for n in all_nodes(graph)
        if (reason := exclusion_reason(n.op_type, n.domain)) is not None
    ]
    if excluded:
        raise OnnxImportError(f"{where}: not supported by design: {'; '.join(excluded)}")
    missing = [
        f"{n.op_type} (node '{n.name or '<unnamed>'}')"
        for n in all_nodes(graph)
        if n.op_type not in table
    ]
    if missing:
        raise OnnxImportError(
            f"{where}: unsupported operators: {', '.join(missing)}"
            f" ({len(missing)} node{'s' if len(missing) != 1 else ''})"
        )


def _check_scan_version(model: onnx.ModelProto, where: str) -> None:
    """Scan-8 (a batch axis and ``sequence_lens``) is not imported: its conversion to Scan-9
    changes what the inputs mean."""
    opset = default_opset(model)
    if opset is not None and opset < 9 and any(n.op_type == "Scan" for n in all_nodes(model.graph)):
        raise OnnxImportError(
            f"{where}: Scan-8 (opset {opset}: batched, with sequence_lens) is not supported; "
            "Scan-9 and later are"
        )


def _check_structure(graph: onnx.GraphProto, where: str) -> None:
    """Every node input is defined before it is used; every graph output is produced."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    problems = []
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                problems.append(
                    f"node '{node.name or node.output[0]}' ({node.op_type}): input '{name}' "
                    "is not defined before the node"
                )
        defined.update(o for o in node.output if o)
    problems += [
        f"graph output '{o.name}' is never produced" for o in graph.output if o.name not in defined
    ]
    if problems:
        raise OnnxImportError(f"{where}: " + f"\n{where}: ".join(problems))


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
                attrs[a.name] = _attribute_value(a)
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
            value = _constant_node_value(attrs, label)
            self._constant(builder, node.output[0], value, node.name or node.output[0])
            return
        if node.op_type == "If" and operands:
            try:
                self._op_node(builder, node, attrs, operands, label)
            except OnnxImportError as e:
                raise self._value_dependent(node, operands[0], label, e) from None
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
            _check_inference_dropout(operands, label)
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
                return cls.make(*operands, **_attribute_args(cls, attrs))
        except OnnxImportError:
            raise  # from a subgraph: located already
        except DimSizesNeeded as e:
            raise self._sizes_needed(node, operands[e.operand], label, e) from None
        except (ShapeError, FormatError, TypeError, ValueError) as e:
            raise OnnxImportError(f"{label}: {e}") from None

    def _sizes_needed(
        self, node: onnx.NodeProto, operand: SSAValue | None, label: str, problem: DimSizesNeeded
    ) -> OnnxImportError:
        """A node whose result rank depends on symbolic sizes of ``operand``: a
        :class:`ValueDependentError` naming the inputs whose shapes decide them (the import
        is repeated with those shapes bound), or a plain located error when none does."""
        found = input_dependence(operand, self.arg_sources.get, of_shape=True) if operand else None
        if not found:
            return OnnxImportError(f"{label}: {problem}")
        return ValueDependentError(
            f"{label}: {problem}; the rank depends on the shapes of input(s) "
            f"{', '.join(found.shapes)}: give concrete inputs (tilegraph-run --input or --dim, "
            "or call a Session) so that it is known when compiling",
            node.name or node.output[0],
            found.shapes,
            [],
            how="has a rank set by",
        )

    def _value_dependent(
        self, node: onnx.NodeProto, cond: SSAValue | None, label: str, problem: OnnxImportError
    ) -> OnnxImportError:
        """An If that could not be built while its condition is unknown (its branches return
        different ranks, or the untaken branch does not fit these shapes): a
        :class:`ValueDependentError` naming the inputs whose shapes or values decide the
        condition (with those of an inner If), or ``problem`` itself when none does."""
        found = input_dependence(cond, self.arg_sources.get) if cond is not None else None
        shapes = list(found.shapes) if found else []
        values = list(found.values) if found else []
        here = node.name or node.output[0]
        if isinstance(problem, ValueDependentError):
            deciders = {**{n: here for n in shapes + values}, **problem.deciders}
            deciders.update({n: problem.node for n in problem.shape_inputs + problem.value_inputs})
            shapes += [n for n in problem.shape_inputs if n not in shapes]
            values += [n for n in problem.value_inputs if n not in values]
            return ValueDependentError(
                str(problem), problem.node, shapes, values, deciders, problem.how
            )
        if not shapes and not values:
            return problem
        parts = [f"the shapes of input(s) {', '.join(shapes)}"] if shapes else []
        parts += [f"the value(s) of input(s) {', '.join(values)}"] if values else []
        return ValueDependentError(
            f"{problem}; the branch that runs depends on {' and '.join(parts)}: give concrete "
            "inputs (tilegraph-run --input, or call a Session) so that the branch is chosen "
            "when compiling",
            here,
            shapes,
            values,
        )

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


def _check_inference_dropout(operands: Sequence[SSAValue | None], label: str) -> None:
    """tilegraph compiles for inference: Dropout's ``training_mode``, when given, must be a
    constant (``graph.dropout`` refuses a constant true), not a value known only at run time."""
    training = operands[2] if len(operands) > 2 else None
    if training is not None and constant_value(training) is None:
        raise OnnxImportError(
            f"{label}: input 'training_mode' is computed at run time; tilegraph compiles for "
            "inference only and needs it to be a constant false"
        )


def _attribute_args(cls: type[GraphOp], attrs: Mapping[str, Any]) -> dict[str, Any]:
    """ONNX attribute values as ``make`` arguments (tensor attributes become dense data)."""
    from tilegraph.dialects.graph.dense import DenseAttr

    out: dict[str, Any] = {}
    for name, value in attrs.items():
        out[name] = DenseAttr.from_array(value) if isinstance(value, np.ndarray) else value
    return out


def _constant_node_value(attrs: Mapping[str, Any], label: str) -> np.ndarray:
    if "value" in attrs:
        return np.asarray(attrs["value"])
    if "value_float" in attrs:
        return np.array(attrs["value_float"], dtype=np.float32)
    if "value_int" in attrs:
        return np.array(attrs["value_int"], dtype=np.int64)
    if "value_floats" in attrs:
        return np.array(attrs["value_floats"], dtype=np.float32)
    if "value_ints" in attrs:
        return np.array(attrs["value_ints"], dtype=np.int64)
    raise OnnxImportError(f"{label}: unsupported Constant form ({', '.join(attrs)})")


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
    _check_support(model.graph, where)
    _check_structure(model.graph, where)
    _check_scan_version(model, where)
    model, held_back = normalize_opset(model, where)
    _check_support(model.graph, where)  # conversion may introduce ops
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
