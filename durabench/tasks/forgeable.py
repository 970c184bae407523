"""Whether a task's tests run the submission: the agent's code, as root, beside the reward.

The verifier runs the task's tests as root and reads the reward they write. Tests that
import or run what the agent left in the workspace run it there too, and on import it can
write 1.0 to the reward while the work is wrong: nothing in the harness can tell. Until
the tests run as another user, such tasks are named (``tasks check``, the report), so a
reader knows which rewards rest on the submission's good behaviour.

A task is flagged when its verifier command, or a line of a file under ``tests/``, does
one of these with the workspace (:data:`WORKSPACE`): changes into it (``cd``, ``pushd``,
``os.chdir``, ``make -C``), puts it on a load path (``sys.path``, ``PYTHONPATH``,
``NODE_PATH``), runs or sources something in it (``python3 /workspace/x.py``, ``pytest
/workspace/tests``, ``/workspace/run``, ``source``), or loads a file from it
(``runpy``, ``importlib``). Reading a file there (``open('/workspace/answer.txt')``,
``git -C /workspace diff``) is not running it. Comment lines are skipped. It is a
reading of text, not of what a script will do: a test that reaches the workspace by a
path it builds at run time is not seen.
"""

from __future__ import annotations

import re
from pathlib import Path

from durabench.errors import ConfigError
from durabench.tasks.files import task_files

__all__ = ["WORKSPACE", "runs_submission"]

WORKSPACE = "/workspace"
"""Where the agent's work is in the task's container (``SandboxPaths.workspace``)."""
_W = re.escape(WORKSPACE) + r"(?=[/'\"\s;&|)]|$)"
_RUNS = re.compile(
    "|".join(
        [
            rf"(?:^|[\s;&|(])(?:cd|pushd)\s+['\"]?{_W}",
            rf"chdir\(\s*['\"]{_W}",
            rf"\b(?:make|npm|yarn|pnpm|cargo|mvn|gradle)\b[^\n]*\s(?:-C|--prefix|--dir|"
            rf"--manifest-path|--cwd)[\s=]+['\"]?{_W}",
            rf"sys\.path\b[^\n]*{_W}",
            rf"\b(?:PYTHONPATH|NODE_PATH|GOPATH|RUBYLIB|PERL5LIB|CLASSPATH)\s*[=:][^\n]*{_W}",
            rf"\b(?:python[\d.]*|node|bash|sh|zsh|ruby|perl|php)\s+(?:-\S+\s+)*['\"]?"
            rf"{re.escape(WORKSPACE)}/",
            rf"\b(?:pytest|py\.test|tox|nox|jest|mocha|vitest)\b[^\n|;&<>]*\s['\"]?{_W}",
            rf"^\s*(?:exec\s+|\S+=\S+\s+)*['\"]?{re.escape(WORKSPACE)}/\S",
            rf"(?:^|[\s;&|])(?:source|\.)\s+['\"]?{re.escape(WORKSPACE)}/",
            rf"\b(?:runpy|importlib|spec_from_file_location|SourceFileLoader|"
            rf"exec\(\s*open)\b[^\n]*{_W}",
        ]
    )
)
_MAX_BYTES = 1 << 20
"""A test file larger than this is not read (data, not a script)."""


def runs_submission(task_dir: Path, verifier_command: str = "") -> str:
    """Where the task's tests run the submission (``file:line: text``), or ``""``."""
    if said := _first_line("verifier command", verifier_command):
        return said
    root = task_dir / "tests"
    try:
        files = task_files(root, task_dir=task_dir)
    except ConfigError:
        return ""  # the loader refuses such a task on its own
    for path in files:
        try:
            if path.stat().st_size > _MAX_BYTES:
                continue
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        if said := _first_line(str(path.relative_to(task_dir)), text):
            return said
    return ""


def _first_line(name: str, text: str) -> str:
    """``name:line: text`` of the first line that runs the workspace, or ``""``."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("#", "//")) or "\0" in line:
            continue
        if _RUNS.search(line):
            return f"{name}:{n}: {line.strip()[:160]}"
    return ""
