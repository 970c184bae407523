"""Model text in the terminal: rich markup and escape sequences an agent wrote are data.

A final message, a reason or a note can hold ``[bold red]``, an unclosed ``[/x`` (rich's
MarkupError) or terminal escapes (clear screen, set the window title); every view shows
them written out and none acts.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from durabench.models.pair import ArmProgress, PairProgress
from durabench.models.suite_run import ProgressOutput
from starter.console import result_tables
from starter.live import progress_view
from tests.unit.test_report import hostile_result

EVIL = "[bold red]x[/] \x1b[2J\x1b]0;pwned\x07 [/unclosed"


def _render(*views: object) -> str:
    out = io.StringIO()
    console = Console(width=200, file=out, force_terminal=True, color_system=None)
    for view in views:
        console.print(view)
    return out.getvalue()


def _inert(text: str) -> None:
    assert "\x1b[2J" not in text and "\x1b]0;" not in text and "\x07" not in text
    assert "[bold red]x[/]" in text and "[/unclosed" in text  # shown as written
    assert "\\x1b[2J" in text


def test_result_tables_show_model_text_as_written() -> None:
    result = hostile_result()
    attempts = tuple(
        a.model_copy(update={"reason": EVIL, "verifier_error": EVIL}) for a in result.attempts
    )
    excluded = {task: EVIL for task in result.excluded}
    result = result.model_copy(update={"attempts": attempts, "excluded": excluded})
    _inert(_render(*result_tables(result)))


def test_live_view_shows_model_text_as_written() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    progress = ProgressOutput(run_id="r1", phase="running", total=2, done=0, running=("t1",))
    arm = ArmProgress(lane="baseline", attempt=1, state="waiting_account", note=EVIL)
    done = ArmProgress(lane="full", attempt=1, state="done", last_class=EVIL)
    pairs = [PairProgress(task_id="t1", arms=(arm, done))]
    _inert(_render(progress_view(progress, pairs, now)))
