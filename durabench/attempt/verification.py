"""The verify phase: the task's build and tests over what the agent left, and the reward.

The tests run as root from their own directory, not the workspace, with the tests copied
in fresh and an empty verifier directory, after every process of the agent has ended.
What the tests do over what the agent left is the agent's: a verifier that times out,
crashes, writes no number, or stops its own sandbox scores 0.0 with why (``failure``).
Only the harness's own steps raise, and those are infrastructure.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath

from durabench.attempt.reward import parse_reward
from durabench.errors import FileTooLarge, RewardFileMissing, RewardParseError, SandboxError
from durabench.models.attempt import VerifyOutput
from durabench.models.task import TaskSpec
from durabench.sandbox import ExecResult, Sandbox
from durabench.sandbox.limits import ReadLimits, TreeRead
from durabench.settings.paths import SandboxPaths

__all__ = ["Verification"]

REWARD_BYTES = 4096
"""A reward is one number; a larger file is no reward."""
BUILD_LOG = "build.txt"
"""The task's build output, in the verifier's directory."""
VERIFIER_ENV = {"PYTHONNOUSERSITE": "1"}
"""Over the image's own environment: no user site directory is read, whoever's it is."""
_NOT_CLEARED = 213
"""The verify exec's exit when clearing failed, before any test ran (no signal exits so)."""


class _StoppedFromInside(Exception):
    """The sandbox stopped from inside while the submission ran in verification (why)."""


