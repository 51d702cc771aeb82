"""The compilation target carried by the module: which hardware preset, which precision.

The preset and the cube precision are chosen once and recorded on the module, as MLIR
carries a target / DLTI description::

    builtin.module attributes {tilegraph.target = {platform = "ascend910b", precision = "origin"}}

Every pass, executor and the cycle model reads it with :func:`target_of` (the default preset
and "origin" when the module has none). ``compile(platform=...)``, ``tilegraph-run
--platform`` and a pass option ``platform=`` / ``precision=`` all go through
:func:`pin_target`: an option sets the module's target where it has none, and an option
that differs from the module's target is an error naming who set it. A pass that reads the
preset without an option pins the one it used, so that a later pass cannot silently run
with another (``docs/hardware.md``, "The target on the module").
"""

from __future__ import annotations

from typing import NamedTuple
from weakref import WeakKeyDictionary

from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation

from tilegraph.hardware import DEFAULT_PRESET, HardwareModel, canonical_platform, hardware_preset

TARGET_ATTR = "tilegraph.target"


class PrecisionMode(NamedTuple):
    """What a precision value does (``docs/precision.md``): ATC's ``--precision_mode``
    values and tilegraph's own short names."""

    cube: str
    """"fp16" / "bf16": the tiling rounds the cube's float inputs to this type on the way in
    (fp32 accumulation, fp32 result); "int8": ``fold-qdq``'s int8 cube ops; "": none."""
    graph_type: str
    """"float16" / "bfloat16": ``apply-precision`` rewrites the graph's float32 ops to
    compute in this type (casts where the type changes); "": the graph keeps its types."""
    mixed: bool = False
    """With ``graph_type``: only the ops the mixed-precision lists allow (white, gray after
    a reduced input); without: every op that has an implementation in ``graph_type``."""

    def rounding_type(self, tiles: bool) -> str | None:
        """The 16-bit float type whose rounding this mode puts into a float32 model's
        results: its graph type on every path, else the cube's input type on the tiles
        (``tiles``; the graph-level reference does not round the cube's inputs); ``None``
        for ``origin`` and ``int8`` (a quantised model's tolerance is its quantisation
        step, stated per model)."""
        if self.graph_type:
            return self.graph_type
        return {"fp16": "float16", "bf16": "bfloat16"}.get(self.cube) if tiles else None


PRECISION_MODES: dict[str, PrecisionMode] = {
    "origin": PrecisionMode("", ""),
    "fp16": PrecisionMode("fp16", ""),
    "bf16": PrecisionMode("bf16", ""),
    "int8": PrecisionMode("int8", ""),
    # ATC's --precision_mode values
    "must_keep_origin_dtype": PrecisionMode("", ""),
    "allow_fp32_to_fp16": PrecisionMode("fp16", ""),
    "allow_fp32_to_bf16": PrecisionMode("bf16", ""),
    "force_fp16": PrecisionMode("", "float16"),
    "allow_mix_precision": PrecisionMode("", "float16", mixed=True),
    "allow_mix_precision_fp16": PrecisionMode("", "float16", mixed=True),
    "allow_mix_precision_bf16": PrecisionMode("", "bfloat16", mixed=True),
}
"""Every precision value. ``origin`` = ``must_keep_origin_dtype``; ``fp16`` =
``allow_fp32_to_fp16`` (the cube has no fp32 path on these presets' Da Vinci cores, so
matrix ops take fp16 inputs and the vector ops keep float32); ``bf16`` =
``allow_fp32_to_bf16``; ``int8``: QDQ models' convolutions and matmuls on the int8 cube."""

PRECISIONS = tuple(PRECISION_MODES)
"""The precision values, in the order the tools list them."""
DEFAULT_PRECISION = "origin"


def precision_mode(precision: str) -> PrecisionMode:
    """What ``precision`` does; :class:`TargetError` naming the valid values if unknown."""
    mode = PRECISION_MODES.get(precision)
    if mode is None:
        raise TargetError(f"unknown precision '{precision}'; choose from {', '.join(PRECISIONS)}")
    return mode


_KEYS = ("platform", "precision")

