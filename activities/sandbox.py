"""Sandbox activities: every phase that touches an attempt's container.

Each runs on the worker that owns the container (its host task queue, learned from
``get_host_queue``), so a container's work never lands on another machine's Docker.
Phases are idempotent where a retry can repeat them: the container name is
deterministic, so ``provision_sandbox`` re-attaches, ``teardown_sandbox`` tolerates absence.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path, PurePosixPath

import docker
from temporalio import activity

from activities.heartbeat import heartbeating
from durabench.agents import AgentContext, get_agent
from durabench.configs import (
    dockerfile_for,
    get_config,
    instruction_for,
    mcp_config_json,
    mcp_env,
    missing_mcp_env,
)
from durabench.errors import RewardFileMissing, RewardParseError
from durabench.logs import get_logger
from durabench.models import (
    AgentRunOutput,
    AttemptRef,
    PreparedImage,
    ProvisionInput,
    ProvisionOutput,
    TaskSpec,
    VerifyOutput,
)
from durabench.paths import RunPaths, SandboxPaths
from durabench.sandbox import DockerSandbox, SandboxSpec, docker_client, ensure_image
from durabench.sandbox.docker.tarball import pack, unpack
from durabench.settings import Settings
from durabench.tasks import load_task
from durabench.workspace_diff import diff_snapshots

__all__ = ["SandboxActivities"]

_BEFORE_SNAPSHOT = ".workspace-before.tar"

log = get_logger("durabench.sandbox")


class SandboxActivities:
    """Container phases; built in ``worker.py`` with its settings and host task queue."""

    def __init__(self, settings: Settings, host_queue: str) -> None:
        self.settings = settings
        self.host_queue = host_queue
        self.paths = SandboxPaths()
        self._client: docker.DockerClient | None = None

    @property
    def client(self) -> docker.DockerClient:
        """The Docker client, connected on first use."""
        if self._client is None:
            self._client = docker_client()
        return self._client

    def _attempt_dir(self, ref: AttemptRef) -> Path:
        run = RunPaths.for_run(self.settings.runs_dir, ref.run_id)
        path = run.attempt(ref.task.task_id, ref.lane, ref.attempt)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _sandbox(self, ref: AttemptRef, image: str = "") -> DockerSandbox:
        spec = SandboxSpec(
            name=ref.container_name,
            image=image or "unused",
            labels=ref.labels,
            network=get_agent(ref.agent).needs_network,
        )
        return DockerSandbox(spec, client=self.client)

    @activity.defn(name="get_host_queue")
    async def get_host_queue(self) -> str:
        """This worker's own task queue, where the attempt's container phases go."""
        return self.host_queue

    @activity.defn(name="prepare_image")
    async def prepare_image(self, ref: AttemptRef) -> PreparedImage:
        """Build (or find cached) the task image for the lane's Dockerfile variant."""
        task = load_task(ref.task.task_dir)
        dockerfile = dockerfile_for(get_config(ref.lane), task)
        build_log = self._attempt_dir(ref) / "build.log"
        async with heartbeating(f"building {task.task_id} {dockerfile}"):
            image = await asyncio.to_thread(
                ensure_image, self.client, task, dockerfile, self.settings.base_image, build_log
            )
        log.info("image ready", image=image, dockerfile=dockerfile, **ref.labels)
        return PreparedImage(image=image, dockerfile=dockerfile)

    @activity.defn(name="provision_sandbox")
    async def provision_sandbox(self, data: ProvisionInput) -> ProvisionOutput:
        """Start the container; place instruction, MCP config and agent files in it."""
        ref, paths = data.ref, self.paths
        task = load_task(ref.task.task_dir)
        config = get_config(ref.lane)
        agent = get_agent(ref.agent)
        sandbox = self._sandbox(ref, data.image)
        container_id = await sandbox.start()
        activity.heartbeat(container_id)
        log.info("container started", container=ref.container_name, **ref.labels)
        logs = [str(paths.agent_logs), str(paths.verifier_logs)]
        await sandbox.exec(["mkdir", "-p", *logs])
        await sandbox.exec(["chmod", "777", *logs])
        instruction = instruction_for(config, task)
        text = (Path(task.task_dir) / instruction).read_text()
        await sandbox.write_file(str(paths.instruction), text)
        if config.mcp is not None:
            await sandbox.write_file(str(paths.mcp_config), mcp_config_json(config.mcp))
        for upload in agent.uploads(task, paths):
            await sandbox.upload_dir(upload.host_dir, upload.dest)
        before = self._attempt_dir(ref) / _BEFORE_SNAPSHOT
        if not before.exists():
            files = await sandbox.read_tree(str(paths.workspace))
            before.write_bytes(pack((PurePosixPath("workspace", k), v) for k, v in files.items()))
        return ProvisionOutput(
            container_id=container_id,
            instruction_file=instruction,
            mcp_config=config.mcp is not None,
            mcp_env_missing=missing_mcp_env(config.mcp, os.environ) if config.mcp else (),
        )

    @activity.defn(name="run_agent")
    async def run_agent(self, ref: AttemptRef) -> AgentRunOutput:
        """Run the agent's commands within the time limit, output to the agent log dir."""
        task = load_task(ref.task.task_dir)
        config = get_config(ref.lane)
        agent = get_agent(ref.agent)
        ctx = AgentContext(task=task, model=ref.model, has_mcp_config=config.mcp is not None)
        secrets = mcp_env(config.mcp, os.environ) if config.mcp else {}
        sandbox = self._sandbox(ref)
        remaining = ref.task.agent_timeout_sec
        logs = self.paths.agent_logs
        exit_code, timed_out = 0, False
        async with heartbeating(f"agent running: {task.task_id} {ref.lane}"):
            for step in agent.run_commands(ctx):
                loop = asyncio.get_running_loop()
                began = loop.time()
                result = await sandbox.exec(
                    ["sh", "-c", f"({step.command}) >>{logs}/stdout.txt 2>>{logs}/stderr.txt"],
                    cwd=str(self.paths.workspace),
                    env={**step.env, **secrets},
                    user=step.user,
                    timeout_s=max(remaining, 1.0),
                )
                remaining -= loop.time() - began
                exit_code, timed_out = result.exit_code, result.timed_out
                if exit_code != 0 or timed_out:
                    break
            files_changed = await self._write_submission(ref, sandbox)
        log.info(
            "agent ended",
            exit_code=exit_code,
            timed_out=timed_out,
            files_changed=files_changed,
            **ref.labels,
        )
        return AgentRunOutput(exit_code=exit_code, timed_out=timed_out, files_changed=files_changed)

    async def _write_submission(self, ref: AttemptRef, sandbox: DockerSandbox) -> int:
        """Diff the workspace against its snapshot from before the agent: submission.patch."""
        target = self._attempt_dir(ref)
        before_file = target / _BEFORE_SNAPSHOT
        before = unpack(before_file.read_bytes()) if before_file.exists() else {}
        after = await sandbox.read_tree(str(self.paths.workspace))
        diff = diff_snapshots(before, after)
        (target / "submission.patch").write_text(diff.patch)
        return len(diff.files_changed)

    @activity.defn(name="verify")
    async def verify(self, ref: AttemptRef) -> VerifyOutput:
        """Copy the tests in, run the verifier, read the reward."""
        task = load_task(ref.task.task_dir)
        sandbox = self._sandbox(ref)
        await sandbox.upload_dir(Path(task.task_dir) / "tests", str(self.paths.tests))
        out = self.paths.verifier_logs / "verifier-stdout.txt"
        async with heartbeating(f"verifying {task.task_id} {ref.lane}"):
            result = await sandbox.exec(
                ["sh", "-c", f"({task.verifier_command}) >{out} 2>&1"],
                cwd=str(self.paths.workspace),
                timeout_s=ref.task.verifier_timeout_sec,
            )
        reward = await self._read_reward(sandbox, task, result.timed_out)
        log.info("verified", reward=reward, **ref.labels)
        return VerifyOutput(reward=reward)

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

    @activity.defn(name="collect_artifacts")
    async def collect_artifacts(self, ref: AttemptRef) -> None:
        """Copy agent and verifier logs, instruction and MCP config to the attempt directory."""
        sandbox = self._sandbox(ref)
        target = self._attempt_dir(ref)
        for src, name in (
            (self.paths.agent_logs, "agent"),
            (self.paths.verifier_logs, "verifier"),
            (self.paths.durabench, "durabench"),
        ):
            await sandbox.download_dir(str(src), target / name)

    @activity.defn(name="teardown_sandbox")
    async def teardown_sandbox(self, ref: AttemptRef) -> None:
        """Remove the container (absent is fine)."""
        await self._sandbox(ref).stop(delete=True)
        log.info("container removed", container=ref.container_name, **ref.labels)
