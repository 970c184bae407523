"""Once the agent has run, a passing fault never turns the attempt into a new session.

The session is what costs money; classifying and recording it are cheap and idempotent,
so they retry for hours (bounded) rather than hand the pair an ``infra_other`` to retry.
"""

from __future__ import annotations

import pytest

from starter.approve import approve_main
from tests.workflows.harness import Env, start_run


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_three_quick_failures_after_the_agent_do_not_run_it_again(env: Env) -> None:
    env.rec.failures.update({"classify/t1/baseline": 3, "record_attempt/t1/sourcegraph_full": 3})
    request, handle = await start_run(env, parallel=1, infra_retries=2)
    await approve_main(request.run_id, "ann", client=env.client)
    outcome = await handle.result()
    assert outcome.status == "completed"
    assert env.rec.calls.count("run_agent") == 2  # one session per lane, none repeated
    assert sorted((a.lane, a.attempt, a.exit_class) for a in env.rec.attempts) == [
        ("baseline", 1, "completed"),
        ("sourcegraph_full", 1, "completed"),
    ]
    assert not +env.rec.failures  # every failure happened
