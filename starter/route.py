"""What to do with a run no worker carries: one route, said the same by every command.

Ctrl-C on ``starter run``, ``starter status`` and ``starter approve`` with no worker running
all name these steps, in an order that works as printed: a waiting run is approved first
(the approval is kept by the server and taken when a worker runs), then run here with
``starter resume``, which runs a worker in this process until the run ends.
"""

from __future__ import annotations

__all__ = ["no_worker_route"]


def no_worker_route(run_id: str, phase: str | None) -> str:
    """The steps that carry run ``run_id``, in its ``phase``, with no worker running.

    ``phase`` is the run's ``DurabenchRunStatus`` (``None``: not known).
    """
    resume = f"`python -m starter resume {run_id}`"
    reject = f'`python -m starter reject {run_id} --reason "not now"`'
    if phase == "awaiting_approval":
        return (
            f"approve it with `python -m starter approve {run_id}`, then run it here with "
            f"{resume}; or end it with {reject}."
        )
    if phase in ("planning", None):
        return (
            f"run it here with {resume}: it makes the plan, shows it and waits for your "
            f"approval; or end it with {reject}."
        )
    return (
        f"run it here with {resume} (or start `python worker.py` on this server); stop it "
        f"with `python -m starter cancel {run_id}`."
    )
