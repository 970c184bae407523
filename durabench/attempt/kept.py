"""What an attempt keeps on the host: its logs scrubbed of secrets, its trajectory.

Files here were copied out of the sandbox by the collect, after the agent and the tests
ended: nothing in the sandbox reaches them, so what is read back from them (the transcript
a classification streams) is what the sandbox held then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from durabench.agents import Agent, AgentContext, EventFile
from durabench.agents.trajectory import trajectory_of
from durabench.atomic import atomic_write
from durabench.attempt.command_trajectory import command_trajectory
from durabench.models.attempt import AttemptRef
from durabench.settings.paths import TRAJECTORY
from durabench.settings.secrets import scrub_bytes, scrub_text

__all__ = ["AgentLogs", "keep_files", "keep_trajectory", "tail_of"]


class AgentLogs(NamedTuple):
    """The agent's stdout (its transcript, streamed from these bytes) and stderr tail."""

    stdout: bytes
    stderr: bytes


def tail_of(path: Path, max_bytes: int) -> bytes:
    """A host file's last ``max_bytes``."""
    with path.open("rb") as f:
        size = f.seek(0, 2)
        f.seek(max(0, size - max_bytes))
        return f.read()


def _kept_text(path: Path) -> str:
    """A kept file's text; ``""`` when it was not kept."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return ""


def keep_files(target: Path, files: Mapping[str, bytes], secrets: Sequence[str]) -> None:
    """Write ``files`` under ``target``, every secret scrubbed before a byte is written."""
    needles = [s.encode() for s in secrets]
    for rel, data in files.items():
        path = target / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(scrub_bytes(data, needles))
        except OSError:  # a name clashing with a directory already kept: not kept
            continue


def keep_trajectory(
    store: Path, ref: AttemptRef, agent: Agent, ctx: AgentContext, secrets: Sequence[str]
) -> None:
    """Write the kept (scrubbed) transcript as ``trajectory.json``, in Harbor's ATIF.

    People and ``harbor view`` read it; an agent that prints no transcript gets the
    commands it ran and their output.
    """
    kept = EventFile(store / "agent" / "stdout.txt")  # streamed, never held whole
    said = _kept_text(store / "durabench" / ctx.paths.instruction.name)
    attempt_id = f"{ref.task.task_id}/{ref.lane}/attempt-{ref.attempt}"
    trajectory = trajectory_of(
        agent.transcript_format(ctx),
        kept,
        agent=ref.agent.name,
        model=ref.agent.model,
        attempt_id=attempt_id,
        instruction=said.strip(),
        version=ref.agent.options.get("version"),
    )
    if trajectory is None:  # no transcript: the commands it ran, and what they printed
        commands = [step.command for step in agent.run_commands(ctx)]
        trajectory = command_trajectory(
            commands,
            store / "agent",
            agent=ref.agent.name,
            model=ref.agent.model,
            attempt_id=attempt_id,
            instruction=said.strip(),
        )
    atomic_write(store / TRAJECTORY, scrub_text(trajectory.to_json(), secrets))
