"""The hardware model: named presets of an Ascend-style NPU (DESIGN.md §6).

Plain Python (no xDSL), like :mod:`tilegraph.formats`: passes (fusion's working-set limit,
tiling) and the runtime (cycle model) read the same figures. One preset per ``platform=`` name,
the names the format engine takes (``tilegraph.formats.PLATFORMS``).

Figures of ``ascend910b`` are the 910B2 values collected in ``docs/hardware.md`` (CANN
platform config files, Ascend C tables, PTO-ISA cost model); values marked uncertain there
stay plain fields so a study can override them with :func:`dataclasses.replace`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

KiB = 1024
MiB = 1024 * KiB

Scope = Literal["GM", "L1", "L0A", "L0B", "L0C", "UB"]
Pipe = Literal["MTE1", "MTE2", "MTE3", "M", "V", "FIX", "S"]


@dataclass(frozen=True)
class HardwareModel:
    """One NPU preset. Sizes in bytes, rates per cycle of one core unless named otherwise."""

    name: str
    cube_cores: int
    vector_cores: int
    clock_ghz: float
    coupled: bool
    """Cube and vector share a core (310P: L0C -> UB exists); False for 910B's AIC/AIV split."""
    l0c_to_gm: bool
    """FIX writes L0C straight to GM (910B: the ``fix_pipe_l0c2out`` intrinsic of its CANN
    platform configuration). False on the 310P3, whose configuration lacks it: a cube
    kernel's result goes L0C -> UB (FIX) and then UB -> GM (MTE3), as CANN's tilings move
    it on such chips (docs/hardware.md). Only a coupled preset can lack it (the way out is
    through the core's own UB)."""
    buffer_bytes: MappingProxyType[str, int]
    """Capacity of each on-chip scope (L1, L0A, L0B, L0C per cube core; UB per vector core)."""
    alignment: MappingProxyType[str, int]
    """Address alignment of each scope (UB/L1 32 B, L0* 512 B)."""
    cube_macs_per_cycle: MappingProxyType[str, int]
    """Multiply-accumulates per cycle per cube core, by input dtype."""
    mmad_head_cycles: int = 6
    load3d_start_cycles: int = 42
    """Start of one img2col (``load3d``) instruction before its bytes flow (CANN's cube
    tiling, ``k1971Mte1Load3dCost``; its rate: :func:`~tilegraph.cost_model.tile_costs.
    img2col_bytes_per_cycle`)."""
    vector_bytes_per_cycle: int = 256
    """add/sub/mul/max/min throughput of one vector core."""
    vector_transcendental_elems_per_cycle: int = 32
    vector_startup_cycles: int = 8
    """The start-up of a vector instruction in the Ascend C tables' 5–14 range: the scale
    of ``fuse-ops``' tile-size heuristic. The cycle model charges a vector op its repeats
    as pipe time and :attr:`vector_result_latency_cycles` (plus the op's own delay) as a
    latency instead."""
    vector_result_latency_cycles: int = 0
    """Cycles after a vector instruction's repeats before its result is in UB, on top of
    the instruction's own pipeline delay (4–23 cycles by op and type,
    :data:`~tilegraph.cost_model.tile_costs.VECTOR_DELAY_CYCLES`): Huawei's cycle-accurate
    A2/A3 pipe model in pypto (``vecDelay_`` = 15, ``CalcVecOp``; docs/hardware.md,
    "Vector latencies"). A latency, not pipe time: the next independent vector
    instruction issues after the repeats; a dependent one (after its ``pipe_barrier`` V)
    and the other pipes' flags wait for it. 910B: 15; 310P: 15 (no 310P figure is public:
    910B's serves, as for its other vector figures); 0: no vector latency modelled (the
    op's delay neither)."""
    vector_cross_lane_cycles: int = 7
    """Cycles per repeat of a cross-lane vector reduction (``vcmax`` / ``vcmin``, ``vcadd``
    in its mode 0), against 1 for an elementwise repeat: Huawei's cycle-accurate A2/A3 pipe
    model in pypto (``vecRmwDelay_``, docs/hardware.md); no 310P figure is public."""
    vector_cast_elems_per_cycle: int = 64
    """Conversions (vcast), e.g. f32 -> f16."""
    dma_bytes_per_cycle: MappingProxyType[str, float] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Per-core DMA rate by path ("GM->UB", "GM->L1", "UB->GM", "L1->L0A", ...); L0C's way
    out is FIX's two-stage model (``fix_*``), not a path rate."""
    dma_issue_cycles: int = 16
    """Cycles one DMA instruction holds its pipe before its bytes flow where no sourced
    latency applies (between on-chip buffers; FIX into L1 or UB; a GM transfer too large
    for :attr:`gm_latency_below_bytes`). An assumption — no figure is published
    (docs/hardware.md)."""
    gm_read_latency_cycles: int = 0
    """The GM round trip of a DMA reading GM (MTE2: GM -> L1 / UB): its data is in the
    buffer this many cycles after its pipe time (:attr:`dma_issue_cycles` and the bytes);
    the pipe issues its next DMA meanwhile, what reads the data waits
    (:func:`~tilegraph.cost_model.tile_costs.gm_latency_cycles`). 910B: 311, Huawei's
    cycle-accurate A2/A3 pipe model in pypto (``ddrRdLatency`` 307 as its simulator sets
    it, plus ``ddrRdLatencyDiver`` 4); 310P: 100, CANN's GEMM tiling model for chips
    without L0C -> GM (``kHeadCostNum``); 0 (none modelled) on presets without a figure;
    docs/hardware.md."""
    gm_write_latency_cycles: int = 0
    """The same for a DMA writing GM (MTE3: UB -> GM; FIX: L0C -> GM): what waits for the
    write (a flag, a barrier, the end of the kernel) waits this long after its pipe time.
    910B: 157 (pypto's ``ddrWrLatency`` 153 + ``ddrWrLatencyDiver`` 4); 310P: 100 (CANN's
    ``kHeadCostNum``, charged to its MTE3 copies out too)."""
    gm_latency_below_bytes: int | None = None
    """Only a GM transfer of fewer bytes pays :attr:`gm_read_latency_cycles` /
    :attr:`gm_write_latency_cycles` (larger ones none); None: every
    GM transfer. 310P: 16 KiB, CANN's model charges its head cost to copies of fewer than
    512 blocks of 32 B (``kCopyLoadSize``) only."""
    mte1_start_cycles: int = 16
    """Start of an L1 -> L0A / L0B load (``load2d``) before its bytes flow. 910B: 26, CANN's
    GEMM tiling model for chips with L0C -> GM (``l0c2out::kMte1StartCost``)."""
    gm_bandwidth_gbps: float = 1600.0
    """Whole-chip global-memory bandwidth in GB/s."""
    gm_burst_align: int = 512
    """GM transfers run at full rate when every contiguous run (burst) is a multiple of this
    many bytes (910B: 512 B, Ascend C best practices, "GM address 512-byte aligned")."""
    gm_misaligned_efficiency: float = 0.7
    """Rate of a GM transfer whose bursts are not: the same page measures 32 B-aligned
    transfers at down to 70% of 512 B-aligned ones on A2 (we take the worst case), and
    states the effect for A2 products only: 1.0 on presets of other chips."""
    fix_l0c_read_bytes_per_cycle: float = 256.0
    """FIX's first stage: reading the fp32 accumulator out of L0C (CANN's GEMM tiling cycle
    model, ``GemmCycleModelL0c2out``; docs/hardware.md)."""
    fix_write_bytes_per_cycle: float = 128.0
    """FIX's second stage: writing the result, in the output's element type, to GM or L1
    (the same model; the two stages add up)."""
    fix_int8_write_bytes_per_cycle: float = 64.0
    """FIX's second stage for an int8 result (requantisation): the shared hardware notes'
    64 B/cycle for int8 output beside 128 B/cycle for fp16, i.e. as many elements a cycle
    as fp16 (docs/hardware.md)."""
    l0c_to_ub_bytes_per_cycle: float | None = None
    """A coupled core's L0C -> UB move, one stage on the accumulator's bytes (310P: 512,
    its CANN platform configuration and the GEMM tiling's model for chips without L0C ->
    GM); None: FIX's two stages serve every destination."""
    launch_overhead_us: float = 20.0
    """Host launch: one kernel launched from the host, op by op (``--launch host``)."""
    task_overhead_us: float = 2.0
    """Sunk model: scheduling one task on the device (``--launch sunk``, the default of a
    compiled model). An assumption — no per-task figure is published (docs/hardware.md)."""
    l2_bytes: int = 0
    vector_scatter: bool = True
    """The vector unit scatters elements by a UB offset tensor (Ascend C ``Scatter``): the
    Atlas inference products' AI core (310P) and the 950 have it, Atlas A2 / A3 (910B) do
    not — there a ``tile.vput`` runs element by element on the scalar unit."""
    dma_atomic_types: tuple[str, ...] = ("i8", "i16", "f16", "bf16", "i32", "f32")
    """The element types a DMA store to GM combines atomically (``tile.copy_flat``'s
    ``atomic``: Ascend C ``SetAtomicType``): int8, int16, half, bfloat16, int32 and float on
    Atlas A2 / A3, int16, half and float on the Atlas inference products' AI core."""
    cross_core_flag_cycles: int = 100
    """A cross-core flag's trip (``sync_block_set`` on one core of a group to the
    ``sync_block_wait`` it releases on another): cycles from the set's completion until the
    wait may go on. An assumption — no figure is published (docs/hardware.md): a round
    figure for a message between cores (slower than a flag between the pipes of one core).
    A mix kernel's tile runs for thousands of cycles, so estimates barely move with it."""

    def __post_init__(self) -> None:
        if not self.l0c_to_gm and not self.coupled:
            raise ValueError(
                f"{self.name}: a decoupled preset without L0C -> GM has no way out of L0C "
                "(its AIC has no UB)"
            )

    def gm_efficiency(self, burst_bytes: int | None) -> float:
        """Share of the path rate a GM transfer made of ``burst_bytes``-long contiguous runs
        gets (None: one long aligned run)."""
        if burst_bytes is None or burst_bytes % self.gm_burst_align == 0:
            return 1.0
        return self.gm_misaligned_efficiency

    def capacity(self, scope: str) -> int:
        """Bytes of one instance of ``scope`` (GM is unbounded for planning: 0 = no limit)."""
        if scope == "GM":
            return 0
        try:
            return self.buffer_bytes[scope]
        except KeyError:
            raise KeyError(f"{self.name}: no memory scope {scope!r}") from None

    @property
    def ub_bytes(self) -> int:
        return self.buffer_bytes["UB"]

    @property
    def aiv_per_aic(self) -> int:
        """AIVs per core group of a mix kernel: 2 on a decoupled preset with at least twice
        as many vector cores as cube cores (910B: 24 AIC + 48 AIV, 1 : 2 per group, Ascend
        C's ``GetTaskRation()``; docs/hardware.md), else 1 (one AIV per AIC; a coupled
        preset runs no mix kernels)."""
        return 2 if not self.coupled and self.vector_cores >= 2 * self.cube_cores else 1

    @property
    def cycles_per_us(self) -> float:
        return self.clock_ghz * 1000.0


