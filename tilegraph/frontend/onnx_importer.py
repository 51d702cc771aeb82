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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.element_types import element_type_of, in_container
from tilegraph.dialects.graph import GRAPH_OPS, ConstantOp, GraphOp, ShapeError
from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.graph.elementwise import onnx_dtype_name
from tilegraph.dialects.guards import record_shape_env
from tilegraph.dialects.layout import TensorType
from tilegraph.formats import FormatError
from tilegraph.frontend.onnx_exclusions import exclusion_reason
from tilegraph.frontend.onnx_versions import NodeForm, UnmappedVersion, map_node
from tilegraph.symbolic.dims import Dim, shape_symbol
from tilegraph.symbolic.env import ShapeEnv
from tilegraph.symbolic.guards import GuardError
from tilegraph.symbolic.inference import inferring
from tilegraph.symbolic.inference import shape_env as shape_env_active

TARGET_OPSET = 18
"""Models below this opset are converted to it with ``onnx.version_converter``."""
MIN_OPSET = 1
MAX_OPSET = onnx.defs.onnx_opset_version()
"""The newest opset the installed onnx package defines."""


class OnnxImportError(ValueError):
    """The model cannot be imported; the message says where and why (one line per issue)."""


def _ops_by_onnx_type() -> dict[str, list[type[GraphOp]]]:
    table: dict[str, list[type[GraphOp]]] = {}
    for cls in GRAPH_OPS:
        if cls.ONNX_OP is not None:
            table.setdefault(cls.ONNX_OP, []).append(cls)
    return table


def supported_onnx_ops() -> set[str]:
    """ONNX op types the importer handles."""
    return set(_ops_by_onnx_type())


_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]")


def ssa_name(onnx_name: str) -> str | None:
    """An SSA name hint for an ONNX value name (``123`` -> ``v123``, ``a/b:0`` -> ``a_b_0``)."""
    if not onnx_name:
        return None
    name = _NAME_CHARS.sub("_", onnx_name)
    return name if name[0].isalpha() or name[0] == "_" else f"v{name}"


def _read_model(source: str | Path | bytes | onnx.ModelProto, where: str) -> onnx.ModelProto:
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        if isinstance(source, bytes):
            return onnx.load_from_string(source)
        path = Path(source)
        if not path.is_file():
            raise OnnxImportError(f"{where}: no such file")
        return onnx.load(str(path))
    except OnnxImportError:
        raise
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxImportError(
            f"{where}: not a valid ONNX model (corrupt or truncated file?): {type(e).__name__}: {e}"
        ) from None


def default_opset(model: onnx.ModelProto) -> int | None:
    """The default-domain opset the model imports (None if it imports none)."""
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else None


def _normalize_opset(
    model: onnx.ModelProto, where: str
) -> tuple[onnx.ModelProto, list[onnx.TensorProto]]:
    """The model at TARGET_OPSET or newer, and the large initializers held back from the
    conversion (they belong to the returned model's graph; the builder reads both)."""
    version = default_opset(model)
    if version is None:
        raise OnnxImportError(f"{where}: the model imports no default-domain opset")
    if not MIN_OPSET <= version <= MAX_OPSET:
        raise OnnxImportError(
            f"{where}: opset {version} is not supported (supported: {MIN_OPSET}-{MAX_OPSET})"
        )
    used_other = {n.domain for n in model.graph.node if n.domain not in ("", "ai.onnx")}
    if used_other:
        ops = sorted(
            f"{n.domain}:{n.op_type} (node '{n.name}')"
            for n in model.graph.node
            if n.domain in used_other
        )
        raise OnnxImportError(f"{where}: unsupported operator domains: " + ", ".join(ops))
    if version < 7:
        model = fix_legacy_prelu(model)
    if version < TARGET_OPSET:
        try:
            return _convert_without_weights(model)
        except Exception as e:
            raise OnnxImportError(
                f"{where}: cannot convert opset {version} to {TARGET_OPSET}: {e}"
            ) from None
    return model, []


_LARGE_INITIALIZER = 1024
"""Initializers with more elements than this are held back from the version converter."""


