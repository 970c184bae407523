"""Sandbox activities: every phase of an attempt that touches its container.

The phases themselves are :class:`durabench.attempt.Attempt`'s; here they get what only a
worker has: heartbeats, this host's admission of attempts
(:mod:`durabench.sandbox.docker.capacity`), its sandbox backend and settings, the secrets
it knows. Each runs on the worker that owns the container (its host task queue, learned
from ``claim_host``), so a container's work never lands on another machine's Docker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import docker
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from activities.backends import gateway_url_for_sandboxes, make_sandbox, remote, remote_image
from activities.boundary import KnownSecrets, scrubbed
from activities.grant_lease import renewing, spend_terms
from activities.heartbeat import AGENT_BEAT_S, heartbeating
from activities.host_admission import HostAdmission, floor_mib
from activities.run_cancel import unless_run_cancelled
from durabench.attempt import (
    AgentLogs,
    Attempt,
    AttemptLimits,
    AttemptSetup,
    GatewayAccess,
    WorkspaceCache,
    agent_env,
    remove_sandbox,
)
from durabench.attempt.inputs import check_attempt_inputs
from durabench.attempt.verify_slots import VerifySlots
from durabench.configs import dockerfile_for
from durabench.errors import NON_RETRYABLE
from durabench.gateway import (
    PROVIDERS,
    Grant,
    ModelGateway,
    ensure_gateway_network,
    read_ledger,
)
from durabench.logs import get_logger
from durabench.models.attempt import (
    AgentRunOutput,
    AttemptRef,
    ClassifyAttemptInput,
    CollectOutput,
    FinishInput,
    FinishOutput,
    HostClaim,
    PreparedImage,
    ProvisionOutput,
    VerifyOutput,
)
from durabench.models.config import ModelApi
from durabench.models.verdict import Verdict
from durabench.results.store import push
from durabench.sandbox import (
    Sandbox,
    SandboxSpec,
    ensure_agent_image,
    ensure_image,
    image_id,
    shared_docker_client,
)
from durabench.sandbox.docker.capacity import (
    FLOOR_LABEL,
    HOST_LABEL,
    PLACEMENT_LABEL,
    attempt_key,
)
from durabench.sandbox.docker.cleanup import DEPLOYMENT_LABEL
from durabench.settings.paths import RunPaths, SandboxPaths
from durabench.settings.values import Settings

__all__ = ["SandboxActivities"]

log = get_logger("durabench.sandbox")

_LEDGER = "gateway.jsonl"
_LEASE_SLACK_S = 60.0
"""A grant's lease beyond the host timeout: the heartbeat timeout and some, so it runs out
only as the attempt moves to another host."""
"""The gateway's record of the attempt's model requests, in its directory on the host."""


def _log_volumes(paths: SandboxPaths, size_mb: int) -> dict[str, int]:
    """A volume each for the agent's logs, its output, the markers and the verifier.

    Filling one leaves the others their room: an agent that fills its logs cannot keep its
    end from being recorded, nor the verifier from writing the reward.
    """
    return {
        str(paths.logs): size_mb,
        str(paths.steps): 16,
        str(paths.output): size_mb,
        str(paths.verifier_logs): size_mb,
    }


_VERIFY_MARGIN_S = 60.0


def _now() -> datetime:
    return datetime.fromtimestamp(time.time(), tz=UTC)


def _spare_before_verifying(ref: AttemptRef) -> float:
    """How long verify may wait for a slot and still give the verifier its whole time.

    That is its start-to-close timeout less the verifier's time limit, a minute to spare.
    """
    info = activity.info()
    if info.start_to_close_timeout is None:
        return 0.0
    ends = info.started_time.timestamp() + info.start_to_close_timeout.total_seconds()
    return max(0.0, ends - time.time() - ref.task.verifier_timeout_sec - _VERIFY_MARGIN_S)


class SandboxActivities:
    """Container phases; built in ``worker.py`` with its settings and host task queue."""

    def __init__(
        self,
        settings: Settings,
        host_queue: str,
        deployment: str = "",
        client: Client | None = None,
    ) -> None:
        self.settings = settings
        self.host_queue = host_queue
        self.deployment = deployment
        self.admission = HostAdmission(settings, client)  # the quota too, with a client
        self.verify_slots = VerifySlots(settings.max_verifiers)
        self.secrets = KnownSecrets(settings.accounts_file)
        self._limits = AttemptLimits.of(
            settings.collect_file_mb, settings.collect_total_mb, settings.collect_files
        )
        self.gateway = ModelGateway.of(settings, os.environ)
        self._workspaces = WorkspaceCache(settings.workspace_cache_dir)

    @property
    def client(self) -> docker.DockerClient:
        """This process's Docker client, shared with its sandboxes."""
        return shared_docker_client()

    def _attempt_dir(self, ref: AttemptRef) -> Path:
        run = RunPaths.for_run(self.settings.runs_dir, ref.run_id)
        path = run.attempt(ref.task.task_id, ref.lane, ref.attempt)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _attempt(
        self, ref: AttemptRef, image: str = "", environ: Mapping[str, str] = os.environ
    ) -> Attempt:
        """The attempt's lifecycle over this host's sandbox backend, its input checked.

        ``image`` is given to start the sandbox (provision); later phases reach the one
        that exists, by its name.

        Raises:
            ConfigError: the input names a task, mount or version this worker refuses.
        """
        setup, mounts = check_attempt_inputs(ref, self.settings, environ)
        spec = SandboxSpec(
            name=ref.container_name,
            image=image,
            labels={
                **ref.labels,
                HOST_LABEL: self.settings.host_id,
                PLACEMENT_LABEL: str(ref.placement),
                FLOOR_LABEL: f"{floor_mib(ref, self.settings):g}",
                DEPLOYMENT_LABEL: self.deployment,
            },
            network=self.settings.gateway_network if setup.agent.needs_network else "none",
            memory_mb=self.settings.sandbox_memory_mb,
            cpus=self.settings.sandbox_cpus,
            pids_limit=self.settings.sandbox_pids,
            mounts=mounts,
            tmpfs=_log_volumes(setup.ctx.paths, self.settings.sandbox_logs_mb),
            disk_gb=self.settings.sandbox_disk_gb,
        )
        sandbox = make_sandbox(self.settings, spec)
        return Attempt(
            ref,
            setup,
            sandbox,
            store=self._attempt_dir(ref),
            secrets=self.secrets(),
            limits=self._limits,
            workspaces=None if remote(self.settings) else self._workspaces,
        )

    def _named(self, ref: AttemptRef) -> Sandbox:
        """The attempt's sandbox on this worker's backend, known by its name alone."""
        return make_sandbox(self.settings, SandboxSpec(name=ref.container_name))

    async def _gateway_url(self) -> str:
        """The gateway as this worker's sandboxes reach it (its public URL for remote ones)."""
        return gateway_url_for_sandboxes(self.settings, await self.gateway.url())

    @activity.defn(name="claim_host")
    @scrubbed
    async def claim_host(self, ref: AttemptRef) -> HostClaim:
        """Admit the attempt to this host if it and the deployment have room.

        A full host or deployment refuses with a retryable error: the retry goes to
        whichever worker polls next, so the attempt lands on a host with room, or waits.
        """
        await self.admission.claim(attempt_key(ref.labels), floor_mib(ref, self.settings))
        return HostClaim(
            host_id=self.settings.host_id,
            queue=self.host_queue,
            host_timeout_sec=self.settings.host_timeout_sec,
        )

    async def _image(self, ref: AttemptRef, setup: AttemptSetup) -> PreparedImage:
        """Build (or find cached) the task image for the lane's Dockerfile variant.

        The build is bounded by the task's ``build_timeout_sec`` (the daemon's build is
        stopped past it); the caller heartbeats meanwhile.
        """
        task = setup.task
        dockerfile = dockerfile_for(setup.config, task)
        build_log = self._attempt_dir(ref) / "build.log"
        install = setup.agent.install_spec()
        if remote(self.settings):  # the service builds it; no local daemon needed
            return await asyncio.to_thread(
                remote_image, self.settings, task, dockerfile, install, build_log
            )
        task_image = await asyncio.to_thread(
            ensure_image, self.client, task, dockerfile, self.settings.base_image, build_log
        )
        image = task_image
        if install is not None:
            image = await asyncio.to_thread(
                ensure_agent_image,
                self.client,
                task_image,
                install,
                self.settings.agent_tools_dir,
                build_log,
            )
        task_id = await asyncio.to_thread(image_id, self.client, task_image)
        agent_id = task_id  # the agent runs in the task image unless a CLI was installed
        if image != task_image:
            agent_id = await asyncio.to_thread(image_id, self.client, image)
        log.debug("image ready", image=image, dockerfile=dockerfile, **ref.labels)
        return PreparedImage(
            image=image, dockerfile=dockerfile, task_image_id=task_id, agent_image_id=agent_id
        )

    @activity.defn(name="provision_sandbox")
    @scrubbed
    async def provision_sandbox(self, ref: AttemptRef) -> ProvisionOutput:
        """Build or find the image; start the container; place the lane's files; set it up.

        One activity, though the build may take the task's whole build limit and the start
        takes seconds: every attempt but a task's first finds its image built, and a second
        activity would cost each a workflow task. Its start-to-close is the build limit and
        some minutes (each Docker request has its own client timeout); a lost worker is
        noticed sooner, by the heartbeat, which beats throughout.

        Cancelled, it undoes its own work before it reports so: the container may still be
        in the making (Docker calls run in threads), and a teardown that ran before it
        appeared would leave it behind. The sandbox of an agent that calls a model joins
        the gateway's network, made here if absent: on a fresh host, or after the network
        was removed, the gateway (which also makes it) has not started yet.
        """
        setup, _ = check_attempt_inputs(ref, self.settings, os.environ)
        await asyncio.to_thread(
            self.admission.capacity.arrived, attempt_key(ref.labels)
        )  # builds may last
        async with heartbeating(f"image of {ref.task.task_id} for {ref.lane}"):
            image = await self._image(ref, setup)
        ready_at = _now()
        environ: Mapping[str, str] = os.environ
        mcp = setup.ctx.mcp
        if setup.agent.needs_network and mcp is not None and mcp.url_env:
            # Configs that cannot expand ${VAR} name the endpoint: the gateway's.
            environ = {**os.environ, mcp.url_env: f"{await self._gateway_url()}/mcp"}
        attempt = self._attempt(ref, image.image, environ)
        async with heartbeating(f"provisioning {ref.container_name}"):
            if setup.agent.needs_network and not remote(self.settings):
                network = self.settings.gateway_network
                await asyncio.to_thread(ensure_gateway_network, self.client, network)
            provisioning = asyncio.ensure_future(attempt.provision(os.environ))
            try:
                out = await asyncio.shield(provisioning)
            except asyncio.CancelledError:
                await self._undo_provision(ref, provisioning)
                raise
            await asyncio.to_thread(self.admission.capacity.provisioned, attempt_key(ref.labels))
        log.debug("container started", container=ref.container_name, **ref.labels)
        return out.model_copy(update={"image": image, "image_ready_at": ready_at})

    async def _undo_provision(self, ref: AttemptRef, provisioning: asyncio.Future[Any]) -> None:
        """Let a cancelled provision's Docker work end, then remove what it made."""
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await provisioning
        await remove_sandbox(self._named(ref))
        log.debug("cancelled provision undone", container=ref.container_name, **ref.labels)

    @activity.defn(name="run_agent")
    @scrubbed
    async def run_agent(self, ref: AttemptRef) -> AgentRunOutput:
        """Run the agent's commands within the time limit, or re-attach to them.

        The agent's key is read here, at the last moment, and handed to its process only.
        """
        attempt = self._attempt(ref)
        agent = attempt.agent
        provider = agent.model_api
        access = await self._grant(ref, attempt.setup, provider) if provider else None
        env = agent_env(
            agent,
            attempt.ctx,
            gateway=access,
            base_path=f"/{provider}{PROVIDERS[provider].base_path}" if provider else "",
            environ=os.environ,
        )
        await unless_run_cancelled()  # the run's cancel may not have reached the attempt yet
        async with (
            heartbeating(f"agent running: {ref.task.task_id} {ref.lane}", AGENT_BEAT_S),
            renewing(self.gateway.store, ref.container_name),
        ):
            out = await attempt.run_agent(env)
        self.gateway.store.revoke(ref.container_name)
        log.debug("agent ended", exit_code=out.exit_code, timed_out=out.timed_out, **ref.labels)
        return out

    async def _grant(
        self, ref: AttemptRef, setup: AttemptSetup, provider: ModelApi
    ) -> GatewayAccess:
        """Make the attempt's placeholder key good at this host's gateway for ``provider``.

        The same key on a retry or after a worker restart: it is derived from the attempt.
        """
        agent, mcp = setup.agent, setup.ctx.mcp
        grant = Grant(
            attempt=ref.container_name,
            agent=ref.agent.name,
            provider=provider,
            model=ref.agent.model,
            auxiliary_models=agent.auxiliary_models,
            account=ref.account,
            ledger=str(self._attempt_dir(ref) / _LEDGER),
            budget_tokens=ref.budget_tokens,
            spend=spend_terms(ref, provider),
            mcp=mcp if mcp is not None and mcp.url_env and agent.uses_mcp else None,
            lease_sec=self.settings.host_timeout_sec + _LEASE_SLACK_S,
        )
        url = await self._gateway_url()
        token = self.gateway.store.grant(grant)
        return GatewayAccess(url, token, self.gateway.key_variable(grant))

    @activity.defn(name="verify")
    @scrubbed
    async def verify(self, ref: AttemptRef) -> VerifyOutput:
        """Run the task's tests on what the agent left."""
        async with (
            heartbeating(f"verifying {ref.task.task_id} {ref.lane}"),
            self.verify_slots.slot(_spare_before_verifying(ref)) as within,
        ):
            if not within:
                log.warning("verifying over the host's verifier limit", **ref.labels)
            out = await self._attempt(ref).verify()
        log.debug("verified", reward=out.reward, build_failed=out.build_failed, **ref.labels)
        return out

    async def _classify(
        self, attempt: Attempt, data: ClassifyAttemptInput, logs: AgentLogs | None = None
    ) -> Verdict:
        """The verdict, with the gateway's ledger of the attempt's model traffic."""
        await self.gateway.settle()  # a gateway that died has written its outage
        ledger = self._attempt_dir(data.ref) / _LEDGER
        self.gateway.store.revoke(
            data.ref.container_name
        )  # its session is over, re-attached or not
        if not await self.gateway.drained(ledger):  # requests it left in flight are ledgered
            log.warning(
                "the gateway still serves the ended attempt; its ledger is read now",
                **data.ref.labels,
            )
        return await attempt.classify(
            data,
            metered=await asyncio.to_thread(read_ledger, ledger),
            now=_now(),
            cap_cooldown=timedelta(seconds=self.settings.usage_cap_cooldown_sec),
            cap_ceiling=timedelta(seconds=self.settings.usage_cap_cooldown_max_sec),
            logs=logs,
        )

    async def _collect(self, ref: AttemptRef, attempt: Attempt) -> CollectOutput:
        """Copy logs, instruction and MCP config to the attempt directory, secrets scrubbed."""
        async with heartbeating(f"collecting {ref.container_name}"):
            collected = await attempt.collect()
            run = RunPaths.for_run(self.settings.runs_dir, ref.run_id)
            await asyncio.to_thread(push, self.settings, run, self._attempt_dir(ref))
            return collected

    @activity.defn(name="teardown_sandbox")
    @scrubbed
    async def teardown_sandbox(self, ref: AttemptRef) -> None:
        """Remove the container (absent is fine); the attempt's claim on this host ends.

        It needs the attempt's name and nothing else: a task directory gone, or refused
        since, still has its container removed.
        """
        await self._remove(ref)

    async def _remove(self, ref: AttemptRef) -> None:
        """Remove the container, revoke its gateway key, end its claim on this host."""
        await remove_sandbox(self._named(ref))
        self.gateway.store.revoke(ref.container_name)
        await self.admission.release(attempt_key(ref.labels))
        log.debug("container removed", container=ref.container_name, **ref.labels)

    @activity.defn(name="finish_sandbox")
    @scrubbed
    async def finish_sandbox(self, data: FinishInput) -> FinishOutput:
        """Collect the attempt's logs, remove its container, classify it: one round trip.

        These always run together at an attempt's end, so they are one activity: one
        workflow task and one round trip per attempt's end. The removal runs whatever the collect
        did: a collect that fails loses logs, never leaves a container running; only an
        attempt to classify whose transcript could not be read keeps its container, and
        the activity fails and retries (the collect is idempotent). The classification
        reads the copy just collected, on the host (:meth:`Attempt.kept_logs`), so the
        container need not live while it runs.
        """
        ref, facts = data.ref, data.classify
        began, collected, error, logs, unread = _now(), None, "", None, ""
        refused: Exception | None = None
        try:
            try:
                attempt = self._attempt(ref)
            except NON_RETRYABLE as exc:  # refused now: no retry reads more, so no keeping
                refused = exc
                raise
            try:
                collected = await self._collect(ref, attempt)
            except Exception as exc:  # noqa: BLE001 - a failure to copy logs is reported
                error = f"{type(exc).__name__}: {exc}"
                log.warning("collecting artifacts failed", error=error, **ref.labels)
            if facts is not None:  # what the collect did not keep is read in the sandbox
                logs = await attempt.kept_logs()
        except Exception as exc:  # noqa: BLE001 - raised below, once the container is dealt with
            unread = f"{type(exc).__name__}: {exc}"
        finally:
            ended = _now()
            if not (unread and facts is not None) or refused:  # cancelled too
                await self._remove(ref)
        if facts is not None and refused is not None:
            raise refused
        if facts is not None and logs is None:
            raise ApplicationError(
                f"the transcript of {ref.container_name} could not be read ({unread}); the "
                "container is kept and the activity tried again, so the attempt is judged",
                type="TranscriptUnread",
            )
        verdict = None
        if facts is not None and logs is not None:
            async with heartbeating(f"classifying {ref.task.task_id} {ref.lane}"):
                verdict = await self._classify(attempt, facts, logs)
        return FinishOutput(
            collected=collected,
            collect_error=error or unread,
            collect_started_at=began,
            collect_finished_at=ended,
            verdict=verdict,
        )
