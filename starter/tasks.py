"""``python -m starter tasks check DIR...``: validate task directories, show what was read."""

from __future__ import annotations

from pathlib import Path

import click

from durabench.errors import ConfigError, TaskFormatError
from durabench.models.task import TaskSpec
from durabench.tasks import load_task, task_files
from durabench.tasks.dialects import DIALECT_NAMES
from starter.console import console, errors, shown
from starter.refusal import Refusal

__all__ = ["describe_task", "tasks"]


def describe_task(t: TaskSpec) -> str:
    """What durabench read from a task directory, in a few lines (rich markup).

    Every field is the task author's text, so each is :func:`shown` as data.
    """
    yes = {True: "yes", False: "no"}
    dialects = " and ".join(DIALECT_NAMES.get(d, d) for d in t.dialects)
    repo, category, language, difficulty = (
        shown(v or "-") for v in (t.repo, t.category, t.language, t.difficulty)
    )
    return (
        f"[bold]{shown(t.task_id)}[/]  ({shown(t.task_dir)})\n"
        f"  task.toml read as {shown(dialects)}\n"
        f"  repo {repo} · category {category} · language {language} · difficulty {difficulty}\n"
        f"  time limit {t.time_limit_sec:g} s · verifier: {shown(t.verifier_command)}"
        f" (timeout {t.verifier_timeout_sec:g} s)\n"
        f"  Dockerfiles: {shown(', '.join(t.dockerfiles))} · MCP instruction: "
        f"{yes[t.has_mcp_instruction]} · solution: {yes[t.has_solution]}"
    )


@click.group()
def tasks() -> None:
    """Work with task directories (CodeScaleBench's or Harbor's task.toml)."""


@tasks.command()
@click.argument("task_dirs", nargs=-1, required=True, type=click.Path())
def check(task_dirs: tuple[str, ...]) -> None:
    """Validate task directories and print what durabench read from each.

    Each task says which task.toml dialect was read: CodeScaleBench's, Harbor's, or both.
    A task is invalid when its layout or task.toml is not one durabench reads, its id is not
    an id, or a link in it leads outside it (its files would carry host files into the
    sandbox).

    A task whose tests run the submission (import it, or run code in the workspace) is
    named: its tests run as root, so a submission there could write its own reward.
    """
    invalid = forgeable = 0
    for path in task_dirs:
        try:
            spec = load_task(path)
            task_files(Path(spec.task_dir))
            console.print(describe_task(spec))
        except (TaskFormatError, ConfigError) as exc:
            invalid += 1
            errors.print(f"[red]invalid:[/] {shown(str(exc))}", soft_wrap=True)
            continue
        if spec.runs_submission:
            forgeable += 1
            console.print(
                f"  [yellow]tests run the submission as root:[/] {shown(spec.runs_submission)}"
                " (its code could write its own reward)",
                soft_wrap=True,
            )
    if invalid:
        raise Refusal(f"{invalid} of {len(task_dirs)} task directories are invalid")
    console.print(f"{len(task_dirs)} task directories are valid.")
    if forgeable:
        console.print(
            f"{forgeable} of {len(task_dirs)} tasks run the submission in their tests: their "
            "rewards rest on the submission not writing its own."
        )
