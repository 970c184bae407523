"""One attempt in its sandbox, phase by phase: the lifecycle read top to bottom.

::

    provision   start the sandbox; place instruction, MCP config and agent files; set up;
                snapshot the workspace as it was before the agent
    run_agent   the agent's commands, detached and within the time limit; the diff
    verify      the task's tests, from a clean verifier directory; the reward
    classify    the transcript and the facts, read into an exit class
    collect     logs and files to the attempt's directory on the host, secrets scrubbed
    remove      remove the sandbox (absent is fine): :func:`remove_sandbox`

Each phase is one Temporal activity (``activities/sandbox.py`` adds heartbeats and host
admission), so each is idempotent where a retry can repeat it: the sandbox's name is
deterministic, a started agent step is re-attached to, not run again.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path, PurePosixPath

from durabench.accounts import account_cooldown
from durabench.agents import (
    ExecInput,
    iter_events,
    lines_of,
    plain_version,
    transcript_version,
)
from durabench.agents.dialects import transcript_facts
from durabench.atomic import atomic_write
from durabench.attempt.kept import AgentLogs, keep_files, keep_trajectory, tail_of
from durabench.attempt.limits import AttemptLimits
from durabench.attempt.resisted import as_resisted, resisted, stop_agent
from durabench.attempt.setup import AttemptSetup
from durabench.attempt.verification import Verification
from durabench.attempt.verifier_copy import drop_verifier_copy, keep_verifier_copy, verifier_copy
from durabench.attempt.workspace_cache import WorkspaceCache, cache_slot, snapshot_workspace
from durabench.attempt.workspace_diff import diff_snapshots
from durabench.classify import classify
from durabench.configs import instruction_for, mcp_config_json, missing_mcp_env
from durabench.errors import SandboxError
from durabench.gateway.ledger import read_ledger
from durabench.models.attempt import (
    AgentRunOutput,
    AttemptRef,
    ClassifyAttemptInput,
    CollectOutput,
    ProvisionOutput,
    VerifyOutput,
)
from durabench.models.task import TEXT_CATEGORY
from durabench.models.verdict import ClassifyInput, MeteredUsage, Verdict
from durabench.sandbox import Sandbox
from durabench.sandbox.detached import run_step, wrap_step
from durabench.sandbox.tarball import unpack
from durabench.settings.paths import FINAL_MESSAGE
from durabench.settings.secrets import scrub_text
from durabench.tasks import task_files

__all__ = ["Attempt", "remove_sandbox"]

_BEFORE_SNAPSHOT = ".workspace-before.tar"
_STDERR_TAIL = 4000
_DISPLAY_CHARS = 2000
"""The final message's start that travels in history and ``result.json``; the whole is kept
in ``final_message.txt`` (a service grades that)."""
"""Characters of the agent's stderr the classifier reads (its last words)."""
_STDERR_BYTES = 64 << 10
"""Bytes of stderr read to find those last words."""
_DURABENCH_LOG = re.compile(r"(stdout\.txt|stderr\.txt|trajectory\.json|step-[^/]*)(/|$)")
"""Names of the files durabench writes beside the agent's own logs on the host."""
_VERSION_TIMEOUT_S = 60.0
"""How long ``<cli> --version`` may take (a Node.js CLI starts in a second or two)."""


