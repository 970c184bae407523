"""What every worker would refuse of a run's attempts, refused once, when the run is planned.

A worker checks each attempt's input before it touches anything
(:func:`durabench.attempt.inputs.check_attempt_inputs`): the task directory, the agent's
``version`` option, the host directories the agent's options ask to mount. Refused there,
an input fails its attempt as infrastructure; the attempt is retried, fails the same way,
and its pair is excluded, for every task, a paid run with nothing in it. Like every bad
input, it belongs to the plan: one line, before approval, no run left behind.

The agent's options are the run's, the same for every task, so one attempt per lane is
checked, on the first task; the plan checks every task's directory itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from durabench.attempt.inputs import check_attempt_inputs
from durabench.models.attempt import AttemptRef
from durabench.models.run import RunRequest, TaskRef
from durabench.models.task import TaskSpec
from durabench.settings.values import Settings

__all__ = ["check_as_workers_will"]


def check_as_workers_will(
    request: RunRequest,
    lanes: Sequence[str],
    tasks: Sequence[TaskSpec | TaskRef],
    settings: Settings,
) -> None:
    """Check the first attempt of each lane as a worker with ``settings`` will.

    Raises:
        ConfigError: a worker would refuse it (a mount outside ``DURABENCH_HOME/mounts/``,
            a task directory outside its task roots, a version that is no version); the
            message says what to change.
    """
    if not tasks:
        return
    first = tasks[0]
    task = TaskRef(task_id=first.task_id, task_dir=str(first.task_dir))
    for lane in lanes:
        ref = AttemptRef(run_id=request.run_id, task=task, lane=lane, agent=request.agent)
        check_attempt_inputs(ref, settings, os.environ)