def _frozen(**values: float) -> MappingProxyType:
    return MappingProxyType(dict(values))


def _scopes(l1: int, l0a: int, l0b: int, l0c: int, ub: int) -> MappingProxyType[str, int]:
    return MappingProxyType({"L1": l1, "L0A": l0a, "L0B": l0b, "L0C": l0c, "UB": ub})


_ALIGN = MappingProxyType({"GM": 32, "L1": 32, "UB": 32, "L0A": 512, "L0B": 512, "L0C": 512})
_CUBE_910B = MappingProxyType(
    {"float16": 4096, "bfloat16": 4096, "int8": 8192, "float32": 1024}
)  # 16x16x16, 16x16x32, 16x16x4 MACs per cycle
_DMA_910B = _frozen(
    **{
        "GM->UB": 59.0,
        "GM->L1": 78.0,
        "UB->GM": 109.0,
        "L1->L0A": 256.0,
        "L1->L0B": 128.0,
        "L1->UB": 128.0,
    }
)
# 310P3: L1 -> L0A / L0B at 512 / 256 B/cycle (its platform configuration, and the rates
# CANN's cube tiling gives chips without L0C -> GM); GM at its L2 rate, 114 B/cycle per
# core (platform configuration, ``l2_rate``) both ways; L1 -> UB not separately known.
_DMA_310P = _frozen(
    **{
        "GM->UB": 114.0,
        "GM->L1": 114.0,
        "UB->GM": 114.0,
        "L1->L0A": 512.0,
        "L1->L0B": 256.0,
        "L1->UB": 128.0,
    }
)