_SET_BY: WeakKeyDictionary[ModuleOp, dict[str, str]] = WeakKeyDictionary()
"""Who set each key of a module's target in this process (for the mismatch error)."""


class TargetError(ValueError):
    """A malformed ``tilegraph.target``, or a platform/precision that differs from it."""


class Target(NamedTuple):
    platform: str
    """Preset name (a key of :data:`tilegraph.hardware.PRESETS`), perhaps with what-if
    overrides (``ascend910b:ub=256KiB``), in its canonical spelling."""
    precision: str

    @property
    def hw(self) -> HardwareModel:
        return hardware_preset(self.platform)


def _target_module(op: Operation) -> ModuleOp | None:
    """The nearest ``builtin.module`` around ``op`` (``op`` itself if it is one) that
    records a target, else None."""
    current: Operation | None = op
    while current is not None:
        if isinstance(current, ModuleOp) and TARGET_ATTR in current.attributes:
            return current
        current = current.parent_op()
    return None


def _recorded(module: ModuleOp) -> dict[str, str]:
    attr = module.attributes.get(TARGET_ATTR)
    if attr is None:
        return {}
    if not isinstance(attr, DictionaryAttr):
        raise TargetError(f"{TARGET_ATTR} must be a dictionary {{platform = ..., precision = ...}}")
    out: dict[str, str] = {}
    for key, value in attr.data.items():
        if key not in _KEYS:
            raise TargetError(f"{TARGET_ATTR}: unknown key '{key}' (expected platform, precision)")
        if not isinstance(value, StringAttr):
            raise TargetError(f"{TARGET_ATTR}: {key} must be a string")
        out[key] = value.data
    if "platform" in out:  # a preset's name, perhaps with what-if overrides
        try:
            out["platform"] = canonical_platform(out["platform"])
        except ValueError as e:
            raise TargetError(f"{TARGET_ATTR}: {e}") from None
    if "precision" in out and out["precision"] not in PRECISIONS:
        raise TargetError(
            f"{TARGET_ATTR}: unknown precision '{out['precision']}'; "
            f"choose from {', '.join(PRECISIONS)}"
        )
    return out


def target_of(op: Operation) -> Target:
    """The target of ``op``'s module: its ``tilegraph.target``, defaults where absent."""
    module = _target_module(op)
    recorded = _recorded(module) if module is not None else {}
    return Target(
        recorded.get("platform", DEFAULT_PRESET),
        recorded.get("precision", DEFAULT_PRECISION),
    )


def set_by(module: ModuleOp, key: str) -> str:
    return _SET_BY.get(module, {}).get(key, "the input IR")


def pin_target(
    module: ModuleOp, by: str, platform: str = "", precision: str = "", *, pin: bool = True
) -> Target:
    """The module's target after ``by`` (a pass name, ``compile(platform=...)``, ...) asked
    for ``platform`` / ``precision`` ("" = whatever the module has).

    A requested value the module does not record yet is recorded; one that differs from
    the recorded value raises :class:`TargetError`. With ``pin`` (the default) the value
    used is recorded even when nothing was requested, so that every later pass agrees.
    """
    recorded = _recorded(module)
    current = target_of(module)
    wanted = {"platform": platform.strip(), "precision": precision.strip()}
    if wanted["platform"]:  # ValueError naming the valid presets or override keys
        wanted["platform"] = canonical_platform(wanted["platform"])
    if wanted["precision"] and wanted["precision"] not in PRECISIONS:
        raise TargetError(
            f"{by}: precision must be one of {', '.join(PRECISIONS)}, got '{wanted['precision']}'"
        )
    changed = False
    for key in _KEYS:
        value = wanted[key]
        if key in recorded:
            if value and value != recorded[key]:
                raise TargetError(
                    f"{by}: {key} '{value}' differs from the module's target "
                    f"'{recorded[key]}' (set by {set_by(module, key)})"
                )
        elif value or (pin and key == "platform"):
            recorded[key] = value or getattr(current, key)
            _SET_BY.setdefault(module, {})[key] = by
            changed = True
    if changed:
        entries: dict[str, Attribute] = {k: StringAttr(recorded[k]) for k in _KEYS if k in recorded}
        module.attributes[TARGET_ATTR] = DictionaryAttr(entries)
    return target_of(module)
