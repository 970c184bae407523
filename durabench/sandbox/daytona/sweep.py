"""Finding and removing a deployment's Daytona sandboxes by label.

Daytona's organisation may hold other people's sandboxes, and other deployments' of
durabench: only those labelled with this deployment are listed. Which of them are
orphans the sweeper decides (it asks Temporal); this module lists and deletes.
"""

from __future__ import annotations

from daytona import ListSandboxesQuery

from durabench.sandbox.daytona.client import DaytonaOptions, SandboxMissing, call, client_for
from durabench.sandbox.docker.cleanup import DEPLOYMENT_LABEL, LabelledContainer, labelled

__all__ = ["listed_sandboxes", "remove_sandboxes"]


def _state_of(sb: object) -> str:
    state = getattr(sb, "state", None)
    return str(getattr(state, "value", state) or "")


async def listed_sandboxes(options: DaytonaOptions, deployment: str) -> list[LabelledContainer]:
    """The deployment's durabench sandboxes on Daytona, in any state.

    Raises:
        SandboxError: Daytona failed past the retries.
    """
    client = client_for(options)
    query = ListSandboxesQuery(labels={DEPLOYMENT_LABEL: deployment})

    async def every() -> list[LabelledContainer]:
        out = []
        async for sb in client.list(query):
            labels = sb.labels or {}
            if "durabench.run" not in labels or labels.get(DEPLOYMENT_LABEL) != deployment:
                continue
            out.append(labelled(sb.name, _state_of(sb), labels))
        return sorted(out)

    return await call("listing sandboxes", options, every, endpoints="GET /api/sandbox")


async def remove_sandboxes(options: DaytonaOptions, names: list[str]) -> None:
    """Delete the named sandboxes; missing ones are fine.

    Raises:
        SandboxError: Daytona failed past the retries.
    """
    client = client_for(options)
    for name in names:
        try:
            found = await call(f"finding {name}", options, lambda n=name: client.get(n))  # type: ignore[misc]
            await call(f"deleting {name}", options, found.delete)
        except SandboxMissing:
            continue