PRESETS: dict[str, HardwareModel] = {
    "ascend910b": HardwareModel(
        name="ascend910b",
        cube_cores=24,
        vector_cores=48,
        clock_ghz=1.8,
        coupled=False,
        l0c_to_gm=True,
        buffer_bytes=_scopes(512 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 192 * KiB),
        alignment=_ALIGN,
        cube_macs_per_cycle=_CUBE_910B,
        dma_bytes_per_cycle=_DMA_910B,
        gm_read_latency_cycles=307 + 4,
        gm_write_latency_cycles=153 + 4,
        mte1_start_cycles=26,
        vector_result_latency_cycles=15,
        gm_bandwidth_gbps=1600.0,
        l2_bytes=192 * MiB,
        vector_scatter=False,
    ),
    "ascend310p": HardwareModel(
        name="ascend310p",
        cube_cores=8,
        vector_cores=8,
        dma_atomic_types=("i16", "f16", "f32"),
        clock_ghz=1.06,
        coupled=True,
        l0c_to_gm=False,
        buffer_bytes=_scopes(1024 * KiB, 64 * KiB, 64 * KiB, 256 * KiB, 256 * KiB),
        alignment=_ALIGN,
        cube_macs_per_cycle=_CUBE_910B,
        dma_bytes_per_cycle=_DMA_310P,
        gm_read_latency_cycles=100,
        gm_write_latency_cycles=100,
        gm_latency_below_bytes=16 * KiB,
        vector_result_latency_cycles=15,
        gm_bandwidth_gbps=204.8,
        # Ascend C's best practices state the 512 B alignment effect for A2 products only.
        gm_misaligned_efficiency=1.0,
        l0c_to_ub_bytes_per_cycle=512.0,
        l2_bytes=16 * MiB,
    ),
    # Small buffers so that even test-sized tensors split into many (ragged) tiles.
    "test": HardwareModel(
        name="test",
        cube_cores=2,
        vector_cores=4,
        clock_ghz=1.0,
        coupled=False,
        l0c_to_gm=True,
        buffer_bytes=_scopes(16 * KiB, 4 * KiB, 4 * KiB, 8 * KiB, 8 * KiB),
        alignment=_ALIGN,
        cube_macs_per_cycle=_CUBE_910B,
        dma_bytes_per_cycle=_DMA_910B,
        gm_bandwidth_gbps=100.0,
        l2_bytes=1 * MiB,
    ),
}
# No 950 figures are collected yet: it models the 910B core with the 950's C0 table (the
# format engine's difference), so that every format-engine platform name has a preset.
PRESETS["ascend950"] = replace(PRESETS["ascend910b"], name="ascend950", vector_scatter=True)
DEFAULT_PRESET = "ascend910b"


