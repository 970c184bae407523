"""``python -m starter view`` served on loopback and read by headless Chromium."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from durabench.results.viewer import ViewerSite
from tests.integration.chromium import (
    dump_dom,
    in_view_probe,
    keep,
    page_text_when,
    png_size,
    probed,
    screenshot,
)
from tests.unit.viewer_run import write_run

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[str]:
    """The viewer of a home holding the hand-worked run, opened on that run; its URL."""
    home = tmp_path / "home"
    write_run(home / "runs")
    env = {**os.environ, "DURABENCH_HOME": str(home), "PYTHONPATH": str(REPO)}
    log = tmp_path / "viewer.log"
    with (
        log.open("w") as err,
        subprocess.Popen(
            [sys.executable, "-m", "starter", "view", "hand"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
            cwd=REPO,
        ) as proc,
    ):
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()  # printed once the server listens
            assert url.startswith("http://127.0.0.1:"), log.read_text()
            assert url.endswith("/runs/hand/"), url
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_viewer_shows_a_run_and_an_attempt_in_a_browser(viewer: str, tmp_path: Path) -> None:
    run = dump_dom(tmp_path, viewer)
    assert "<dt>agent</dt><dd>replay</dd>" in run and "ann at 2026-01-01" in run  # the plan
    assert "1.00 | 0.50" in run and "mean difference (sourcegraph_full − baseline)" in run

    attempt = viewer + "tasks/t1/baseline/attempt-1/"
    dom = dump_dom(tmp_path, attempt)
    assert '<span class="class completed">completed</span>' in dom
    assert '<span id="why">completed reason</span>' in dom
    assert "step 2 · agent" in dom and "pytest -q tests" in dom and "3 passed" in dom
    assert "&lt;script&gt;alert" in dom and "<img" not in dom  # the agent's markup is text

    shown = {
        # the result's sentence first, then plan and scores
        "run": (viewer, [STORY, "replay", "ann at 2026-01-01", "1.00 | 0.50"]),
        "attempt": (attempt, ["step 2 · agent", "pytest -q tests", "3 passed"]),  # a step
    }
    for name, (url, needles) in shown.items():
        data = screenshot(tmp_path, url, tmp_path / f"{name}.png", **SHOT)
        assert png_size(data) == (SHOT["width"], SHOT["height"])
        assert len(data) > 40_000, name  # a blank page compresses to a few KB
        assert in_screenshot(tmp_path, url, needles) == [f"in view: {n}" for n in needles]
    shot = tmp_path / "viewer-run.png"  # the first window, for docs/watching.md
    page_text_when(tmp_path, viewer, shot, [STORY], width=1024, height=800, scale=0.75)
    assert png_size(shot.read_bytes()) == (768, 600)
    keep(shot, "viewer-run.png")


STORY = "Paired difference (sourcegraph_full − baseline): +0.167, 95% CI [-0.500, +1.000]"
"""The hand-worked run's result, as the viewer opens with it (test_result_story.py)."""


SHOT = {"width": 1024, "height": 1400}
"""The screenshots' window: what they show is what lies in it."""


def in_screenshot(tmp_path: Path, url: str, needles: list[str]) -> list[str]:
    """Per text, whether the page the viewer served shows it inside the screenshot's window.

    The served page forbids scripts, so the probe runs in a copy of its HTML, opened at the
    screenshot's size.
    """
    with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - loopback
        served = answer.read().decode()
    copy = tmp_path / "in-view.html"
    copy.write_text(probed(served, in_view_probe(needles)))
    dom = dump_dom(tmp_path, copy.as_uri(), **SHOT)
    found = re.search(r'<pre id="in-view-probe">(.*?)</pre>', dom, re.S)
    assert found is not None, dom[-2000:]
    return html.unescape(found.group(1)).splitlines()


def test_viewer_pages_fit_a_narrow_window(tmp_path: Path) -> None:
    site = ViewerSite(write_run(tmp_path / "runs").root.parent)
    for name in ("/runs/hand/", "/runs/hand/tasks/t1/baseline/attempt-1/"):
        page = tmp_path / "page.html"
        page.write_text(probed(site.answer(name).body.decode()))
        dom = dump_dom(tmp_path, page.as_uri(), width=500, height=900)
        found = re.search(r'<pre id="layout-probe">(.*?)</pre>', dom, re.S)
        assert found is not None and found.group(1) == "layout ok", (name, found)
