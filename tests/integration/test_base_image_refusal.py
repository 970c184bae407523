"""A base image that is neither here nor pullable is refused at plan time, in one line.

Every task image is built ``FROM`` ``DURABENCH_BASE_IMAGE``: on a machine with no registry
an approved run would fail every build and retry it for minutes. Real Docker: the image
name below exists nowhere, and this machine has no registry to ask (the daemon's answer
comes fast, or the check's own bound ends the wait).
"""

from __future__ import annotations

import uuid

import pytest

from durabench.settings.values import Settings
from tests.starter_cli import one_error, starter


@pytest.mark.docker
def test_a_base_image_that_cannot_be_had_is_refused_before_any_run(settings: Settings) -> None:
    missing = f"durabench-test/no-such-base-{uuid.uuid4().hex[:8]}:never"
    run_id = f"refused-{uuid.uuid4().hex[:8]}"
    env_settings = settings.model_copy(update={"base_image": missing})
    proc = starter(env_settings, "run", "--suite", "pytorch", "--yes", "--run-id", run_id)
    error = one_error(proc)
    assert missing in error
    assert "DURABENCH_BASE_IMAGE" in error
    assert "scripts/build-base-image.sh" in error
    assert "started" not in proc.stdout
    status = starter(settings, "status", run_id)
    assert one_error(status) == (
        f"Error: no run {run_id}; list the runs with `python -m starter status`"
    )