def _convert_without_weights(
    model: onnx.ModelProto,
) -> tuple[onnx.ModelProto, list[onnx.TensorProto]]:
    """``onnx.version_converter`` to TARGET_OPSET, without copying the large weights through
    it: they are replaced by graph inputs of the same type and shape for the conversion and
    returned beside the converted model instead of being copied back into it (on VGG-19 the
    import goes from ~8 s to ~0.5 s; the converter serialises the whole model). Small
    initializers stay in: an adapter may read them.
    """
    from onnx import version_converter

    large = [t for t in model.graph.initializer if _numel(t) > _LARGE_INITIALIZER]
    if not large:
        return version_converter.convert_version(model, TARGET_OPSET), []
    names = {t.name for t in large}
    skeleton = onnx.ModelProto()
    skeleton.ir_version = model.ir_version
    skeleton.opset_import.extend(model.opset_import)
    graph = skeleton.graph
    graph.name = model.graph.name
    graph.node.extend(model.graph.node)
    graph.input.extend(model.graph.input)
    graph.output.extend(model.graph.output)
    graph.value_info.extend(model.graph.value_info)
    graph.initializer.extend(t for t in model.graph.initializer if t.name not in names)
    declared = {vi.name for vi in skeleton.graph.input}
    for t in large:
        if t.name not in declared:
            skeleton.graph.input.append(
                onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            )
    converted = version_converter.convert_version(skeleton, TARGET_OPSET)
    was_input = {vi.name for vi in model.graph.input}
    inputs = [vi for vi in converted.graph.input if vi.name not in names or vi.name in was_input]
    del converted.graph.input[:]
    converted.graph.input.extend(inputs)
    return converted, large


