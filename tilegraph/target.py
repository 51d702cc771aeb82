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
PRECISIONS = ("origin", "fp16", "bf16", "int8")
"""Cube inputs: the model's type, or rounded to float16 / bfloat16 (fp32 accumulation), or
(``int8``, for models that carry QDQ quantisation) int8 for the convolutions ``fold-qdq``
turns into int8 cube ops (int32 accumulation), the model's type for the rest."""
DEFAULT_PRECISION = "origin"
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