def hardware_preset(name: str = DEFAULT_PRESET) -> HardwareModel:
    """The preset of a platform name: a preset's name (case-insensitive), optionally with
    what-if overrides after a colon, ``ascend910b:ub=256KiB,l1=1MiB`` (see
    :data:`OVERRIDE_KEYS`). The result's ``name`` is the canonical spelling
    (:func:`canonical_platform`). ValueError names the valid presets, or the override key at
    fault and the valid keys. Parsed names are cached: the same name, the same object."""
    return _parsed_preset(name.strip())


def base_platform(name: str) -> str:
    """The preset a platform name starts from: ``ascend910b:ub=256KiB`` -> ``ascend910b``
    (what the format engine's C0 rules are chosen by; overrides do not change them)."""
    return name.split(OVERRIDE_SEPARATOR, 1)[0].strip().lower()


def canonical_platform(name: str) -> str:
    """The one spelling of a platform name: the base preset in lower case, then the
    overrides that change it, keys sorted, values in normalised units (``256KiB``,
    ``2000GB/s``, ``1.5GHz``); an override equal to the base's value is dropped, so
    ``ascend910b:ub=192KiB`` is ``ascend910b``."""
    return hardware_preset(name).name


# --- What-if overrides -------------------------------------------------------------------

OVERRIDE_SEPARATOR = ":"
"""Between the preset and its overrides; the overrides are ``KEY=VALUE`` joined by ``,``.
A pass option takes such a name quoted: ``tile-kernels{platform="ascend910b:ub=256KiB"}``
(xDSL's pipeline lexer reads ``:`` and ``,`` as syntax outside quotes)."""

