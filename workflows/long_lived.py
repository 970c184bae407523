"""What the deployment's long-lived workflows (the account pool, the sandbox slots) share.

Each runs until terminated, answering updates; it continues as new before its history
grows large, or after a count of updates (the server refuses more than 2,000 in one
workflow run, and not every server suggests continue-as-new before that).
"""

from __future__ import annotations

from temporalio import workflow

__all__ = ["history_long"]


def history_long(updates: int, max_updates: int, max_events: int) -> bool:
    """Whether the workflow should continue as new now."""
    if updates >= max_updates:
        return True
    info = workflow.info()
    return info.is_continue_as_new_suggested() or info.get_current_history_length() >= max_events
