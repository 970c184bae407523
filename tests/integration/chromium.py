"""Driving Debian's headless Chromium in tests: the DOM after scripts ran, or a screenshot.

A page can measure its own layout with :data:`LAYOUT_PROBE`: the probe writes what it found
into the DOM, where ``--dump-dom`` reads it (the browser gives no other way out).
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

__all__ = ["LAYOUT_PROBE", "dump_dom", "in_view_probe", "png_size", "probed", "screenshot"]

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

LAYOUT_PROBE = """<script>
addEventListener("load", () => {
  const view = document.documentElement.clientWidth, out = [];
  if (document.documentElement.scrollWidth > view)
    out.push("page wider than window: " + document.documentElement.scrollWidth + " > " + view);
  for (const svg of document.querySelectorAll("svg")) {
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
          || r.bottom > box.bottom + 1)
        out.push("clipped label: " + t.textContent);
    }
  }
  const pre = document.createElement("pre");
  pre.id = "layout-probe";
  pre.textContent = out.length ? out.join("\\n") : "layout ok";
  document.body.append(pre);
});
</script>"""
"""A script that reports a page wider than the window and SVG text outside its SVG."""


_IN_VIEW = """<script>
addEventListener("load", () => {
  const out = [];
  for (const needle of NEEDLES) {
    const holders = [...document.body.querySelectorAll("*")].filter(
      (el) => el.id !== "in-view-probe" && el.textContent.includes(needle)
        && ![...el.children].some((c) => c.textContent.includes(needle)));
    const seen = holders.some((el) => {
      const r = el.getBoundingClientRect();
      return el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
        && r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0
        && r.bottom <= innerHeight && r.right <= innerWidth;
    });
    out.push((seen ? "in view: " : "not in view: ") + needle);
  }
  const pre = document.createElement("pre");
  pre.id = "in-view-probe";
  pre.textContent = out.join("\\n");
  document.body.append(pre);
});
</script>"""


def in_view_probe(needles: list[str]) -> str:
    """A script that says, per text, whether an element showing it lies wholly in the window.

    Loaded at the size of a screenshot, it tells whether the screenshot shows the text:
    visible (not hidden, not transparent) and not below the fold or past an edge.
    """
    return _IN_VIEW.replace("NEEDLES", json.dumps(needles))


def _chromium(profile: Path, *args: str) -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed (apt-get install chromium)")
    return subprocess.run(
        [exe, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def dump_dom(tmp_path: Path, url: str, width: int = 1280, height: int = 1800) -> str:
    """The page's DOM once loaded, at a window of ``width`` x ``height``."""
    return _chromium(tmp_path / "profile", f"--window-size={width},{height}", "--dump-dom", url)


def screenshot(
    tmp_path: Path, url: str, shot: Path, width: int = 1280, height: int = 1800
) -> bytes:
    """A PNG of the page at ``width`` x ``height``, written to ``shot``; its bytes."""
    _chromium(tmp_path / "profile", f"--window-size={width},{height}", f"--screenshot={shot}", url)
    return shot.read_bytes()


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG (fails the test for anything else)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        pytest.fail("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def probed(page: str, probe: str = LAYOUT_PROBE) -> str:
    """``page`` with ``probe`` (:data:`LAYOUT_PROBE` unless told) before its end."""
    return page.replace("</body>", probe + "</body>")
