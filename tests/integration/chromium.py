"""Driving Debian's headless Chromium in tests: the DOM after scripts ran, or a screenshot.

A page can measure its own layout with :data:`LAYOUT_PROBE`: the probe writes what it found
into the DOM, where ``--dump-dom`` reads it (the browser gives no other way out).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "LAYOUT_PROBE",
    "dump_dom",
    "in_view",
    "in_view_probe",
    "keep",
    "page_text_when",
    "png_size",
    "probed",
    "screenshot",
]

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
  for (const cell of document.querySelectorAll("td, th")) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const word of node.textContent.matchAll(/[^\\s-]+/g)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (tops.size > 1) out.push("word broken in a cell: " + word[0]);
      }
    }
  }
  for (const table of document.querySelectorAll("table"))
    if (!table.querySelector("tbody tr")) out.push("table with a header and no rows: " + table.id);
  const pre = document.createElement("pre");
  pre.id = "layout-probe";
  pre.textContent = out.length ? out.join("\\n") : "layout ok";
  document.body.append(pre);
});
</script>"""
"""A script that reports a page wider than the window, SVG text outside its SVG, a word
broken across lines inside a table cell ("baselin/e") and a table with no rows."""


_IN_VIEW = """
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
"""


def in_view_probe(needles: list[str]) -> str:
    """A script that says, per text, whether an element showing it lies wholly in the window.

    Loaded at the size of a screenshot, it tells whether the screenshot shows the text:
    visible (not hidden, not transparent) and not below the fold or past an edge.
    """
    found = _IN_VIEW.replace("NEEDLES", json.dumps(needles))
    return (
        f'<script>addEventListener("load", () => {{{found}'
        'const pre = document.createElement("pre"); pre.id = "in-view-probe";'
        'pre.textContent = out.join("\\n"); document.body.append(pre);});</script>'
    )


def in_view(needles: list[str]) -> str:
    """:func:`in_view_probe` as a ``then`` script of :func:`page_text_when`: its lines."""
    return _IN_VIEW.replace("NEEDLES", json.dumps(needles)) + 'return out.join("\\n");'


def keep(shot: Path, name: str) -> None:
    """Copy ``shot`` as ``name`` into ``$DURABENCH_SCREENSHOTS`` when set (for the docs)."""
    where = os.environ.get("DURABENCH_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, Path(where) / name)


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
    """``page`` with ``probe`` (:data:`LAYOUT_PROBE` unless told) before its end.

    The page's Content-Security-Policy is taken out: it refuses every script, the test's
    probe too (what the policy refuses is ``tests/unit/test_html_policy.py``'s to check).
    """
    unguarded = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    return unguarded.replace("</body>", probe + "</body>")


def page_text_when(
    tmp_path: Path,
    url: str,
    shot: Path,
    wants: list[str],
    width: int = 1280,
    height: int = 1800,
    timeout_s: float = 60.0,
    then: str = "",
    scale: float = 1.0,
) -> str:
    """The page's visible text once it holds every one of ``wants``; a PNG of it in ``shot``.

    For pages that fill themselves in after loading (the Temporal Web UI): the browser is
    driven over its DevTools pipe, the text read until it is complete, then the screenshot
    taken. ``then``: a script run after the screenshot, as a person's clicks would be (an
    async function's body; what it returns is appended to the text after a form feed).
    ``scale``: the screenshot's size against the window's (smaller files for the docs).
    Fails the test naming what never appeared.
    """
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.fail("chromium is not installed (apt-get install chromium)")
    to_child, from_us = os.pipe()
    to_us, from_child = os.pipe()

    def wire() -> None:  # the browser reads commands on fd 3 and answers on fd 4
        os.dup2(to_child, 3)
        os.dup2(from_child, 4)

    args = [exe, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--remote-debugging-pipe"]
    args.append(f"--window-size={width},{height}")
    with subprocess.Popen(
        args,
        preexec_fn=wire,
        pass_fds=(3, 4),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        os.close(to_child)
        os.close(from_child)
        devtools = _DevTools(from_us, to_us)
        try:
            text = devtools.text_when(url, wants, timeout_s, (width, height))
            shot.write_bytes(devtools.screenshot(width, height, scale))
            if then:
                text += "\f" + devtools.evaluate(f"(async () => {{{then}}})()")
            devtools.call("Browser.close")
        finally:
            os.close(from_us)
            os.close(to_us)
            proc.kill()
    return text


class _DevTools:
    """Chromium's DevTools protocol over its pipe: NUL-terminated JSON messages."""

    def __init__(self, out_fd: int, in_fd: int) -> None:
        self.out_fd, self.in_fd = out_fd, in_fd
        self.next_id = 0
        self.session = ""
        self.buffer = b""

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self.out_fd, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    pytest.fail(f"DevTools {method}: {answer['error']}")
                return dict(answer.get("result", {}))

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            chunk = os.read(self.in_fd, 1 << 20)
            if not chunk:
                pytest.fail("chromium closed its DevTools pipe")
            self.buffer += chunk
        raw, _, self.buffer = self.buffer.partition(b"\0")
        return dict(json.loads(raw))

    def text_when(self, url: str, wants: list[str], timeout_s: float, size: tuple[int, int]) -> str:
        """The page's text once it holds ``wants``, in a viewport of exactly ``size``.

        The window's own size leaves the page less room than it says (its frame takes
        some): the viewport is set, so the screenshot and what is "in view" are the same.
        """
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        width, height = size
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        self.call("Emulation.setDeviceMetricsOverride", **metrics)
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout_s
        text = ""
        while time.monotonic() < deadline:
            found = self.call(
                "Runtime.evaluate",
                expression="document.body ? document.body.innerText : ''",
                returnByValue=True,
            )
            text = str(found.get("result", {}).get("value", ""))
            if all(want in text for want in wants):
                return text
            time.sleep(0.5)
        missing = [want for want in wants if want not in text]
        pytest.fail(f"{url} never showed {missing}; it showed:\n{text}")

    def evaluate(self, script: str) -> str:
        """What ``script`` (a promise) resolves to, as text; fails the test if it throws."""
        found = self.call("Runtime.evaluate", expression=script, awaitPromise=True)
        if "exceptionDetails" in found:
            pytest.fail(f"the page's script failed: {found['exceptionDetails']}")
        return str(found.get("result", {}).get("value", ""))

    def screenshot(self, width: int, height: int, scale: float) -> bytes:
        clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
        shot = self.call("Page.captureScreenshot", format="png", clip=clip)
        return base64.b64decode(shot["data"])
