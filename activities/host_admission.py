"""Admitting an attempt: a slot of the deployment's quota, then room on this host.

Two bounds, each enforced where it is known: the deployment's sandboxes at once
(``DURABENCH_SANDBOX_QUOTA``, counted by one workflow for every worker and host:
:mod:`activities.sandbox_slots`) and this host's attempts at once
(:class:`~durabench.sandbox.docker.capacity.HostCapacity`). A claim takes both or
neither; the removal of the attempt's sandbox gives both back.
"""

from __future__ import annotations

import asyncio

import docker
from temporalio.client import Client
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.backends import remote
from activities.sandbox_slots import DeploymentSlots, deployment_full
from durabench.agents import agent_class
from durabench.models.attempt import AttemptRef
from durabench.sandbox import shared_docker_client
from durabench.sandbox.docker.capacity import HostCapacity, memory_rule
from durabench.settings.values import Settings, host_memory_mib

__all__ = ["HostAdmission", "floor_mib"]


def floor_mib(ref: AttemptRef, settings: Settings) -> float:
    """The attempt's agent's working set: its sandbox counts at this at least."""
    known = agent_class(ref.agent.name).working_set_mb
    return settings.sandbox_memory_mb / 4 if known is None else float(known)


class HostAdmission:
    """This host's admission of attempts, within the deployment's quota."""

    def __init__(self, settings: Settings, client: Client | None) -> None:
        self.settings = settings
        self.slots = DeploymentSlots(client, settings)
        self._capacity: HostCapacity | None = None

    @property
    def capacity(self) -> HostCapacity:
        """This host's count of attempts (from its daemon's containers when they are local)."""
        if self._capacity is None:
            host, limit = self.settings.host_id, self.settings.max_sandboxes
            state = self.settings.home / "hosts" / f"{host}.reservations.json"
            daemon: docker.DockerClient | None = None
            if not remote(self.settings):
                daemon = shared_docker_client()
            memory = memory_rule(self.settings, host_memory_mib()) if daemon else None
            self._capacity = HostCapacity(daemon, host, limit, state, memory=memory)
        return self._capacity

    async def claim(self, key: str, floor_mib: float | None = None) -> None:
        """Admit attempt ``key``: a deployment slot (if a quota is set), then this host.

        ``floor_mib``: its agent's working set, what its sandbox counts at, at least.

        Raises:
            ApplicationError: ``DeploymentFull`` or ``HostFull`` (retryable, benign): the
                claim is asked again, by whichever worker polls next.
        """
        host = self.settings.host_id
        answer = await self.slots.take(key, host)
        if answer is not None and not answer.granted:
            raise deployment_full(answer)
        if not await asyncio.to_thread(self.capacity.claim, key, floor_mib):
            if answer is not None and not answer.already:  # taken for this claim only
                await self.slots.give_back(key, host)
            raise ApplicationError(
                f"host {host} has no room for another attempt (its memory as measured, "
                f"or DURABENCH_MAX_SANDBOXES {self.capacity.limit}); another host or a "
                "later try takes it",
                type="HostFull",
                category=ApplicationErrorCategory.BENIGN,
            )

    async def release(self, key: str) -> None:
        """The attempt's sandbox is gone from this host: both its claims end."""
        await asyncio.to_thread(self.capacity.release, key)
        await self.slots.give_back(key, self.settings.host_id)
