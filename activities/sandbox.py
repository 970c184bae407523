"""Sandbox activities: every phase that touches an attempt's container.

Each runs on the worker that owns the container (its host task queue, learned from
``claim_host``), so a container's work never lands on another machine's Docker. A host
admits at most ``max_sandboxes`` attempts at once (:mod:`durabench.sandbox.docker.capacity`).
Phases are idempotent where a retry can repeat them: the container name is deterministic,
so ``provision_sandbox`` re-attaches and ``teardown_sandbox`` tolerates absence.
Blocking work (tar, diff, classification) runs in threads so heartbeats keep flowing.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

import docker
from temporalio import activity
from temporalio.exceptions import ApplicationError, ApplicationErrorCategory

from activities.heartbeat import heartbeating
from durabench.accounts import (
    account_env,
    account_secrets,
    cooldown_until,
    find_account,
    load_accounts,
)
from durabench.agents import Agent, AgentContext, agent_secret_env, get_agent, read_events
from durabench.classify import classify
from durabench.configs import (
    all_configs,
    dockerfile_for,
    get_config,
    instruction_for,
    mcp_config_json,
    mcp_env,
    missing_mcp_env,
)
from durabench.errors import AccountError, RewardFileMissing, RewardParseError, SandboxError
from durabench.logs import get_logger
from durabench.models import (
    AgentRunOutput,
    AttemptRef,
    ClassifyAttemptInput,
    ClassifyInput,
    HostClaim,
    PreparedImage,
    ProvisionInput,
    ProvisionOutput,
    TaskSpec,
    Verdict,
    VerifyOutput,
)
from durabench.paths import RunPaths, SandboxPaths
from durabench.sandbox import (
    DockerSandbox,
    SandboxSpec,
    docker_client,
    ensure_agent_image,
    ensure_image,
)
from durabench.sandbox.detached import run_step, wrap_step
from durabench.sandbox.docker.capacity import (
    HOST_LABEL,
    PLACEMENT_LABEL,
    HostCapacity,
    attempt_key,
)
from durabench.sandbox.docker.tarball import pack, unpack
from durabench.secrets import scrub_text, scrub_tree, secret_values
from durabench.settings import Settings
from durabench.tasks import load_task
from durabench.workspace_diff import diff_snapshots

__all__ = ["SandboxActivities"]

_BEFORE_SNAPSHOT = ".workspace-before.tar"
_STDERR_TAIL = 4000
"""Characters of the agent's stderr the classifier reads (its last words)."""

log = get_logger("durabench.sandbox")


