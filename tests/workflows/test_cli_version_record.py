"""Each attempt's result names the CLI version that ran and the images it ran in."""

from __future__ import annotations

import pytest

from starter.approve import approve_main
from tests.workflows.harness import Env, start_run


@pytest.mark.parametrize("env", [["t1"]], indirect=True)
async def test_the_transcript_s_version_wins_over_what_version_printed(env: Env) -> None:
    env.rec.cli_versions.update(
        {"t1/baseline": ("2.1.332", "2.1.140"), "t1/sourcegraph_full": ("2.1.332", None)}
    )
    request, handle = await start_run(env, parallel=1)
    await approve_main(request.run_id, "ann", client=env.client)
    assert (await handle.result()).status == "completed"
    ran = {a.lane: a for a in env.rec.attempts}
    assert ran["baseline"].cli_version == "2.1.140"  # the transcript's init event
    assert ran["sourcegraph_full"].cli_version == "2.1.332"  # `--version`, for want of one
    assert {(a.task_image_id, a.agent_image_id) for a in ran.values()} == {
        ("sha256:task-t1", "sha256:agent-t1")
    }