_SCOPE_KEYS = {"ub": "UB", "l1": "L1", "l0a": "L0A", "l0b": "L0B", "l0c": "L0C"}
_BYTE_UNITS = {"b": 1, "kib": KiB, "mib": MiB, "gib": 1024 * MiB}
_BANDWIDTH_UNITS = {"gb/s": 1.0, "tb/s": 1000.0}
_CLOCK_UNITS = {"ghz": 1.0, "mhz": 0.001}

OVERRIDE_KEYS: dict[str, str] = {
    **{key: f"{scope} capacity in bytes (B, KiB, MiB)" for key, scope in _SCOPE_KEYS.items()},
    "l2": "L2 cache in bytes (B, KiB, MiB, GiB; 0: none)",
    "cube_cores": "cube cores (AIC), a positive count",
    "vector_cores": "vector cores (AIV), a positive count",
    "gm_bandwidth": "whole-chip GM bandwidth (GB/s, TB/s; a bare number is GB/s)",
    "clock": "core clock (GHz, MHz; a bare number is GHz)",
}
"""The keys a platform name may override, with what each means."""


def _number(text: str, units: Mapping[str, float], default_unit: str, key: str) -> float:
    """``text`` as a number in ``default_unit`` units, its unit (case-insensitive) one of
    ``units`` or absent."""
    found = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([a-zA-Z/]*)\s*", text)
    if found is None:
        raise ValueError(f"override '{key}': '{text}' is not a number with a unit")
    unit = found.group(2).lower() or default_unit
    if unit not in units:
        spelled = ", ".join(_UNIT_SPELLING[u] for u in units)
        raise ValueError(f"override '{key}': unknown unit '{found.group(2)}' (use {spelled})")
    return float(found.group(1)) * units[unit]


_UNIT_SPELLING = {
    "b": "B",
    "kib": "KiB",
    "mib": "MiB",
    "gib": "GiB",
    "gb/s": "GB/s",
    "tb/s": "TB/s",
    "ghz": "GHz",
    "mhz": "MHz",
}


def _bytes_text(n: int) -> str:
    for unit in ("gib", "mib", "kib"):
        if n and n % _BYTE_UNITS[unit] == 0:
            return f"{n // _BYTE_UNITS[unit]}{_UNIT_SPELLING[unit]}"
    return f"{n}B"


def _float_text(x: float) -> str:
    return f"{x:.6g}"


