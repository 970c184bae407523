"""The HTML report renders in a real browser: headless Chromium, no network."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from durabench.results.report_html import render_html
from tests.unit.results_set import hand_result

pytestmark = pytest.mark.browser

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed (apt-get install chromium)")
    return subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_html_report_renders_chart_and_tables(tmp_path: Path) -> None:
    result = hand_result()
    assert result.scorecard is not None
    page = tmp_path / "report.html"
    page.write_text(render_html(result, result.scorecard))
    assert "http" not in page.read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")

    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout
    assert dom.count('class="task-row"') == 5
    assert dom.count('class="bar"') == 10
    assert 'id="delta-chart"' in dom and 'class="ci"' in dom
    assert "⚠ false completion" in dom
    assert dom.count("<tr") >= 5 + 3 + 13 + 4  # cells, totals, messages, excluded (+ headers)

    shot = tmp_path / "report.png"
    _chromium(tmp_path, "--window-size=1280,1800", f"--screenshot={shot}", page.as_uri())
    data = shot.read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and (width, height) == (1280, 1800)
    assert len(data) > 50_000  # a blank page compresses to a few KB
