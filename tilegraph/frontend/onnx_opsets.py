"""Opsets: which the importer takes, and how models below opset 18 are brought to it
(``onnx.version_converter``, without copying large weights, with ops it converts wrongly
kept out of its way), which graph ops implement which ONNX op types, and PRelu slopes that
older exporters wrote for the wrong axis."""

from __future__ import annotations

from functools import cache

import onnx
from onnx import numpy_helper

from tilegraph.dialects.graph import GRAPH_OPS, GraphOp
from tilegraph.frontend.onnx_errors import OnnxImportError
from tilegraph.frontend.onnx_subgraphs import all_nodes

TARGET_OPSET = 18
"""Models below this opset are converted to it with ``onnx.version_converter``."""
MIN_OPSET = 1
MAX_OPSET = onnx.defs.onnx_opset_version()
"""The newest opset the installed onnx package defines."""


@cache
def ops_by_onnx_type() -> dict[str, list[type[GraphOp]]]:
    """The graph op classes that implement each ONNX op type, in declaration order."""
    table: dict[str, list[type[GraphOp]]] = {}
    for cls in GRAPH_OPS:
        if cls.ONNX_OP is not None:
            table.setdefault(cls.ONNX_OP, []).append(cls)
    return table


def _implemented_in(domain: str, op_type: str) -> bool:
    """Whether a graph op implements ``op_type`` of that (non-default) ONNX domain: its
    class names the domain in ``ONNX_DOMAIN`` (e.g. FlexAttention of ai.onnx.preview)."""
    classes = ops_by_onnx_type().get(op_type, [])
    return any(c.ONNX_DOMAIN == domain for c in classes)


def default_opset(model: onnx.ModelProto) -> int | None:
    """The default-domain opset the model imports (None if it imports none)."""
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return versions[0] if versions else None


def normalize_opset(
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
    used_other = {
        n.domain
        for n in model.graph.node
        if n.domain not in ("", "ai.onnx") and not _implemented_in(n.domain, n.op_type)
    }
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
    large = [t for t in model.graph.initializer if _numel(t) > _LARGE_INITIALIZER]
    if not large:
        return _version_convert(model), []
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
    converted = _version_convert(skeleton)
    was_input = {vi.name for vi in model.graph.input}
    inputs = [vi for vi in converted.graph.input if vi.name not in names or vi.name in was_input]
    del converted.graph.input[:]
    converted.graph.input.extend(inputs)
    return converted, large


_SHIELDED_OPS = frozenset({"Upsample"})
"""Op types kept out of ``onnx.version_converter``: it rewrites Upsample into a Resize that
lacks Upsample's coordinate mapping (``asymmetric``; Resize-11 defaults to ``half_pixel``),
which changes every linear and every non-integer nearest result. Their nodes keep their own
version's form, which the graph op implements (``graph.upsample``)."""

_SHIELD_DOMAIN = "tilegraph.shielded"
"""The private domain shielded nodes sit in while the converter runs (it leaves other
domains alone)."""


def _version_convert(model: onnx.ModelProto) -> onnx.ModelProto:
    """``onnx.version_converter`` to TARGET_OPSET with the :data:`_SHIELDED_OPS` nodes
    moved to a private domain while it runs. Resize-10 is Upsample-9 under a new name (same
    inputs, ``mode``, asymmetric coordinates) and the converter makes the same half_pixel
    Resize-11 of it: it is imported as the Upsample it is."""
    from onnx import version_converter

    def default_domain(node: onnx.NodeProto) -> bool:
        return node.domain in ("", "ai.onnx")

    def shielded(node: onnx.NodeProto) -> bool:
        return node.op_type in _SHIELDED_OPS and default_domain(node)

    def resize_10(node: onnx.NodeProto) -> bool:
        return node.op_type == "Resize" and default_domain(node)

    opset = default_opset(model) or TARGET_OPSET
    renamed = opset <= 10 and any(resize_10(n) for n in all_nodes(model.graph))
    if not renamed and not any(shielded(n) for n in all_nodes(model.graph)):
        return version_converter.convert_version(model, TARGET_OPSET)
    hidden = onnx.ModelProto()
    hidden.CopyFrom(model)
    if renamed:
        for node in filter(resize_10, all_nodes(hidden.graph)):
            node.op_type = "Upsample"
    for node in filter(shielded, all_nodes(hidden.graph)):
        node.domain = _SHIELD_DOMAIN
    hidden.opset_import.append(onnx.helper.make_opsetid(_SHIELD_DOMAIN, 1))
    converted = version_converter.convert_version(hidden, TARGET_OPSET)
    for node in all_nodes(converted.graph):
        if node.domain == _SHIELD_DOMAIN:
            node.domain = ""
    imports = [o for o in converted.opset_import if o.domain != _SHIELD_DOMAIN]
    del converted.opset_import[:]
    converted.opset_import.extend(imports)
    return converted


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
