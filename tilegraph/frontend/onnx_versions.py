"""ONNX operator versions newer than the graph dialect's forms, mapped onto those forms.

The contract between the importer and the graph ops: a graph op implements its ONNX op
(``ONNX_OP``) as of opset :data:`NATIVE_MAX_OPSET` (21) — the version current at opset 21, or
the op's first version when the op is newer than that. Models below opset 18 are converted to
18 by ``onnx.version_converter`` (in the importer), and opset 18-21 nodes reach the graph ops as
they are.

Every op version introduced after opset 21, up to the newest the installed onnx defines, is
brought onto that form by one reviewed :class:`VersionStep` per (op, version) in
:data:`VERSION_STEPS`: what the version changed (from the operator schemas and onnx's
Changelog) and how a node of that version maps back onto the previous version. Most steps
between opsets 22 and 28 only widen the element types (bfloat16, float4/6/8, int2/int4); a
type the graph dialect cannot hold is refused where the tensor is typed. Real changes are
new attributes (dropped when they hold the value that keeps the previous behaviour, else kept
so that the importer refuses them unless the graph op implements the attribute), new
optional inputs (refused when given unless the graph op has the operand slot) and per-op
rules (``adjust``). An (op, version) newer than opset 21 with no step here is refused with
:class:`UnmappedVersion`: a new onnx release is never imported on trust.

Why not down-convert with ``onnx.version_converter``: on the node test suite of onnx 1.23 it
cannot bring 53 of the 320 opset-22+ cases of supported ops down to 21 (no adapter for ops
new after 21 such as RMSNormalization, nor for GlobalMaxPool-22; type-restriction asserts on
Cast), and where it works it copies the whole model. A reviewed step per version is also
where a semantic change is written down.

Adding a graph op whose ONNX op has versions after 21 (see the table below for the ones that
exist): implement the op at its opset-21 form and check the steps listed for it; if the graph
op implements a newer version's feature (an attribute, an input), the generic rules pass it
through by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import onnx
from onnx import TensorProto
from xdsl.ir import SSAValue

from tilegraph.dialects.element_types import UnsupportedElementType, dtype_of
from tilegraph.dialects.graph import GraphOp
from tilegraph.dialects.layout import TensorType

NATIVE_MAX_OPSET = 21
"""Graph ops implement their ONNX op as of this opset (see the module docstring)."""


class UnmappedVersion(ValueError):
    """A node's op version has no mapping onto the graph form (the message says which)."""


@dataclass
class NodeForm:
    """One node on its way to a graph op: attributes and operands, edited in place by steps.

    ``operands`` has one entry per ONNX input position (None for an absent optional input);
    ``graph_op`` is the graph op class that will implement the node (None for ``Constant``,
    which becomes constant data)."""

    op_type: str
    attrs: MutableMapping[str, Any]
    operands: Sequence[SSAValue | None]
    graph_op: type[GraphOp] | None

    def implements_attribute(self, name: str) -> bool:
        return self.graph_op is not None and name in self.graph_op.get_irdl_definition().properties

    def operand_slots(self) -> int:
        """How many ONNX input positions the graph op declares (optional ones included; a
        variadic operand counts once)."""
        if self.graph_op is None:
            return 0
        return len(self.graph_op.get_irdl_definition().operands)

    def element_type_name(self, index: int) -> str | None:
        """The dtype name of operand ``index`` (None if absent or not a tensor)."""
        value = self.operands[index] if index < len(self.operands) else None
        if value is None or not isinstance(value.type, TensorType):
            return None
        try:
            return dtype_of(value.type.element_type).name
        except UnsupportedElementType:
            return None