class SandboxActivities:
    """Container phases; built in ``worker.py`` with its settings and host task queue."""

    def __init__(self, settings: Settings, host_queue: str) -> None:
        self.settings = settings
        self.host_queue = host_queue
        self.paths = SandboxPaths()
        self._client: docker.DockerClient | None = None
        self._capacity: HostCapacity | None = None
        self._account_secrets: set[str] = set()

    @property
    def client(self) -> docker.DockerClient:
        """The Docker client, connected on first use."""
        if self._client is None:
            self._client = docker_client()
        return self._client

    @property
    def capacity(self) -> HostCapacity:
        """This host's admission of attempts."""
        if self._capacity is None:
            host, limit = self.settings.host_id, self.settings.max_sandboxes
            state = self.settings.home / "hosts" / f"{host}.reservations.json"
            self._capacity = HostCapacity(self.client, host, limit, state)
        return self._capacity

    def _attempt_dir(self, ref: AttemptRef) -> Path:
        run = RunPaths.for_run(self.settings.runs_dir, ref.run_id)
        path = run.attempt(ref.task.task_id, ref.lane, ref.attempt)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _sandbox(
        self, ref: AttemptRef, image: str = "", mounts: dict[str, str] | None = None
    ) -> DockerSandbox:
        needs_network = get_agent(ref.agent, ref.agent_options).needs_network
        spec = SandboxSpec(
            name=ref.container_name,
            image=image or "unused",
            labels={
                **ref.labels,
                HOST_LABEL: self.settings.host_id,
                PLACEMENT_LABEL: str(ref.placement),
            },
            network=self.settings.sandbox_network if needs_network else "none",
            memory_mb=self.settings.sandbox_memory_mb,
            cpus=self.settings.sandbox_cpus,
            pids_limit=self.settings.sandbox_pids,
            mounts=mounts or {},
        )
        return DockerSandbox(spec, client=self.client)

    def _context(self, ref: AttemptRef, task: TaskSpec) -> tuple[Agent, AgentContext]:
        config = get_config(ref.lane)
        mcp = config.mcp
        ctx = AgentContext(
            task=task,
            model=ref.model,
            lane=ref.lane,
            attempt=ref.attempt,
            paths=self.paths,
            has_mcp_config=mcp is not None,
            mcp=mcp,
            mcp_url=os.environ.get(mcp.url_env, "") if mcp and mcp.url_env else "",
        )
        return get_agent(ref.agent, ref.agent_options), ctx

    def _secrets(self) -> tuple[str, ...]:
        """Every secret value known here: agent keys, MCP tokens, and account secrets.

        Never raises: an accounts file that turned invalid, or dropped an account, must
        not stop scrubbing, so every account secret this worker has seen stays known.
        """
        try:
            accounts = load_accounts(self.settings.accounts_file)
            self._account_secrets.update(account_secrets(accounts))
        except AccountError as exc:
            log.error("accounts file unreadable; scrubbing the secrets known before", error=exc)
        known = secret_values(all_configs(), os.environ, agent_secret_env())
        return tuple(sorted({*known, *self._account_secrets}, key=len, reverse=True))

    @activity.defn(name="get_host_queue")
    async def get_host_queue(self) -> str:
        """This worker's own task queue (attempts from before ``claim_host``)."""
        return self.host_queue

    @activity.defn(name="claim_host")
    async def claim_host(self, ref: AttemptRef) -> HostClaim:
        """Admit the attempt to this host if it has room; its container work comes here.

        A full host refuses with a retryable error: the retry goes to whichever worker
        polls next, so the attempt lands on a host with room, or waits for one.
        """
        if not await asyncio.to_thread(self.capacity.claim, attempt_key(ref.labels)):
            raise ApplicationError(
                f"host {self.settings.host_id} is running its {self.capacity.limit} "
                "attempts (DURABENCH_MAX_SANDBOXES); another host or a later try takes it",
                type="HostFull",
                category=ApplicationErrorCategory.BENIGN,
            )
        return HostClaim(
            host_id=self.settings.host_id,
            queue=self.host_queue,
            host_timeout_sec=self.settings.host_timeout_sec,
        )

    @activity.defn(name="prepare_image")
    async def prepare_image(self, ref: AttemptRef) -> PreparedImage:
        """Build (or find cached) the task image for the lane's Dockerfile variant."""
        task = load_task(ref.task.task_dir)
        dockerfile = dockerfile_for(get_config(ref.lane), task)
        build_log = self._attempt_dir(ref) / "build.log"
        install = get_agent(ref.agent, ref.agent_options).install_spec()
        async with heartbeating(f"building {task.task_id} {dockerfile}"):
            image = await asyncio.to_thread(
                ensure_image, self.client, task, dockerfile, self.settings.base_image, build_log
            )
            if install is not None:
                image = await asyncio.to_thread(
                    ensure_agent_image,
                    self.client,
                    image,
                    install,
                    self.settings.agent_tools_dir,
                    build_log,
                )
        log.debug("image ready", image=image, dockerfile=dockerfile, **ref.labels)
        return PreparedImage(image=image, dockerfile=dockerfile)

    @activity.defn(name="provision_sandbox")
    async def provision_sandbox(self, data: ProvisionInput) -> ProvisionOutput:
        """Start the container; place instruction, MCP config and agent files; set it up."""
        ref, paths = data.ref, self.paths
        task = load_task(ref.task.task_dir)
        config = get_config(ref.lane)
        agent, ctx = self._context(ref, task)
        sandbox = self._sandbox(ref, data.image, mounts=agent.mounts(ctx))
        async with heartbeating(f"provisioning {ref.container_name}"):
            container_id = await sandbox.start()
            await asyncio.to_thread(self.capacity.provisioned, attempt_key(ref.labels))
            await sandbox.exec(["mkdir", "-p", str(paths.agent_logs)])
            await sandbox.exec(["chmod", "777", str(paths.agent_logs)])
            instruction = instruction_for(config, task)
            text = (Path(task.task_dir) / instruction).read_text()
            await sandbox.write_file(str(paths.instruction), text)
            if config.mcp is not None:
                await sandbox.write_file(str(paths.mcp_config), mcp_config_json(config.mcp))
            for upload in agent.uploads(ctx):
                if upload.host_path.is_dir():
                    await sandbox.upload_dir(upload.host_path, upload.dest)
                else:
                    await sandbox.write_file(upload.dest, upload.host_path.read_bytes())
            for path, text in agent.config_files(ctx).items():
                await sandbox.write_file(path, text)
            for step in agent.setup_commands(ctx):
                done = await sandbox.exec(["sh", "-c", step.command], user=step.user)
                if done.exit_code != 0:
                    raise SandboxError(
                        f"setting up {ref.agent} in {ref.container_name} failed "
                        f"(exit {done.exit_code}): {(done.stderr or done.stdout).strip()[:400]}"
                    )
            before = self._attempt_dir(ref) / _BEFORE_SNAPSHOT
            if not before.exists():
                files = await sandbox.read_tree(str(paths.workspace))
                tar = await asyncio.to_thread(
                    pack, ((PurePosixPath("workspace", k), v) for k, v in files.items())
                )
                before.write_bytes(tar)
        log.debug("container started", container=ref.container_name, **ref.labels)
        return ProvisionOutput(
            container_id=container_id,
            instruction_file=instruction,
            mcp_config=config.mcp is not None,
            mcp_env_missing=missing_mcp_env(config.mcp, os.environ) if config.mcp else (),
        )

    @activity.defn(name="run_agent")
    async def run_agent(self, ref: AttemptRef) -> AgentRunOutput:
        """Run the agent's commands detached, within the time limit; wait for them to end.

        A retry of this activity (the worker died) re-attaches to steps that already started
        instead of running them again; their output is the agent's transcript (stdout).
        """
        task = load_task(ref.task.task_dir)
        agent, ctx = self._context(ref, task)
        secrets = self._agent_env(agent, ctx, ref.account)
        sandbox = self._sandbox(ref)
        logs = self.paths.agent_logs
        out = f">>{logs}/stdout.txt 2>>{logs}/stderr.txt"
        budget, wall, exit_code, timed_out, reattached = (
            ref.task.agent_timeout_sec,
            0.0,
            0,
            False,
            False,
        )
        async with heartbeating(f"agent running: {task.task_id} {ref.lane}"):
            for n, step in enumerate(agent.run_commands(ctx)):
                script = wrap_step(step.command, logs, n, budget - wall, out)
                end, again = await run_step(
                    sandbox,
                    script,
                    logs,
                    n,
                    cwd=str(self.paths.workspace),
                    env={**step.env, **secrets},
                    user=step.user,
                )
                reattached = reattached or again
                wall += end.elapsed_s
                exit_code, timed_out = end.exit_code, end.timed_out
                if exit_code != 0 or timed_out:
                    break
            files_changed = await self._write_submission(ref, sandbox)
        log.debug("agent ended", exit_code=exit_code, timed_out=timed_out, **ref.labels)
        return AgentRunOutput(
            exit_code=exit_code,
            timed_out=timed_out,
            files_changed=files_changed,
            wall_seconds=wall,
            reattached=reattached,
        )

    def _agent_env(self, agent: Agent, ctx: AgentContext, account: str | None) -> dict[str, str]:
        """The agent's variables from the worker's environment, read at the last moment.

        Its settings, and its key: the leased account's secret, or with no account the
        worker's own; on an MCP lane the endpoint and token.

        Raises:
            AccountError: the account, or its secret, is not on this worker.
        """
        names = (*agent.setting_env, *(() if account else agent.secret_env))
        env = {name: os.environ[name] for name in names if os.environ.get(name)}
        if account is not None:
            path = self.settings.accounts_file
            env |= account_env(find_account(load_accounts(path), account, path))
        if ctx.mcp is not None and agent.uses_mcp:
            values = mcp_env(ctx.mcp, os.environ)
            env |= values | agent.derived_env(ctx, values)
        return env

    async def _write_submission(self, ref: AttemptRef, sandbox: DockerSandbox) -> int:
        """Diff the workspace against its snapshot from before the agent: submission.patch."""
        target = self._attempt_dir(ref)
        before_file = target / _BEFORE_SNAPSHOT
        before = unpack(before_file.read_bytes()) if before_file.exists() else {}
        after = await sandbox.read_tree(str(self.paths.workspace))
        diff = await asyncio.to_thread(diff_snapshots, before, after)
        (target / "submission.patch").write_text(scrub_text(diff.patch, self._secrets()))
        return len(diff.files_changed)

    @activity.defn(name="verify")
    async def verify(self, ref: AttemptRef) -> VerifyOutput:
        """Reset the verifier's directory, build if the task says how, run the tests."""
        task = load_task(ref.task.task_dir)
        sandbox, out_dir = self._sandbox(ref), self.paths.verifier_logs
        async with heartbeating(f"verifying {task.task_id} {ref.lane}"):
            # The agent may have planted a reward file: the verifier starts from nothing.
            await sandbox.exec(["sh", "-c", f"rm -rf {out_dir} && mkdir -p {out_dir}"], user="0")
            await sandbox.upload_dir(Path(task.task_dir) / "tests", str(self.paths.tests))
            build_failed = False
            if task.build_command:
                built = await sandbox.exec(
                    ["sh", "-c", f"({task.build_command}) >{out_dir}/build.txt 2>&1"],
                    cwd=str(self.paths.workspace),
                    timeout_s=ref.task.verifier_timeout_sec,
                )
                build_failed = built.exit_code != 0
            result = await sandbox.exec(
                ["sh", "-c", f"({task.verifier_command}) >{out_dir}/verifier-stdout.txt 2>&1"],
                cwd=str(self.paths.workspace),
                timeout_s=ref.task.verifier_timeout_sec,
            )
        reward = await self._read_reward(sandbox, task, result.timed_out)
        log.debug("verified", reward=reward, build_failed=build_failed, **ref.labels)
        return VerifyOutput(reward=reward, build_failed=build_failed)

    async def _read_reward(self, sandbox: DockerSandbox, task: TaskSpec, timed_out: bool) -> float:
        try:
            text = (await sandbox.read_file(str(self.paths.reward))).strip()
        except FileNotFoundError:
            why = "timed out" if timed_out else "ended"
            raise RewardFileMissing(
                f"the verifier of {task.task_id} {why} without writing {self.paths.reward}; "
                "its output is in the attempt's verifier/ directory"
            ) from None
        try:
            return float(text)
        except ValueError:
            raise RewardParseError(
                f"{self.paths.reward} of {task.task_id} holds {text[:80]!r}, not a number"
            ) from None

    @activity.defn(name="classify_attempt")
    async def classify_attempt(self, data: ClassifyAttemptInput) -> Verdict:
        """Read the transcript in the sandbox and classify the attempt's exit."""
        ref = data.ref
        agent, ctx = self._context(ref, load_task(ref.task.task_dir))
        sandbox = self._sandbox(ref)
        stdout = await self._read_log(sandbox, "stdout.txt")
        secrets = self._secrets()
        stderr = scrub_text(await self._read_log(sandbox, "stderr.txt"), secrets)
        facts = ClassifyInput(
            events=tuple(read_events(stdout.splitlines())),
            transcript_format=agent.transcript_format(ctx),
            requested_model=ref.model if agent.transcript_format(ctx) else "",
            exit_code=data.exit_code,
            timed_out=data.timed_out,
            wall_seconds=data.wall_seconds,
            files_changed=data.files_changed,
            build_failed=data.build_failed,
            stderr_tail=stderr[-_STDERR_TAIL:],
        )
        verdict = await asyncio.to_thread(classify, facts)
        return verdict.model_copy(
            update={
                "reason": scrub_text(verdict.reason, secrets),
                "last_message": scrub_text(verdict.last_message, secrets),
                "cap_resets_at": self._cap_resets_at(verdict, stdout, stderr),
            }
        )

    def _cap_resets_at(self, verdict: Verdict, stdout: str, stderr: str) -> datetime | None:
        """When a usage cap resets, as the agent's message names it, else after the default.

        The session's last lines hold the message (the transcript's error event, or stderr
        for a CLI that never began one).
        """
        if verdict.exit_class != "infra_usage_cap":
            return None
        said = "\n".join((verdict.reason, stdout[-_STDERR_TAIL:], stderr[-_STDERR_TAIL:]))
        default = timedelta(seconds=self.settings.usage_cap_cooldown_sec)
        now = datetime.fromtimestamp(time.time(), tz=UTC)
        return cooldown_until(said, now, default)

    async def _read_log(self, sandbox: DockerSandbox, name: str) -> str:
        try:
            return await sandbox.read_file(str(self.paths.agent_logs / name))
        except FileNotFoundError:
            return ""

    @activity.defn(name="collect_artifacts")
    async def collect_artifacts(self, ref: AttemptRef) -> None:
        """Copy logs, instruction and MCP config to the attempt directory, secrets scrubbed."""
        sandbox = self._sandbox(ref)
        target = self._attempt_dir(ref)
        async with heartbeating(f"collecting {ref.container_name}"):
            for src, name in (
                (self.paths.agent_logs, "agent"),
                (self.paths.verifier_logs, "verifier"),
                (self.paths.durabench, "durabench"),
            ):
                await sandbox.download_dir(str(src), target / name)
            await asyncio.to_thread(scrub_tree, target, self._secrets())

    @activity.defn(name="teardown_sandbox")
    async def teardown_sandbox(self, ref: AttemptRef) -> None:
        """Remove the container (absent is fine); the attempt's claim on this host ends."""
        await self._sandbox(ref).stop(delete=True)
        await asyncio.to_thread(self.capacity.release, attempt_key(ref.labels))
        log.debug("container removed", container=ref.container_name, **ref.labels)
