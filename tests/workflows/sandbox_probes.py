"""Probe workflows of the workers' sandbox, in a module light enough to import in it.

``ModuleProbe`` tells which module objects its sandbox sees; ``CallsTheClock`` calls what
workflow code must not, and the sandbox has to stop each call.
"""

from __future__ import annotations

import importlib
import os
import random
import time
import uuid
from datetime import datetime
from typing import Any

from temporalio import workflow

PROBED = ("workflows.policies", "workflows.agent_run", "durabench.models.results")
"""Modules whose objects :class:`ModuleProbe` reports."""

CALLS = ("datetime.now", "random.random", "time.time", "uuid.uuid4", "os.getpid")
"""What :class:`CallsTheClock` can be told to call."""


@workflow.defn
class ModuleProbe:
    """Returns the ids of the modules it imports in the sandbox."""

    @workflow.run
    async def run(self) -> list[int]:
        """``id()`` of each of :data:`PROBED` as the sandbox sees it."""
        return [id(importlib.import_module(name)) for name in PROBED]


@workflow.defn
class CallsTheClock:
    """Makes the call it is named, the way careless workflow code would."""

    @workflow.run
    async def run(self, call: str) -> str:
        """``call``: one of :data:`CALLS`."""
        return str(_call(call))


def _call(name: str) -> Any:
    if name == "datetime.now":
        return datetime.now()  # noqa: DTZ005, TID251 - the call under test
    if name == "random.random":
        return random.random()
    if name == "time.time":
        return time.time()
    if name == "uuid.uuid4":
        return uuid.uuid4()
    return os.getpid()