@dataclass(frozen=True)
class VersionStep:
    """What version ``version`` of ``op`` changed against its previous version, and how a
    node of that version is brought back onto the previous version's form."""

    op: str
    version: int
    change: str
    """One line, as in onnx's Changelog."""
    neutral_attributes: Mapping[str, Any] = field(default_factory=dict)
    """Attributes new in this version -> the value that keeps the previous behaviour. That
    value (the attribute's default) is dropped; any other value is refused unless the graph
    op implements the attribute (then it is passed on)."""
    new_inputs: Mapping[int, str] = field(default_factory=dict)
    """Optional inputs new in this version (position -> name): a node that gives one is
    refused unless the graph op declares that operand position."""
    adjust: Callable[[NodeForm, VersionStep], None] | None = None
    """A per-op rule, run after the generic ones; raises :class:`UnmappedVersion` to refuse."""

    def apply(self, form: NodeForm) -> None:
        for name, neutral in self.neutral_attributes.items():
            if name not in form.attrs:
                continue
            if form.attrs[name] == neutral:
                del form.attrs[name]
            elif not form.implements_attribute(name):
                raise UnmappedVersion(
                    f"attribute '{name}' = {form.attrs[name]!r} (new in {self.op}-{self.version}:"
                    f" {self.change}) is not supported"
                )
        for position, name in self.new_inputs.items():
            given = position < len(form.operands) and form.operands[position] is not None
            if given and position >= form.operand_slots():
                raise UnmappedVersion(
                    f"input '{name}' (new in {self.op}-{self.version}) is not supported"
                )
        if self.adjust is not None:
            self.adjust(form, self)


# ---- per-op rules ------------------------------------------------------------------------

_FLOAT8_TARGETS = frozenset(
    {
        TensorProto.FLOAT8E4M3FN,
        TensorProto.FLOAT8E4M3FNUZ,
        TensorProto.FLOAT8E5M2,
        TensorProto.FLOAT8E5M2FNUZ,
        TensorProto.FLOAT8E8M0,
    }
)


def _float8_only(*names: str) -> Callable[[NodeForm, VersionStep], None]:
    """Cast's ``saturate``/``round_mode`` only act on float8 targets: for any other target
    they are dropped; for a float8 target they stay (refused unless the graph op has them)."""

    def adjust(form: NodeForm, step: VersionStep) -> None:
        if form.op_type == "CastLike":
            target = form.element_type_name(1) or ""
            float8 = target.startswith("float8")
        else:
            float8 = form.attrs.get("to") in _FLOAT8_TARGETS
        if not float8:
            for name in names:
                form.attrs.pop(name, None)

    return adjust


def _refuse_types(types: Iterable[str], why: str) -> Callable[[NodeForm, VersionStep], None]:
    """Refuse a node whose first input has one of ``types`` (a widening whose semantics the
    previous version's graph op cannot be assumed to implement)."""
    refused = frozenset(types)

    def adjust(form: NodeForm, step: VersionStep) -> None:
        dtype = form.element_type_name(0)
        if dtype in refused:
            raise UnmappedVersion(f"{step.op}-{step.version} on {dtype}: {why}")

    return adjust


def _range_stash_type(form: NodeForm, step: VersionStep) -> None:
    """``stash_type`` only acts on float16/bfloat16, which Range-11 did not take."""
    if form.element_type_name(0) in ("float16", "bfloat16"):
        if not form.implements_attribute("stash_type"):
            raise UnmappedVersion(
                f"{step.op}-{step.version} on {form.element_type_name(0)} accumulates in "
                "'stash_type' precision, which the graph op does not implement"
            )
    else:
        form.attrs.pop("stash_type", None)


def _dft_axis(default: int) -> Callable[[NodeForm, VersionStep], None]:
    """A DFT node that gives no axis gets its version's default as the ``axis`` attribute
    (DFT-17: 1, DFT-20: -2), which ``graph.dft`` reads when the axis input is absent; the
    newest version's step runs first, so an older default never overrides a newer one."""

    def adjust(form: NodeForm, step: VersionStep) -> None:
        given = len(form.operands) > 2 and form.operands[2] is not None
        if not given and "axis" not in form.attrs:
            form.attrs["axis"] = default

    return adjust


# ---- the reviewed table ------------------------------------------------------------------

_BF16 = "adds bfloat16"
_FLOAT4 = "adds float4e2m1"
_E8M0 = "adds float8e8m0"
_INT2 = "adds int2/uint2"
_FLOAT6 = "adds float6e2m3/float6e3m2"

