"""Text from a task, an agent or a service is shown on a terminal as one line of data.

Issue 47 defect 11: a task.toml with ``difficulty = "[/]"`` crashed ``tasks check`` with
rich's ``MarkupError``; ``[link=file:///etc/passwd]`` ran as a link; ``ESC[2J`` reached the
terminal raw; a multi-line build error printed its own forged lines in ``status`` and
``run``. Every such text goes through :func:`starter.console.shown` (rich markup) or
:func:`starter.refusal.plain` (plain lines and errors): the property below holds for any
string, and the grep holds that errors go through :class:`starter.refusal.Refusal`.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console

from durabench.tasks.suites import BUILTIN_SUITES_DIR
from durabench.text_safety import one_line
from starter.console import result_tables, shown
from starter.refusal import Refusal, plain
from tests.unit.results_set import hand_result

REPO = Path(__file__).resolve().parents[2]
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _rendered(markup: str) -> str:
    """What a terminal gets for ``markup``: colours and all, as rich writes them."""
    out = io.StringIO()
    Console(file=out, width=100_000, color_system=None, highlight=False, emoji=False).print(
        markup, soft_wrap=True
    )
    return out.getvalue().removesuffix("\n")


FORGERIES = [
    "[/]",
    "[link=file:///etc/passwd]click[/link]",
    "\x1b[2J\x1b]0;title\x07",
    "build failed\n| task | 1.0 |\nFORGED: 0 passed, 57 failed",
    "ends in a backslash \\",
    "\\[bold]not bold",
    ":warning: :smile:",
    "\u202eevil\u2066",
    "cr\roverwrites",
]


@given(st.text())
@example("".join(FORGERIES))
def test_anything_shown_is_one_line_of_data(text: str) -> None:
    """Rendered alone or inside markup, it is exactly the text, controls written out."""
    line = one_line(text)
    assert _rendered(shown(text)) == line
    assert _rendered(f"[red]{shown(text)}[/]") == line
    assert _rendered(f"[bold]a {shown(text)}[/] b [i]{shown(text)}[/i]") == f"a {line} b {line}"
    assert not CONTROL.search(line)


@pytest.mark.parametrize("text", FORGERIES)
def test_each_forgery_shown_is_the_text(text: str) -> None:
    assert _rendered(shown(text)) == one_line(text)
    assert plain(text) == one_line(text) and "\n" not in plain(text)


def test_a_refusal_is_one_line() -> None:
    message = Refusal("the build said:\nError: forged\x1b[2J").format_message()
    assert "\n" not in message and "\x1b" not in message


def test_a_multi_line_reason_stays_on_its_line_in_the_result_tables() -> None:
    result = hand_result()
    forged = "build failed\nFORGED: 0 passed, 57 failed"
    attempts = list(result.attempts)
    attempts[0] = attempts[0].model_copy(update={"reason": forged, "exit_class": "infra_other"})
    result = result.model_copy(update={"attempts": tuple(attempts)})
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None)
    for item in result_tables(result):
        console.print(item)
    lines = out.getvalue().splitlines()
    assert not any(line.startswith("FORGED") for line in lines)
    assert any("build failed\\nFORGED" in line for line in lines)


@pytest.mark.parametrize("field", ["difficulty", "category", "language", "repo"])
@pytest.mark.parametrize("text", FORGERIES[:4])
def test_tasks_check_shows_a_task_field_as_written(tmp_path: Path, field: str, text: str) -> None:
    task = tmp_path / "task"
    shutil.copytree(BUILTIN_SUITES_DIR / "pytorch" / "tensor-gelu-001", task)
    toml = task / "task.toml"
    kept = [line for line in toml.read_text().splitlines() if not line.startswith(f"{field} =")]
    kept.insert(kept.index("[task]") + 1, f"{field} = {_toml_string(text)}")
    toml.write_text("\n".join(kept) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "starter", "tasks", "check", str(task)],
        env={**os.environ, "DURABENCH_HOME": str(tmp_path), "TERM": "xterm"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert one_line(text) in proc.stdout
    assert not CONTROL.search(proc.stdout.replace("\n", ""))
    assert "FORGED" not in "".join(line[:6] for line in proc.stdout.splitlines())


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    for ch in sorted(set(CONTROL.findall(escaped)) | {"\n", "\r"}):
        escaped = escaped.replace(ch, f"\\u{ord(ch):04x}")
    return f'"{escaped}"'


def test_every_error_a_command_raises_is_a_refusal() -> None:
    """``click.ClickException`` prints its message as it is: commands raise :class:`Refusal`."""
    found = []
    for path in sorted((REPO / "starter").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "click.ClickException(" in line and "class Refusal" not in line:
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "raise Refusal(...) instead:\n" + "\n".join(found)
    assert issubclass(Refusal, click.ClickException)