def _numel(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n


def fix_legacy_prelu(model: onnx.ModelProto) -> onnx.ModelProto:
    """PRelu before opset 7 applied a 1-D slope along axis 1; from opset 7 on it broadcasts
    numpy-style. The version converter keeps the slope as is, so reshape a 1-D initializer
    slope ``[C]`` to ``[C, 1, ...]`` for the data's rank."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    ranks = {
        vi.name: len(vi.type.tensor_type.shape.dim)
        for vi in [*model.graph.input, *model.graph.value_info]
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")
    }
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type != "PRelu" or len(node.input) < 2:
            continue
        slope = inits.get(node.input[1])
        rank = ranks.get(node.input[0])
        if slope is None or rank is None or len(slope.dims) != 1 or rank < 3:
            continue
        array = numpy_helper.to_array(slope).reshape([-1] + [1] * (rank - 2))
        slope.CopyFrom(numpy_helper.from_array(array, slope.name))
        for vi in model.graph.input:  # old IR: initializers are declared as inputs too
            if vi.name == slope.name and vi.type.HasField("tensor_type"):
                shape = vi.type.tensor_type.shape
                del shape.dim[:]
                for d in array.shape:
                    shape.dim.add().dim_value = d
    return model


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
    raise ValueError(f"attribute '{attr.name}' has unsupported type {A.AttributeType.Name(kind)}")


def _tensor_type_of(value_info: onnx.ValueInfoProto, fresh: _SymbolSource) -> TensorType:
    t = value_info.type
    if not t.HasField("tensor_type"):
        raise ValueError(f"input '{value_info.name}' is not a tensor")
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


def _named_dim_symbols(graph: onnx.GraphProto) -> set[str]:
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
class _SymbolSource:
    """Dims of the graph inputs' axes: a static size, a named dim's symbol (equal names are
    one symbol), a fresh symbol for an anonymous one."""

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
class _HintedSymbols(_SymbolSource):
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


def _check_support(graph: onnx.GraphProto, where: str) -> None:
    table = _ops_by_onnx_type()
    excluded = [
        f"{n.op_type} (node '{n.name or '<unnamed>'}'): {reason}"
        for n in graph.node
        if (reason := exclusion_reason(n.op_type, n.domain)) is not None
    ]
    if excluded:
        raise OnnxImportError(f"{where}: not supported by design: {'; '.join(excluded)}")
    missing = [
        f"{n.op_type} (node '{n.name or '<unnamed>'}')"
        for n in graph.node
        if n.op_type not in table
    ]
    if missing:
        raise OnnxImportError(
            f"{where}: unsupported operators: {', '.join(missing)}"
            f" ({len(missing)} node{'s' if len(missing) != 1 else ''})"
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
        symbols: _SymbolSource | None = None,
    ):
        self.initializers = [*model.graph.initializer, *extra_initializers]
        self.model = model
        self.graph = model.graph
        self.where = where
        self.opset = default_opset(model) or TARGET_OPSET
        self.table = _ops_by_onnx_type()
        self.values: dict[str, SSAValue] = {}
        self.symbols = symbols or _SymbolSource(used=_named_dim_symbols(self.graph))
        self.uses = {name for n in self.graph.node for name in n.input if name}
        self.uses |= {o.name for o in self.graph.output}

    def build(self) -> ModuleOp:
        initializer_names = {t.name for t in self.initializers}
        inputs = [vi for vi in self.graph.input if vi.name not in initializer_names]
        try:
            arg_types = [_tensor_type_of(vi, self.symbols) for vi in inputs]
        except (ValueError, ShapeError) as e:
            raise OnnxImportError(f"{self.where}: {e}") from None
        arg_types = self._mark_conv_inputs(inputs, arg_types)
        block = Block(arg_types=arg_types)
        for vi, arg in zip(inputs, block.args, strict=True):
            arg.name_hint = ssa_name(vi.name)
            self.values[vi.name] = arg
        builder = Builder(InsertPoint.at_end(block))
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

    def _mark_conv_inputs(
        self, inputs: Sequence[onnx.ValueInfoProto], types: list[TensorType]
    ) -> list[TensorType]:
        """Graph inputs read as the data operand of a 4-D Conv are NCHW."""
        conv_data = {n.input[0] for n in self.graph.node if n.op_type == "Conv" and n.input}
        return [
            t.with_origin_format("NCHW") if vi.name in conv_data and t.rank == 4 else t
            for vi, t in zip(inputs, types, strict=True)
        ]

    def _constant(self, builder: Builder, name: str, array: np.ndarray) -> None:
        try:
            array = np.asarray(array)
            held = TensorType(array.shape, element_type_of(array.dtype))
            op = ConstantOp(in_container(array), held)
        except (ValueError, FormatError) as e:
            raise OnnxImportError(f"{self.where}: constant '{name}': {e}") from None
        op.results[0].name_hint = ssa_name(name)
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
        if node.op_type == "Constant":
            self._map_version(NodeForm(node.op_type, attrs, operands, None), label)
            self._constant(builder, node.output[0], _constant_node_value(attrs, label))
            return
        ranks = [
            v.type.rank if v is not None and isinstance(v.type, TensorType) else None
            for v in operands
        ]
        candidates = [c for c in self.table[node.op_type] if c.accepts_onnx(ranks)]
        if not candidates:
            raise OnnxImportError(f"{label}: no graph op implements it for input ranks {ranks}")
        used = [i for i, name in enumerate(node.output) if name and name in self.uses]
        enough = [
            c for c in candidates if len(c.get_irdl_definition().results) > max(used, default=0)
        ]
        cls = (enough or candidates)[0]  # a variant with the optional outputs the model uses
        self._map_version(NodeForm(node.op_type, attrs, operands, cls), label)
        if node.op_type == "Dropout":
            _check_inference_dropout(operands, label)
        known = set(cls.get_irdl_definition().properties)
        for name in list(attrs):
            if name in cls.ONNX_IGNORED_ATTRS:
                del attrs[name]
            elif name not in known:
                raise OnnxImportError(f"{label}: unsupported attribute '{name}'")
        try:
            with inferring(node.name or node.output[0]):
                op = cls.make(*operands, **_attribute_args(cls, attrs))
        except (ShapeError, FormatError, TypeError, ValueError) as e:
            raise OnnxImportError(f"{label}: {e}") from None
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
) -> ModuleOp:
    """Import an ONNX model (path, serialized bytes or ModelProto) into the graph dialect.

    Without ``shape_env``, every input axis that is not a static size is a symbol (equal
    dim_params one symbol, each anonymous axis its own). With a ``shape_env`` and the
    ``input_shapes`` of concrete inputs (the hints), the env decides what each such axis is
    (by its mode), the shape functions record their guards in it, and the module carries
    the guards and the inputs each symbol comes from (:mod:`tilegraph.dialects.guards`).

    Raises :class:`OnnxImportError` with a located message on any problem; messages start
    with ``name`` (default: the path, or ``<model>``).
    """
    where = name or ("<model>" if isinstance(source, onnx.ModelProto | bytes) else str(source))
    model = _read_model(source, where)
    if model.ir_version < 3:
        raise OnnxImportError(f"{where}: IR version {model.ir_version} is not supported (3+)")
    _check_support(model.graph, where)
    _check_structure(model.graph, where)
    model, held_back = _normalize_opset(model, where)
    _check_support(model.graph, where)  # conversion may introduce ops
    symbols = None
    if shape_env is not None:
        symbols = _HintedSymbols(env=shape_env, shapes=dict(input_shapes or {}))
    with shape_env_active(shape_env):
        module = _GraphBuilder(model, where, held_back, symbols).build()
        try:
            module.verify()
        except Exception as e:
            raise OnnxImportError(f"{where}: imported IR does not verify: {e}") from None
    if isinstance(symbols, _HintedSymbols):
        record_shape_env(module, symbols.env, symbols.origins)
    return module