# ops whose every step in a version below only widens element types
_TYPE_STEPS: dict[int, tuple[str, tuple[str, ...]]] = {
    22: (
        _BF16,
        (
            "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Bernoulli", "Conv",
            "ConvTranspose", "Cos", "Cosh", "DeformConv", "Det", "Elu", "EyeLike", "GRU",
            "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GridSample", "HardSigmoid",
            "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization", "LpPool",
            "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss",
            "RNN", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
            "RoiAlign", "Round", "Selu", "Sin", "Sinh", "Softplus", "Softsign", "Tan",
            "ThresholdedRelu",
        ),
    ),
    23: (
        _FLOAT4,
        (
            "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad",
            "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze",
        ),
    ),
    24: (
        _E8M0,
        (
            "Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad",
            "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze",
            "DequantizeLinear", "QuantizeLinear",
        ),
    ),
    25: (
        _INT2,
        (
            "Cast", "CastLike", "Constant", "ConstantOfShape", "Flatten", "Identity", "If",
            "Loop", "Pad", "Reshape", "Scan", "Shape", "Size", "Squeeze", "Transpose",
            "Unsqueeze", "DequantizeLinear", "QuantizeLinear",
        ),
    ),
    28: (
        _FLOAT6,
        ("Cast", "DequantizeLinear", "QuantizeLinear"),
    ),
}  # fmt: skip

_CEIL_WINDOWS = (
    "adds bfloat16; states that with ceil_mode a window starting in the end padding is "
    "dropped (the graph op's shape rule already does)"
)

_SPECIAL_STEPS: tuple[VersionStep, ...] = (
    VersionStep("AveragePool", 22, _CEIL_WINDOWS),
    VersionStep("MaxPool", 22, _CEIL_WINDOWS),
    VersionStep("Dropout", 22, "adds bfloat16 ratio and float8 data"),
    VersionStep(
        "Cast", 19, "adds float8 types and 'saturate' (float8 targets only)",
        adjust=_float8_only("saturate"),
    ),
    VersionStep("Cast", 23, _FLOAT4),
    VersionStep(
        "Cast", 24, "adds float8e8m0 and 'round_mode' (float8e8m0 targets only)",
        adjust=_float8_only("saturate", "round_mode"),
    ),
    VersionStep(
        "CastLike", 19, "adds float8 types and 'saturate' (float8 targets only)",
        adjust=_float8_only("saturate"),
    ),
    VersionStep("CastLike", 23, _FLOAT4),
    VersionStep(
        "CastLike", 24, "adds float8e8m0 and 'round_mode' (float8e8m0 targets only)",
        adjust=_float8_only("saturate", "round_mode"),
    ),
    VersionStep(
        "DequantizeLinear", 23, "adds 'output_dtype' (0: the scale's type) and float4e2m1",
        neutral_attributes={"output_dtype": 0},
    ),
    VersionStep(
        "QuantizeLinear", 23,
        "adds 'precision' (0: the scale's type) and float4e2m1; scale may be int32",
        neutral_attributes={"precision": 0},
    ),
    VersionStep(
        "Attention", 24, "adds the optional input 'nonpad_kv_seqlen'",
        new_inputs={6: "nonpad_kv_seqlen"},
    ),
    VersionStep(
        "Attention", 25, "adds sliding windows 'left_window_size'/'right_window_size' (-1: none)",
        neutral_attributes={"left_window_size": -1, "right_window_size": -1},
    ),
    VersionStep("DFT", 17, "'axis' is an attribute, default 1", adjust=_dft_axis(1)),
    VersionStep(
        "DFT", 20, "'axis' becomes an optional input, default -2", adjust=_dft_axis(-2)
    ),
    VersionStep("SplitToSequence", 24, _BF16),
    VersionStep("TopK", 24, _BF16),
    VersionStep(
        "Range", 27, "adds float16/bfloat16 and 'stash_type' (their accumulation type)",
        adjust=_range_stash_type,
    ),
    VersionStep(
        "BitShift", 28,
        "adds signed integers (arithmetic right shift); graph.bit_shift implements them",
    ),
    VersionStep(
        "Mod", 28,
        "defines fmod=0 (floor modulo) for floating-point inputs; graph.mod implements it",
    ),
    VersionStep(
        "SpaceToDepth", 28, "adds 'mode' (DCR, the previous order, or CRD)",
        neutral_attributes={"mode": "DCR"},
    ),
    VersionStep("DepthToSpace", 28, "adds a function body (no semantic change)"),
    VersionStep("Celu", 28, "adds bfloat16, float16, double"),
    VersionStep("Compress", 28, _BF16),
    VersionStep("Einsum", 28, _BF16),
    VersionStep("OneHot", 28, "adds bfloat16 values"),
    VersionStep("ReverseSequence", 28, _BF16),
    VersionStep("Unique", 28, _BF16),
    VersionStep("Optional", 28, "adds sequence element types"),
    VersionStep("OptionalGetElement", 28, "adds sequence element types"),
    VersionStep("OptionalHasElement", 28, "adds sequence element types"),
    VersionStep("ReduceLogSum", 28, "drops integer types"),
    VersionStep("ReduceLogSumExp", 28, "drops integer types"),
)  # fmt: skip


