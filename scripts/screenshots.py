"""Take the screenshots docs/watching.md shows, from the tests that check them: one command.

The tests that read the Temporal Web UI (waiting, running, ended), the report (1400 and
500 px) and the viewer in headless Chromium check what each first window shows; run with
``DURABENCH_SCREENSHOTS=DIR`` they keep their screenshots there. Only once every test
passed are the files copied to docs/img, so a failure leaves the pictures as they were.

    python scripts/screenshots.py

Needs Chromium (``/usr/bin/chromium``) and the ``temporal`` CLI's dev server (the Web UI)
(no Docker). Exits non-zero, naming what failed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS_IMG = REPO / "docs" / "img"
TESTS = (
    "tests/workflows/test_web_ui_browser.py",
    "tests/integration/test_html_report.py",
    "tests/integration/test_viewer_browser.py",
)
SHOTS = (
    "web-ui-waiting.png",
    "web-ui-running.png",
    "web-ui-ended.png",
    "report-1400.png",
    "report-500.png",
    "viewer-run.png",
)


def main() -> int:
    """Run the browser tests keeping their screenshots; copy them to docs/img if all pass."""
    with tempfile.TemporaryDirectory() as kept:
        env = {
            **os.environ,
            "DURABENCH_SCREENSHOTS": kept,
            "DURABENCH_REQUIRE_BROWSER": "1",
            "PYTHONPATH": str(REPO),
        }
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", *TESTS], env=env, cwd=REPO)
        if done.returncode != 0:
            print("the browser tests failed: docs/img is left as it was", file=sys.stderr)
            return done.returncode
        missing = [name for name in SHOTS if not (Path(kept) / name).is_file()]
        if missing:
            print(f"no test kept {', '.join(missing)}", file=sys.stderr)
            return 1
        DOCS_IMG.mkdir(exist_ok=True)
        for name in SHOTS:
            shutil.copyfile(Path(kept) / name, DOCS_IMG / name)
            print(f"docs/img/{name}: {(DOCS_IMG / name).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
