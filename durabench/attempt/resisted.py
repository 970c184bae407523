"""The worker's own record that an agent resisted being stopped, and what it makes of it.

Whatever happens in a sandbox after the agent started is the agent's. An agent whose
processes could not be stopped from inside (they hold every process slot, or outrun the
reaper) is stopped from outside by a restart; the worker writes down that it had to, in
the attempt's directory on the host, where nothing in the sandbox reaches. The verdict
then is the agent's error, whatever its transcript claims: never infrastructure, never a
free retry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from durabench.atomic import atomic_write
from durabench.errors import SandboxError
from durabench.models.verdict import Verdict
from durabench.sandbox import Sandbox
from durabench.sandbox.reaper import REAP_SCRIPT
from durabench.settings.secrets import scrub_text

__all__ = ["RESISTED", "as_resisted", "record_resisted", "resisted", "stop_agent"]

_EXEC_REFUSED = (126, 127)
"""``docker exec``'s exit codes when the runtime could not start the command."""

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


async def stop_agent(
    sandbox: Sandbox, store: Path, secrets: Sequence[str], *, stopped_is_error: bool = False
) -> str:
    """Kill every process the agent left (``setsid`` children, daemons).

    Before anything reads its work: nothing of the agent runs while its diff is taken or
    its tests run. Processes that resist (they hold every process slot, so not even
    ``docker exec`` starts, or outrun the reaper's rounds) are stopped from outside: the
    sandbox restarts, its files and ``/logs`` carried over. The worker writes that down
    on the host, out of the agent's reach: the attempt is the agent's error.

    ``stopped_is_error``: after the build or the tests ran the submission as root, a
    sandbox that stopped by itself refuses the reaper's exec too; that is the submission's
    doing, judged by the verification (0.0), not an agent that resisted the stop.

    Returns:
        How the processes resisted (the sandbox was restarted); ``""`` when they did not.

    Raises:
        SandboxError: the backend failed (the harness's, not the agent's), or, with
            ``stopped_is_error``, the sandbox stopped by itself.
    """
    if await sandbox.others_running() == 0:
        return ""  # nothing runs but the sandbox's own, as the backend counts: no reaper
    if await sandbox.process_slots_left() == 0:
        why = "they held every process slot of the sandbox, as Docker counted them"
    else:
        done = await sandbox.exec(["sh", "-c", REAP_SCRIPT], user="0")
        if done.exit_code == 0:
            return ""
        refused = done.exit_code in _EXEC_REFUSED
        if refused and stopped_is_error and await sandbox.stopped_by_itself():
            raise SandboxError(f"{sandbox.spec.name} stopped before the reaper ran")
        said = scrub_text((done.stderr or done.stdout).strip(), secrets)[-200:]
        why = f"the reaper {'could not start' if refused else 'failed'}"
        why += f" (exit {done.exit_code}{': ' + said if said else ''})"
    await asyncio.to_thread(record_resisted, store, why)
    await sandbox.restart()
    return why