def _apply_override(hw: HardwareModel, key: str, text: str) -> tuple[HardwareModel, str]:
    """``hw`` with one override applied, and the override's value in canonical units."""
    if key in _SCOPE_KEYS or key == "l2":
        value = _number(text, _BYTE_UNITS, "b", key)
        if value != int(value):
            raise ValueError(f"override '{key}': {text} is not a whole number of bytes")
        size = int(value)
        if key == "l2":
            if size < 0:
                raise ValueError(f"override 'l2': must not be negative, got {text}")
            return replace(hw, l2_bytes=size), _bytes_text(size)
        scope = _SCOPE_KEYS[key]
        align = hw.alignment[scope]
        if size <= 0 or size % align:
            raise ValueError(
                f"override '{key}': {scope} must be a positive multiple of {align} B, got {text}"
            )
        buffers = MappingProxyType({**hw.buffer_bytes, scope: size})
        return replace(hw, buffer_bytes=buffers), _bytes_text(size)
    if key in ("cube_cores", "vector_cores"):
        if not re.fullmatch(r"\s*[0-9]+\s*", text) or int(text) <= 0:
            raise ValueError(f"override '{key}': must be a positive whole count, got '{text}'")
        count = int(text)
        return replace(hw, **{key: count}), str(count)
    if key == "gm_bandwidth":
        gbps = _number(text, _BANDWIDTH_UNITS, "gb/s", key)
        if gbps <= 0:
            raise ValueError(f"override 'gm_bandwidth': must be positive, got {text}")
        return replace(hw, gm_bandwidth_gbps=gbps), f"{_float_text(gbps)}GB/s"
    ghz = _number(text, _CLOCK_UNITS, "ghz", key)  # "clock", the last key
    if ghz <= 0:
        raise ValueError(f"override 'clock': must be positive, got {text}")
    return replace(hw, clock_ghz=ghz), f"{_float_text(ghz)}GHz"


def parse_overrides(text: str) -> dict[str, str]:
    """``"ub=256KiB,l1=1MiB"`` -> ``{"ub": "256KiB", "l1": "1MiB"}`` (keys lower-case,
    values as written); ValueError for a malformed item, an unknown or repeated key."""
    found: dict[str, str] = {}
    for item in text.split(","):
        key, equals, value = item.partition("=")
        key = key.strip().lower()
        if not equals or not key or not value.strip():
            raise ValueError(f"override '{item.strip()}' is not KEY=VALUE")
        if key not in OVERRIDE_KEYS:
            raise ValueError(
                f"unknown override key '{key}'; valid keys: {', '.join(OVERRIDE_KEYS)}"
            )
        if key in found:
            raise ValueError(f"override '{key}' is given twice")
        found[key] = value.strip()
    return found


def _check_consistent(hw: HardwareModel, keys: set[str]) -> None:
    """What the overrides together must keep true (they are checked one by one first)."""
    if hw.coupled and hw.cube_cores != hw.vector_cores and keys & {"cube_cores", "vector_cores"}:
        raise ValueError(
            f"overrides 'cube_cores' / 'vector_cores': {hw.name.split(OVERRIDE_SEPARATOR)[0]} "
            f"couples cube and vector in one core, so the counts must be equal "
            f"(got {hw.cube_cores} and {hw.vector_cores})"
        )
    if not hw.coupled and hw.vector_cores < hw.cube_cores:
        raise ValueError(
            f"overrides 'cube_cores' / 'vector_cores': a mix kernel pairs every cube core "
            f"with a vector core, so vector_cores ({hw.vector_cores}) must be at least "
            f"cube_cores ({hw.cube_cores})"
        )


@lru_cache(maxsize=256)
def _parsed_preset(name: str) -> HardwareModel:
    base_name, separator, overrides = name.partition(OVERRIDE_SEPARATOR)
    base = PRESETS.get(base_name.strip().lower())
    if base is None:
        raise ValueError(
            f"unknown platform {base_name.strip()!r}; valid platforms: {', '.join(PRESETS)}"
        )
    if not separator:
        return base
    if not overrides.strip():
        raise ValueError(f"platform '{name}': no overrides after '{OVERRIDE_SEPARATOR}'")
    hw = base
    spelled: dict[str, str] = {}
    try:
        for key, text in parse_overrides(overrides).items():
            changed, canonical = _apply_override(hw, key, text)
            if changed != hw:
                hw, spelled[key] = changed, canonical
        _check_consistent(hw, set(spelled))
    except ValueError as e:  # say which platform name the override is in
        raise ValueError(f"platform '{name}': {e}") from None
    if not spelled:
        return base
    items = ",".join(f"{key}={spelled[key]}" for key in sorted(spelled))
    return replace(hw, name=f"{base.name}{OVERRIDE_SEPARATOR}{items}")
