"""Every place that tells how to approve gives the form that records who approved.

An approve signal with input ``{}`` approves, but from the dev server's Web UI it carries no
identity: the run is then recorded as approved by nobody. So every hint (README, the docs,
what the terminal prints, the Web UI's details and timer, the signal's own description)
shows an input that names the approver. The check finds each ``approve`` with an input in
every text and holds each one; it also counts them, so it cannot pass by finding none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from durabench.atomic import atomic_write
from durabench.audit import audit_run
from durabench.models.results import RunResult
from durabench.models.run import NOT_NAMED, Approval
from durabench.models.suite_run import ProgressOutput, RecordRunInput
from durabench.results.files import build_results, write_reports
from durabench.results.report import render_markdown
from durabench.results.report_html import render_html
from durabench.settings.paths import RunPaths
from durabench.settings.values import Settings
from starter.console import approval_hint
from tests.unit.results_set import hand_result
from workflows.run_details import approve_hint, current_details
from workflows.run_messages import SIGNALS

ROOT = Path(__file__).resolve().parents[2]

_INPUTS = [
    # temporal workflow signal ... --name approve ... --input '{...}'
    re.compile(r"--name approve\b[^\n']*?--input '([^']*)'"),
    # Send a Signal → approve, input {...}  /  signal `approve`, input `{...}`
    re.compile(r"approve`?\*?,? (?:and give the )?input:? `?(\{[^}\n]*\}?)"),
]


def approve_inputs(text: str) -> list[str]:
    """Every input given with an ``approve`` signal in ``text``."""
    return [m.group(1) for pattern in _INPUTS for m in pattern.finditer(text)]


def _texts() -> dict[str, str]:
    docs = {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "docs").rglob("*.md")}
    waiting = ProgressOutput(run_id="r-1", phase="awaiting_approval")
    return {
        "README.md": (ROOT / "README.md").read_text(),
        **docs,
        "starter's printed hint": approval_hint(Settings(home=Path("/nowhere")), "r-1"),
        "the timer's summary": approve_hint("r-1"),
        "the current details": current_details(waiting, None, deadline=None),
        "the approve signal's description": SIGNALS["approve"],
    }


def test_the_finder_sees_an_unnamed_approval() -> None:
    said = "temporal workflow signal --workflow-id run/r --name approve --input '{}'"
    assert approve_inputs(said) == ["{}"]
    assert approve_inputs("Send a Signal → approve, input `{}`") == ["{}"]


def test_every_hint_to_approve_names_the_approver() -> None:
    found = {name: approve_inputs(text) for name, text in _texts().items()}
    unnamed = {name: ins for name, ins in found.items() if any('"approver"' not in i for i in ins)}
    assert not unnamed, unnamed
    places = [name for name, ins in found.items() if ins]
    assert len(places) >= 6, found  # README, running.md, install.md, web-ui.md, hints
    for name in ("README.md", "starter's printed hint", "the timer's summary"):
        assert found[name], (name, found[name])


def _unnamed() -> RunResult:
    result = hand_result()
    assert result.approval is not None
    return result.model_copy(update={"approval": Approval(approved_at=result.approval.approved_at)})


def test_an_approval_that_names_nobody_says_so_in_both_reports() -> None:
    result = _unnamed()
    assert result.approval is not None and result.approval.approver == NOT_NAMED
    card = result.scorecard
    assert card is not None
    markdown = render_markdown(result, card)
    assert "- **approved by: not named (at 2026-01-01" in markdown
    assert '{"approver": "your name"}' in markdown  # how to be named next time
    page = render_html(result, card)
    assert '<p id="approval" class="warn">approved by: not named' in page


def test_the_audit_notes_an_approval_that_names_nobody(tmp_path: Path) -> None:
    result = _unnamed()
    assert result.approval is not None
    paths = RunPaths.for_run(tmp_path, "hand")
    atomic_write(paths.plan, result.plan.model_dump_json())
    record = RecordRunInput(plan=result.plan.summary(), approval=result.approval)
    atomic_write(paths.run, record.model_dump_json())
    for a in result.attempts:
        atomic_write(
            paths.attempt(a.task_id, a.lane, a.attempt) / "result.json", a.model_dump_json()
        )
    write_reports(paths, build_results(paths, result.approval, 1.0))
    assert json.loads(paths.run.read_text())["approval"]["approver"] == "not named"
    report = audit_run(tmp_path, "hand", None, skipped="no server in a unit test")
    assert any(note.startswith("approved by: not named") for note in report.notes), report.notes