class Attempt:
    """One attempt of one lane of one task, over any :class:`Sandbox` backend."""

    def __init__(
        self,
        ref: AttemptRef,
        setup: AttemptSetup,
        sandbox: Sandbox,
        *,
        store: Path,
        secrets: Sequence[str] = (),
        limits: AttemptLimits | None = None,
        workspaces: WorkspaceCache | None = None,
    ) -> None:
        """``store`` is the attempt's directory on the host; ``secrets`` are scrubbed.

        ``workspaces`` keeps the workspace before any agent per image, when given.
        """
        self.ref = ref
        self.setup = setup
        self.task, self.config, self.agent, self.ctx = setup
        self.paths = self.ctx.paths
        self.sandbox = sandbox
        self.store = store
        self.secrets = tuple(secrets)
        self.limits = limits or AttemptLimits()
        self.workspaces = workspaces
        self._kept_output: frozenset[str] = frozenset()
        """The agent's output files the last :meth:`collect` kept on the host."""

    async def provision(self, environ: Mapping[str, str]) -> ProvisionOutput:
        """Start the sandbox, place the lane's files, set the agent up, snapshot the workspace.

        The snapshot may come from :attr:`workspaces` (:mod:`~durabench.attempt.workspace_cache`).

        Raises:
            SandboxError: the sandbox did not start, or a setup step failed.
        """
        paths, sandbox, config = self.paths, self.sandbox, self.config
        container_id = await sandbox.start()
        instruction = instruction_for(config, self.task)
        files: dict[str, str | bytes | Path] = {
            str(paths.instruction): (Path(self.task.task_dir) / instruction).read_text()
        }
        if config.mcp is not None:
            files[str(paths.mcp_config)] = mcp_config_json(config.mcp)
        for upload in self.agent.uploads(self.ctx):
            if upload.host_path.is_dir():
                files.update(self._task_files(upload.host_path, upload.dest))
            else:
                files[upload.dest] = upload.host_path
        files.update(self.agent.config_files(self.ctx))
        await sandbox.write_files(files, dirs=self._log_dirs())
        await asyncio.to_thread(self._keep_own, files)
        steps = self.agent.setup_commands(self.ctx)
        await self._set_up(steps)
        before, limits = self.store / _BEFORE_SNAPSHOT, self.limits.workspace
        if not before.exists():  # a retried provision keeps the first snapshot
            others = [*self._log_dirs(), *sandbox.spec.mounts.values()]
            workspace = self.paths.workspace
            where = await cache_slot(
                self.workspaces, sandbox, workspace, limits, steps, files, others
            )
            await snapshot_workspace(sandbox, workspace, limits, before, where)
        return ProvisionOutput(
            container_id=container_id,
            instruction_file=instruction,
            mcp_config=config.mcp is not None,
            mcp_env_missing=missing_mcp_env(config.mcp, environ) if config.mcp else (),
            cli_version=await self._cli_version(),
        )

    def _keep_own(self, files: Mapping[str, str | bytes | Path]) -> None:
        """Keep on the host what ``/durabench`` was given (instruction, MCP config, files).

        As the agent was given them: the collect need not read them back.
        """
        own = self.paths.durabench
        kept = {
            PurePosixPath(dest).relative_to(own).as_posix(): value.read_bytes()
            if isinstance(value, Path)
            else value.encode()
            if isinstance(value, str)
            else value
            for dest, value in files.items()
            if PurePosixPath(dest).is_relative_to(own)
        }
        keep_files(self.store / "durabench", kept, self.secrets)

    def _log_dirs(self) -> dict[str, int]:
        """The directories the lifecycle writes to, by mode.

        The markers, the agent's output and the launch records are root's alone: nothing
        the agent runs can forge a step's end or rewrite what it printed. The agent's own
        log directory is anyone's.
        """
        paths = self.paths
        return {
            str(paths.agent_logs): 0o777,
            str(paths.steps): 0o700,
            str(paths.output): 0o700,
            str(paths.verifier_logs): 0o755,
            str(paths.launches): 0o700,
        }

    async def _cli_version(self) -> str | None:
        """The agent CLI's version as it prints it to the agent user; ``None``: it names none.

        Asked after setup, before the agent runs: nothing the agent does can change it.
        """
        step = self.agent.version_command(self.ctx)
        if step is None:
            return None
        done = await self.sandbox.exec(
            ["sh", "-c", step.command], user=step.user, env=step.env, timeout_s=_VERSION_TIMEOUT_S
        )
        return None if done.timed_out else plain_version(done.stdout)

    async def _set_up(self, steps: Sequence[ExecInput]) -> None:
        for step in steps:
            done = await self.sandbox.exec(["sh", "-c", step.command], user=step.user)
            if done.exit_code != 0:
                said = scrub_text((done.stderr or done.stdout).strip(), self.secrets)[:400]
                raise SandboxError(
                    f"setting up {self.ref.agent.name} in {self.ref.container_name} failed "
                    f"(exit {done.exit_code}): {said}"
                )

    def _task_files(self, host_dir: Path, dest: str | PurePosixPath) -> dict[str, Path]:
        """The files of ``host_dir`` by sandbox path; links out of their directory refused.

        The directory is a task's (``tests/``, ``solution/``) or a replay plan's.

        Raises:
            ConfigError: a link leads out, or a file is not a plain file.
        """
        task_dir = Path(self.task.task_dir)
        inside = task_dir if host_dir.is_relative_to(task_dir) else host_dir
        return {
            str(PurePosixPath(dest) / p.relative_to(host_dir).as_posix()): p
            for p in task_files(host_dir, task_dir=inside)
        }

    async def run_agent(self, env: Mapping[str, str]) -> AgentRunOutput:
        """Run the agent's commands detached, within the time limit; wait for them to end.

        ``env`` holds the agent's secrets: it goes to the agent process and nowhere else.
        A retry re-attaches to steps that already started instead of running them again;
        their output is the agent's transcript (stdout).

        Raises:
            AgentLost: a step died without recording its end (its sandbox restarted, or
                its process was killed from outside): the attempt ends ``infra_other``.
        """
        steps, output = self.paths.steps, self.paths.output
        out = f">>{output}/stdout.txt 2>>{output}/stderr.txt"
        budget, wall, exit_code, timed_out, reattached = (
            self.ref.task.agent_timeout_sec,
            0.0,
            0,
            False,
            False,
        )
        for n, step in enumerate(self.agent.run_commands(self.ctx)):
            launched = self.paths.launches
            script = wrap_step(step.command, steps, n, budget - wall, out, step.user, launched)
            end, again = await run_step(
                self.sandbox,
                script,
                steps,
                n,
                cwd=str(self.paths.workspace),
                env={**step.env, **env},
                launched=launched,
            )
            reattached = reattached or again
            wall += end.elapsed_s
            exit_code, timed_out = end.exit_code, end.timed_out
            if exit_code != 0 or timed_out:
                break
        await self._stop_agent()
        files_changed, cut = await self._write_submission()
        return AgentRunOutput(
            exit_code=exit_code,
            timed_out=timed_out,
            files_changed=files_changed,
            wall_seconds=wall,
            reattached=reattached,
            cut=cut,
        )

    async def _stop_agent(self) -> None:
        """Kill what the agent left before anything reads its work (:func:`stop_agent`).

        Raises:
            SandboxError: the backend failed (the harness's, not the agent's).
        """
        await stop_agent(self.sandbox, self.store, self.secrets)

    async def _stop_submission(self) -> str:
        """:meth:`_stop_agent` after the build or the tests ran the submission as root.

        Returns:
            How its processes resisted the stop (the sandbox was restarted), or ``""``.

        Raises:
            SandboxError: the sandbox stopped by itself (the submission's doing, which the
                verification judges), or the backend failed.
        """
        return await stop_agent(self.sandbox, self.store, self.secrets, stopped_is_error=True)

    async def _root(self, script: str, what: str = "preparing the sandbox") -> None:
        done = await self.sandbox.exec(["sh", "-c", script], user="0")
        if done.exit_code != 0:
            raise SandboxError(
                f"{what} in {self.ref.container_name} failed (exit {done.exit_code}): "
                f"{scrub_text((done.stderr or done.stdout).strip(), self.secrets)[:400]}"
            )

    async def _write_submission(self) -> tuple[int, tuple[str, ...]]:
        """Diff the workspace against its snapshot from before the agent: submission.patch.

        Returns:
            How many files changed, and what the workspace read left out.
        """
        before_file = self.store / _BEFORE_SNAPSHOT
        before = unpack(before_file.read_bytes()) if before_file.exists() else {}
        after = await self.sandbox.read_tree(
            str(self.paths.workspace), limits=self.limits.workspace
        )
        diff = await asyncio.to_thread(diff_snapshots, before, after.files)
        patch = scrub_text(diff.patch, self.secrets)  # names the agent chose may not be UTF-8
        (self.store / "submission.patch").write_text(patch, errors="backslashreplace")
        return len(diff.files_changed), after.cut

    async def verify(self) -> VerifyOutput:
        """Build if the task says how, then run the task's tests from a clean start.

        The tests run as root from their own directory, not the workspace: a test command
        that imports nothing of the submission (``python3 - <<EOF``, ``python3 -m``, whose
        ``sys.path`` starts with the working directory) finds the task's files and the
        standard library, never a module the agent planted. Tests that import the
        submission do so on purpose (``sys.path`` or ``cd`` to the workspace): then they
        import what the agent wrote, as they must. The agent's user cannot write a site
        directory, and no user site is read.

        What the tests do over what the agent left is the agent's: a verifier that times
        out, crashes or writes no number scores 0.0, with why (``failure``). Only the
        harness's own steps raise.

        Raises:
            SandboxError: the harness failed (the container is gone, Docker failed, the
                tests could not be uploaded): infrastructure.
        """
        await asyncio.to_thread(drop_verifier_copy, self.store)
        verification = Verification(
            self.sandbox,
            self.task,
            self.paths,
            self.ref.task.verifier_timeout_sec,
            root=self._root,
            stop_agent=self._stop_submission,
            task_files=self._task_files,
            logs_limits=self.limits.logs,
        )
        verified = await verification.run()
        if (read := verification.dir_read) is not None:  # the collect's, read once
            await asyncio.to_thread(keep_verifier_copy, self.store, read, self.secrets)
        return verified

    async def classify(
        self,
        facts: ClassifyAttemptInput,
        *,
        now: datetime,
        cap_cooldown: timedelta,
        cap_ceiling: timedelta = timedelta(hours=5),
        metered: MeteredUsage | None = None,
        logs: AgentLogs | None = None,
    ) -> Verdict:
        """Classify the attempt's exit from its transcript, streamed, and the facts.

        ``logs`` are the agent's stdout and stderr as :meth:`kept_logs` read them after the
        collect; without them they are read in the sandbox. ``metered`` is the gateway's
        ledger of the attempt's model traffic (a replay's recorded one when it has no
        gateway); it alone decides infra and cooldowns: ``cap_cooldown`` for a usage cap
        the API named no reset for, ``cap_ceiling`` the longest one.
        """
        if logs is None:
            logs = AgentLogs(
                await self._read_log_bytes("stdout.txt", self.limits.transcript_bytes),
                await self._read_log_bytes("stderr.txt", _STDERR_BYTES),
            )
        stdout = logs.stdout
        stderr = scrub_text(logs.stderr.decode("utf-8", errors="replace"), self.secrets)
        dialect = self.agent.transcript_format(self.ctx)
        recorded = self.agent.recorded_ledger(self.ctx)
        if metered is None and recorded is not None:
            metered = await asyncio.to_thread(read_ledger, recorded)
        read = await asyncio.to_thread(transcript_facts, dialect, stdout)
        verdict = await asyncio.to_thread(
            classify,
            ClassifyInput(
                transcript_format=dialect,
                requested_model=self.ref.agent.model if dialect else "",
                exit_code=facts.exit_code,
                timed_out=facts.timed_out,
                wall_seconds=facts.wall_seconds,
                files_changed=facts.files_changed,
                build_failed=facts.build_failed,
                stderr_tail=stderr[-_STDERR_TAIL:],
                mcp_servers=(self.config.mcp.name,) if self.config.mcp else (),
                mcp_via_gateway=bool(  # a recorded ledger stands in for the gateway's
                    self.config.mcp
                    and self.config.mcp.url_env
                    and (self.agent.needs_network or recorded is not None)
                    and self.agent.uses_mcp
                ),
                metered=metered,
                model_via_gateway=self.agent.model_api is not None or recorded is not None,
                budget_tokens=self.ref.budget_tokens,
                prices=self.ref.prices,
                expects_change=self.task.category != TEXT_CATEGORY,
            ),
            None,
            read,
        )
        if why := await asyncio.to_thread(resisted, self.store):  # the worker's own record
            verdict = as_resisted(verdict, why)
        answer = scrub_text(verdict.last_message, self.secrets)
        await asyncio.to_thread(atomic_write, self.store / FINAL_MESSAGE, answer)
        resets_at = account_cooldown(verdict.exit_class, metered, now, cap_cooldown, cap_ceiling)
        return verdict.model_copy(
            update={
                "reason": scrub_text(verdict.reason, self.secrets),
                "last_message": answer[:_DISPLAY_CHARS],
                "cap_resets_at": resets_at,
                "cli_version": transcript_version(islice(iter_events(lines_of(stdout)), 64))
                if self.agent.version_command(self.ctx)
                else None,
            }
        )

    async def _read_log_bytes(self, name: str, max_bytes: int) -> bytes:
        """The log's last ``max_bytes`` as bytes (a transcript is streamed from them)."""
        try:
            return await self.sandbox.read_tail(str(self.paths.output / name), max_bytes)
        except FileNotFoundError:
            return b""

    async def kept_logs(self) -> AgentLogs:
        """The agent's stdout and stderr for classifying, as :meth:`collect` kept them.

        Kept, they are read on the host (scrubbed of secrets, which no class depends on):
        the collect copied them out of the sandbox once the agent and the tests had ended,
        and nothing in the sandbox reaches them there. One the collect left out (over its
        limits) or did not reach is read in the sandbox: its tail, as the classifier reads
        logs there.
        """
        read: list[bytes] = []
        for name, cap in (
            ("stdout.txt", self.limits.transcript_bytes),
            ("stderr.txt", _STDERR_BYTES),
        ):
            if name in self._kept_output:
                read.append(await asyncio.to_thread(tail_of, self.store / "agent" / name, cap))
            else:
                read.append(await self._read_log_bytes(name, cap))
        return AgentLogs(*read)

    async def collect(self) -> CollectOutput:
        """Copy the logs to the attempt's directory.

        Within the attempt's limits, scrubbed of secrets before a byte is written. The
        instruction and MCP config were kept there when they were placed.
        """
        cut: list[str] = []
        budget = self.limits.logs.max_total_bytes
        for src, name in (  # durabench's own files first: the agent's cannot crowd them out
            (self.paths.output, "agent"),
            (self.paths.steps, "agent"),
            (self.paths.verifier_logs, "verifier"),
            (self.paths.agent_logs, "agent"),
        ):
            limits = self.limits.logs.model_copy(update={"max_total_bytes": max(1, budget)})
            read = verifier_copy(self.store, budget) if src == self.paths.verifier_logs else None
            try:  # the verify kept the verifier's (read after the tests) when it could
                read = read or await self.sandbox.read_tree(str(src), limits=limits)
            except FileNotFoundError:
                continue
            files = read.files
            if src == self.paths.agent_logs:  # the agent's own: never in durabench's names
                files = {k: v for k, v in files.items() if not _DURABENCH_LOG.match(k)}
            if src == self.paths.output:
                self._kept_output = frozenset(files)
            budget -= sum(len(data) for data in files.values())
            cut += read.cut
            await asyncio.to_thread(keep_files, self.store / name, files, self.secrets)
        await asyncio.to_thread(
            keep_trajectory, self.store, self.ref, self.agent, self.ctx, self.secrets
        )
        return CollectOutput(cut=tuple(cut))


async def remove_sandbox(sandbox: Sandbox) -> None:
    """Remove an attempt's sandbox with its processes and logs; one already gone is fine.

    The attempt's last phase, however it ended, and so not a method of :class:`Attempt`:
    it needs the sandbox's name alone (a handle whose spec names no image), not the
    attempt's task, so a task directory gone or refused since still has its sandbox
    removed.

    Raises:
        SandboxError: the backend failed to remove it.
    """
    await sandbox.stop(delete=True)
