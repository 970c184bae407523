"""A run id given again: the run it names carries on only if asked for the same thing.

``starter run --run-id X`` with a run ``X`` still running resumes it here; a resumed run
keeps its own plan, so different flags would be dropped silently. They are refused,
with what differs, unless ``--resume`` says to carry on with the run as it is.
"""

from __future__ import annotations

from typing import Any

from temporalio.client import Client, WorkflowHandle

from durabench.errors import ConfigError
from durabench.models.run import RunRequest
from durabench.models.suite_run import SuiteRunInput

__all__ = ["check_same_request", "differences", "started_request"]


async def started_request(client: Client, handle: WorkflowHandle[Any, Any]) -> RunRequest:
    """The request the run was started with: the input of its first history event.

    After a continue-as-new, the latest run's input carries the same request.

    Raises:
        ConfigError: the run's history has no start event (it is not a durabench run).
    """
    async for event in handle.fetch_history_events(page_size=1):
        payloads = event.workflow_execution_started_event_attributes.input.payloads
        [data] = await client.data_converter.decode(payloads, [SuiteRunInput])
        if isinstance(data, SuiteRunInput):
            return data.request
        break
    raise ConfigError(f"workflow {handle.id} is not a durabench run; choose another --run-id")


_NOT_FLAGS = frozenset({"approved_by"})
"""Fields that say who ran the command, not what the run is: never a difference."""


_UNSET = {"parallel": "derived"}
"""How a field left unset reads, where its absence means something (the plan derives it)."""


def _value(request: RunRequest, name: str) -> object:
    value = getattr(request, name)
    return _UNSET.get(name, value) if value is None else value


def differences(there: RunRequest, here: RunRequest) -> list[str]:
    """``"<field> <value there> there, <value here> here"`` for each field that differs."""
    return [
        f"{name.replace('_', ' ')} {_value(there, name)} there, {_value(here, name)} here"
        for name in RunRequest.model_fields
        if name not in _NOT_FLAGS and getattr(there, name) != getattr(here, name)
    ]


async def check_same_request(
    client: Client, handle: WorkflowHandle[Any, Any], request: RunRequest
) -> None:
    """Refuse to resume a running run asked for with other flags.

    Raises:
        ConfigError: a flag differs; the message lists each, and the ways on.
    """
    differ = differences(await started_request(client, handle), request)
    if differ:
        raise ConfigError(
            f"run {request.run_id} already runs with other flags: {'; '.join(differ)}. "
            "It keeps its own plan: add --resume to carry on with it as it is, or choose "
            "another --run-id for a run of these flags"
        )