def _build_table() -> dict[tuple[str, int], VersionStep]:
    table: dict[tuple[str, int], VersionStep] = {}
    for version, (change, ops) in _TYPE_STEPS.items():
        for op in ops:
            table[(op, version)] = VersionStep(op, version, change)
    for step in _SPECIAL_STEPS:
        key = (step.op, step.version)
        if key in table:
            raise AssertionError(f"version step {step.op}-{step.version} listed twice")
        table[key] = step
    return table


VERSION_STEPS: Mapping[tuple[str, int], VersionStep] = _build_table()
"""Every reviewed (op, version) step; see the module docstring."""


# ---- the walk ----------------------------------------------------------------------------


@cache
def op_versions(op_type: str, opset: int) -> tuple[int, ...]:
    """The versions of a default-domain op up to ``opset``, oldest first (empty if unknown)."""
    versions: list[int] = []
    bound = opset
    while bound > 0:
        try:
            since = onnx.defs.get_schema(op_type, bound, "").since_version
        except onnx.defs.SchemaError:
            break
        versions.append(since)
        bound = since - 1
    return tuple(reversed(versions))


def steps_for(op_type: str, opset: int) -> list[VersionStep | tuple[str, int]]:
    """The steps that bring an ``op_type`` node of a model at ``opset`` onto the graph form,
    newest first: a :class:`VersionStep`, or ``(op, version)`` for a version newer than
    opset 21 with no reviewed step (the caller refuses it). Steps at or before opset 21 are
    listed only where the table has one (e.g. Cast-19's ``saturate``)."""
    out: list[VersionStep | tuple[str, int]] = []
    for version in reversed(op_versions(op_type, opset)):
        step = VERSION_STEPS.get((op_type, version))
        if step is not None:
            out.append(step)
        elif version > _native_version(op_type):
            out.append((op_type, version))
    return out


def _native_version(op_type: str) -> int:
    """The version a graph op implements: current at opset 21, else the op's first."""
    native = op_versions(op_type, NATIVE_MAX_OPSET)
    if native:
        return native[-1]
    newer = op_versions(op_type, onnx.defs.onnx_opset_version())
    return newer[0] if newer else 0


def map_node(form: NodeForm, opset: int) -> None:
    """Bring ``form`` (a node of a model at ``opset``) onto its graph op's form, in place.

    Raises :class:`UnmappedVersion` when a version has no reviewed step or a step refuses
    the node."""
    for step in steps_for(form.op_type, opset):
        if isinstance(step, tuple):
            op, version = step
            raise UnmappedVersion(
                f"{op}-{version} (opset {opset}) has no reviewed mapping onto the graph form "
                f"of {op}-{_native_version(op)} (tilegraph/frontend/onnx_versions.py)"
            )
        step.apply(form)


def unreviewed_versions(newest: int | None = None) -> list[tuple[str, int]]:
    """Default-domain (op, version) pairs after opset 21, up to ``newest`` (default: the
    installed onnx's newest opset), that have no step in :data:`VERSION_STEPS`; the ops
    introduced after opset 21 count from their second version."""
    newest = newest or onnx.defs.onnx_opset_version()
    names = sorted({s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""})
    missing = []
    for op in names:
        native = _native_version(op)
        missing += [
            (op, v)
            for v in op_versions(op, newest)
            if v > native and v > NATIVE_MAX_OPSET and (op, v) not in VERSION_STEPS
        ]
    return missing