class Verification:
    """One run of a task's build and tests in an attempt's sandbox."""

    def __init__(
        self,
        sandbox: Sandbox,
        task: TaskSpec,
        paths: SandboxPaths,
        timeout: float,
        *,
        root: Callable[[str], Awaitable[None]],
        stop_agent: Callable[[], Awaitable[str]],
        task_files: Callable[[Path, str | PurePosixPath], dict[str, Path]],
        logs_limits: ReadLimits,
    ) -> None:
        """The attempt's own helpers, bound.

        ``root`` runs a script as root, ``stop_agent`` ends every process but the
        sandbox's own, ``task_files`` lists a task directory's files for upload;
        ``logs_limits`` are the collect's, for the read of the verifier's directory.
        """
        self.sandbox, self.task, self.paths, self.timeout = sandbox, task, paths, timeout
        self.logs_limits = logs_limits
        self.dir_read: TreeRead | None = None
        """The verifier's directory, read once the tests and all they started had ended."""
        self._root, self._stop_agent, self._task_files = root, stop_agent, task_files

    async def run(self) -> VerifyOutput:
        """Build if the task says how, then run its tests from a clean start.

        Raises:
            SandboxError: the harness failed (the container is gone, Docker failed, the
                tests could not be uploaded): infrastructure.
        """
        task, out_dir = self.task, self.paths.verifier_logs
        build_failed = False
        if task.build_command:
            await self._root(f"mkdir -p {out_dir} && find {out_dir} -mindepth 1 -delete")
            try:
                build_failed = await self._build(task.build_command)
            except _StoppedFromInside as exc:
                return VerifyOutput(reward=0.0, build_failed=True, failure=str(exc))
        result = await self._cleared_tests()
        # The tests import the submission: whatever it started must not write the reward.
        if halted := await self._stop_what_ran("the tests", result):
            return VerifyOutput(reward=0.0, build_failed=build_failed, failure=halted)
        try:
            self.dir_read = await self._read_dir()
            reward, failure = await self._read_reward(result.timed_out), ""
        except (RewardFileMissing, RewardParseError) as exc:
            reward, failure = 0.0, f"{exc}; scored 0.0, as the tests ran over what the agent left"
        except SandboxError:  # it may stop only after the reaper ran: the same judgement
            stopped = await self.sandbox.stopped_by_itself()
            if stopped is None:
                raise
            reward, failure = 0.0, _stopped_while("the tests", stopped)
        return VerifyOutput(reward=reward, build_failed=build_failed, failure=failure)

    def _clear(self) -> str:
        """The script that empties ``/tests`` and the verifier's directory (but the build's log).

        From the tests on nothing of the agent's runs, and the tests are as the task ships
        them: the agent (or the build it wrote) may have planted a test or a reward.
        """
        out_dir, tests = self.paths.verifier_logs, self.paths.tests
        return (
            f"rm -rf {tests} && mkdir -p {out_dir}"
            f" && find {out_dir} -mindepth 1 ! -path {out_dir}/{BUILD_LOG} -delete"
        )

    def _tests(self) -> str:
        """The script that runs the task's tests, their output in the verifier's directory."""
        out = f"{self.paths.verifier_logs}/verifier-stdout.txt"
        return f"({self.task.verifier_command}) >{out} 2>&1"

    async def _cleared_tests(self) -> ExecResult:
        """Clear, put the tests in place and run them, in one exec where it can.

        The tests go first to a directory of a fresh name beside ``/tests``, which nothing
        in the sandbox can have known or written to; one root exec clears, moves them into
        place, and only then runs them. A clear that fails exits :data:`_NOT_CLEARED`
        before any test ran. That exit is not taken as evidence, though: the tests run
        the submission as root, which may fake it. It only sends the verify the long way:
        the clear in an exec of its own (whose failure is the harness's, infrastructure),
        the upload, the tests. Faking it buys the submission a second run of the tests.
        """
        sandbox, task, tests = self.sandbox, self.task, self.paths.tests
        staged = f"{tests}-{secrets.token_hex(8)}"
        await sandbox.upload_files(self._task_files(Path(task.task_dir) / "tests", staged))
        placed = f"{self._clear()} && mv {staged} {tests} && cd {tests} || exit {_NOT_CLEARED}"
        ran = f"{self._tests()}; rc=$?; [ $rc -eq {_NOT_CLEARED} ] && exit 1; exit $rc"
        result = await sandbox.exec(
            ["sh", "-c", f"{placed}; {ran}"],
            env=VERIFIER_ENV,
            timeout_s=self.timeout,
        )
        if result.exit_code != _NOT_CLEARED or result.timed_out:
            return result
        await self._root(f"rm -rf {staged} && {self._clear()}")
        await sandbox.upload_files(self._task_files(Path(task.task_dir) / "tests", tests))
        return await sandbox.exec(
            ["sh", "-c", self._tests()],
            cwd=str(tests),
            env=VERIFIER_ENV,
            timeout_s=self.timeout,
        )

    async def _stop_what_ran(self, what: str, ran: ExecResult) -> str:
        """End what ``what`` left running; why it scores 0, if it does.

        It does when what ``what`` left resisted the stop (a restart ended it, and it may
        have written the reward meanwhile), or when the sandbox stopped by itself. ``what``
        ran the submission as root and has returned, so the daemon was answering while it
        ran: a sandbox that stopped since was stopped from inside (the process that keeps
        it alive killed), not by the harness. That is the agent's doing, or it would buy a
        free retry; any other failure of the stop is the harness's and raises.
        """
        try:
            resisted = await self._stop_agent()
        except SandboxError:
            stopped = await self.sandbox.stopped_by_itself()
            if stopped is None:
                raise
            return _stopped_while(what, stopped)
        if resisted:  # still running after ``what``: it may have written the reward since
            return (
                f"the submission's processes resisted the stop after {what} ({resisted}); "
                "the worker restarted the sandbox; scored 0.0, as what they left cannot be told "
                f"from what {what} wrote"
            )
        if not _killed(ran):
            return ""
        # A sandbox caught stopping (its keeper killed, its cgroup not yet gone) can look
        # idle to the stop, which then has nothing to do; what ran in it was killed with
        # it. Asked again, it has stopped. Only then: a running sandbox is asked for free.
        stopped = await self.sandbox.stopped_by_itself()
        return _stopped_while(what, stopped) if stopped is not None else ""

    async def _build(self, command: str) -> bool:
        """Run the task's build in the workspace; whether it failed. Nothing it starts stays."""
        built = await self.sandbox.exec(
            ["sh", "-c", f"({command}) >{self.paths.verifier_logs}/{BUILD_LOG} 2>&1"],
            cwd=str(self.paths.workspace),
            timeout_s=self.timeout,
        )
        if halted := await self._stop_what_ran("the task's build", built):
            raise _StoppedFromInside(halted)
        return built.exit_code != 0

    async def _read_dir(self) -> TreeRead | None:
        """The verifier's directory as the collect keeps it; ``None`` when there is none.

        Read after the reaper: nothing of the submission runs any more, so the reward in
        it and the collect's copy of it are what the tests left.
        """
        try:
            return await self.sandbox.read_tree(
                str(self.paths.verifier_logs), limits=self.logs_limits
            )
        except FileNotFoundError:
            return None

    async def _read_reward_file(self) -> str:
        """The reward file's text: from the directory's read, else read alone.

        A reward the read left out, or did not find as a regular file, is read alone, so
        every judgement of a missing, too large or unreadable reward is as it was.
        """
        reward = self.paths.reward
        name = reward.relative_to(self.paths.verifier_logs).as_posix()
        data = self.dir_read.files.get(name) if self.dir_read is not None else None
        if data is None:
            return await self.sandbox.read_file(str(reward), max_bytes=REWARD_BYTES)
        if len(data) > REWARD_BYTES:
            raise FileTooLarge(f"{reward} is over {REWARD_BYTES} bytes")
        return data.decode("utf-8", errors="replace")

    async def _read_reward(self, timed_out: bool) -> float:
        reward, task_id = self.paths.reward, self.task.task_id
        try:
            text = await self._read_reward_file()
        except FileTooLarge:
            raise RewardParseError(
                f"{reward} of {task_id} is over {REWARD_BYTES} bytes; a reward is one number"
            ) from None
        except FileNotFoundError:
            why = "timed out" if timed_out else "ended"
            raise RewardFileMissing(
                f"the verifier of {task_id} {why} without writing {reward}; "
                "its output is in the attempt's verifier/ directory"
            ) from None
        return parse_reward(text, where=f"{reward} of {task_id}")


def _stopped_while(what: str, stopped: str) -> str:
    return f"the sandbox stopped while {what} ran over what the agent left ({stopped}); scored 0.0"


def _killed(ran: ExecResult) -> bool:
    """Whether ``ran`` was killed (a signal's exit, or none kept), not timed out.

    What a sandbox that stops under it does to it: its init, ending, kills the rest.
    """
    return not ran.timed_out and (ran.exit_code < 0 or ran.exit_code > 128)
