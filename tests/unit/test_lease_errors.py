"""How ``lease_account`` reads the pool's refusals: retried when asking again helps.

The pool continues as new by update count; an update the server admitted but the pool's
run ended before answering comes back failed (``AcceptedUpdateCompletedWorkflow`` or
``UnprocessedUpdate``). The lease id makes asking again safe, so those are retried; only
the pool's own answer (no account for the agent) ends the arm as infra. Before, an
``UnprocessedUpdate`` was read as that answer: under load an attempt became infra.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from activities.account_leases import AccountActivities
from activities.boundary import KnownSecrets
from durabench.errors import AccountError
from durabench.models.accounts import LeaseGrant, LeaseRequest


class RefusingPool:
    """A pool whose ``lease`` update fails with ``cause``."""

    def __init__(self, cause: BaseException) -> None:
        self.cause = cause

    async def lease(self, req: LeaseRequest) -> LeaseGrant:
        raise WorkflowUpdateFailedError(self.cause)


def _activities(cause: BaseException, tmp_path: Path) -> AccountActivities:
    acts = AccountActivities.__new__(AccountActivities)  # no server: only the pool answers
    acts.pool = RefusingPool(cause)  # type: ignore[assignment]
    acts.secrets = KnownSecrets(tmp_path / "accounts.toml")
    return acts


def _request() -> LeaseRequest:
    return LeaseRequest(
        agent="claude-code", holder_workflow_id="w", holder_run_id="r", label="l", lease_id="x"
    )


@pytest.mark.parametrize("kind", ["AcceptedUpdateCompletedWorkflow", "UnprocessedUpdate"])
async def test_an_update_the_pool_never_answered_is_asked_again(kind: str, tmp_path: Path) -> None:
    cause = ApplicationError("not processed", type=kind, non_retryable=True)
    with pytest.raises(ApplicationError) as raised:
        await _activities(cause, tmp_path).lease_account(_request())
    assert not raised.value.non_retryable
    assert raised.value.type != AccountError.__name__


async def test_the_pool_s_own_refusal_ends_the_arm(tmp_path: Path) -> None:
    cause = ApplicationError("no account serves agent claude-code", type="ValueError")
    with pytest.raises(ApplicationError) as raised:
        await _activities(cause, tmp_path).lease_account(_request())
    assert raised.value.type == AccountError.__name__
    assert "no account serves" in str(raised.value)
