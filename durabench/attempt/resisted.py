"""The worker's own record that an agent resisted being stopped, and what it makes of it.

Whatever happens in a sandbox after the agent started is the agent's. An agent whose
processes could not be stopped from inside (they hold every process slot, or outrun the
reaper) is stopped from outside by a restart; the worker writes down that it had to, in
the attempt's directory on the host, where nothing in the sandbox reaches. The verdict
then is the agent's error, whatever its transcript claims: never infrastructure, never a
free retry.
"""

from __future__ import annotations

from pathlib import Path

from durabench.atomic import atomic_write
from durabench.models.verdict import Verdict

__all__ = ["RESISTED", "as_resisted", "record_resisted", "resisted"]

RESISTED = "agent_resisted.txt"
"""In the attempt's directory: why the worker had to restart the sandbox to stop it."""


def record_resisted(store: Path, why: str) -> None:
    """Write down, on the host, that the agent resisted the stop and how."""
    store.mkdir(parents=True, exist_ok=True)
    atomic_write(store / RESISTED, why.strip() + "\n")


def resisted(store: Path) -> str:
    """How the agent resisted, as recorded; ``""`` when it did not."""
    try:
        return (store / RESISTED).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return ""


def as_resisted(verdict: Verdict, why: str) -> Verdict:
    """The verdict of an attempt whose agent resisted the stop: ``model_agent_error``.

    Whatever else the verdict said (a transcript that claims success, a cap) follows in
    the reason; the reward stays what the tests gave.
    """
    said = f"the agent's processes resisted the stop ({why}); the worker restarted the sandbox"
    return verdict.model_copy(
        update={
            "exit_class": "model_agent_error",
            "reason": f"{said}; otherwise {verdict.exit_class}: {verdict.reason}",
            "cap_resets_at": None,
        }
    )
