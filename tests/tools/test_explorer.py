"""tilegraph-opt --explore: one self-contained page with every pass of the pipeline."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SEED = Path(__file__).resolve().parents[2] / "examples" / "conv_block.mlir"


def _explore(tmp_path: Path, pipeline: str) -> str:
    out = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "tilegraph.tools.opt", str(SEED), "-p", pipeline, "--explore",
         str(out)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stderr
    return out.read_text()


def test_the_page_lists_every_pass_with_its_numbers_diff_and_pictures(tmp_path):
    page = _explore(tmp_path, "O2")
    rows = re.findall(r'<tr class="(changed)?"><td><a href="#p\d+">([^<]+)</a>', page)
    names = [name for _, name in rows]
    assert (
        names[0] == "input"
        and "select-storage-format" in names
        and names[-1] == "fuse-dynamic-quantize"
    )
    changed = {name for flag, name in rows if flag}
    assert {"insert-trans-data", "fuse-ops"} <= changed and "cse" not in changed
    # fuse-ops made 2 groups; insert-trans-data's diff adds layout.trans_data lines
    assert re.search(r"fused groups 0 → 2", page)
    assert '<span class="add">+' in page and "layout.trans_data" in page
    assert page.count("<svg") >= 3 and page.count("<details>") > 10


def test_the_page_is_self_contained(tmp_path):
    page = _explore(tmp_path, "format{strategy=naive}")
    external = re.findall(r'(?:src|href)="(https?:[^"]*)"', page)
    assert external == []
    assert "<script" not in page  # readable without JavaScript
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


@pytest.mark.slow
def test_the_page_loads_in_headless_chromium_without_console_errors(tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("headless Chromium is not installed (Debian package 'chromium')")
    page = tmp_path / "report.html"
    page.write_text(_explore(tmp_path, "O2"))
    done = subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert "fuse-ops" in done.stdout
    assert "Uncaught" not in done.stderr and "ERROR:CONSOLE" not in done.stderr
