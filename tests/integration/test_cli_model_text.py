"""Model text through the real commands: ``starter run``, ``status`` and ``report``.

A replayed session ends with a final message full of rich markup and terminal escapes,
and leaves a file whose name holds an escape sequence. Every command prints them written
out: none crashes on the markup (rich's MarkupError), and no escape reaches the terminal,
``submission.patch`` or the reports.
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from durabench.settings.values import Settings
from durabench.tasks import load_suite
from tests.starter_cli import starter

pytestmark = pytest.mark.docker

EVIL = "[bold red]x[/] \x1b[2J\x1b]0;pwned\x07 [/unclosed"
FILE = "evil\x1b[2J.md"
RAW = ("\x1b[2J", "\x1b]0;", "\x07")


def _suite(home: Path, plan_dir: Path) -> Path:
    source = next(t for t in load_suite("pytorch") if t.task_id == "tensor-gelu-001")
    task = home / "suites" / "hostile" / "h1"
    shutil.copytree(source.task_dir, task)
    toml = (task / "task.toml").read_text().replace(source.task_id, "h1")
    (task / "task.toml").write_text(toml)
    plan_dir.mkdir(parents=True)
    events = [
        {"type": "system", "subtype": "init", "model": "claude-haiku-4-5-20251001"},
        {"type": "result", "subtype": "success", "is_error": True, "result": EVIL},
    ]
    (plan_dir / "session").write_text("".join(json.dumps(e) + "\n" for e in events))
    (plan_dir / "notes").write_text(EVIL + "\n")
    case = {"transcript": "session", "exit_code": 1, "files": {FILE: "notes"}}
    (plan_dir / "plan.json").write_text(json.dumps({"cases": [case]}))
    return plan_dir / "plan.json"


def _inert(text: str) -> None:
    assert "MarkupError" not in text and "Traceback" not in text, text
    assert not any(raw in text for raw in RAW), text


def test_run_status_and_report_show_model_text_as_written(
    settings: Settings, tmp_path: Path
) -> None:
    plan = _suite(settings.home, tmp_path / "replay")
    run_id = f"evil-{uuid.uuid4().hex[:8]}"
    run = starter(
        settings,
        *("run", "--suite", "hostile", "--agent", "replay", "--model", "claude-haiku-4-5"),
        *("--agent-opt", f"plan={plan}", "--yes", "--run-id", run_id, "--infra-retries", "0"),
        timeout=600,
    )
    _inert(run.stdout + run.stderr)
    assert run.returncode == 0, run.stderr
    assert "\\x1b[2J" in run.stdout  # the message is shown, written out
    status = starter(settings, "status", run_id)
    _inert(status.stdout + status.stderr)
    assert status.returncode == 0, status.stderr
    for fmt in ("md", "html"):
        report = starter(settings, "report", run_id, "--format", fmt)
        _inert(report.stdout + report.stderr)
        assert report.returncode == 0
    root = settings.runs_dir / run_id
    for patch in root.glob("tasks/*/*/attempt-*/submission.patch"):
        heads = [line for line in patch.read_text().splitlines() if line.startswith("+++")]
        assert heads == ['+++ "b/evil\\033[2J.md"']  # the name quoted; the content is exact
    for name in ("report.md", "report.html"):
        _inert((root / name).read_text())
