"""Paths declared once: inside the sandbox, and on the host for a run's results.

No other module spells these paths out; they change here or nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from durabench.errors import ConfigError

__all__ = ["FINAL_MESSAGE", "TRAJECTORY", "RunPaths", "SandboxPaths", "attempt_number"]

FINAL_MESSAGE = "final_message.txt"
"""The agent's whole final message, in the attempt's directory: the answer a service grades
(``result.json`` keeps a display copy of its first 2,000 characters)."""

TRAJECTORY = "agent/trajectory.json"
"""The transcript in Harbor's ATIF, under the attempt's directory where a Harbor trial keeps
it (``<trial>/agent/trajectory.json``, read by ``harbor view``)."""


_ATTEMPT_DIR = re.compile(r"attempt-([1-9][0-9]{0,8})", re.ASCII)
"""An attempt directory's name: ``attempt-<n>``, n an ASCII decimal from 1 without leading
zeros (below a billion, so ``int`` never meets a number too long to read)."""


def attempt_number(name: str) -> int | None:
    """The attempt number a directory ``name`` spells, ``None`` if it is no attempt's name.

    Every reader of a run matches attempt directories with this one pattern, so a name a
    worker never writes (``attempt-x``, ``attempt-01`` beside ``attempt-1``, ``attempt-²``,
    which ``str.isdigit`` takes for a digit) is read by none of them; the audit names it.
    """
    found = _ATTEMPT_DIR.fullmatch(name)
    return int(found.group(1)) if found else None


class SandboxPaths(BaseModel):
    """Paths inside a task container.

    ::

        /workspace/                 the repository the agent works on (image WORKDIR)
        /durabench/
        ├── instruction.md          the lane's instruction (instruction_mcp.md on MCP lanes)
        ├── mcp.json                MCP server config, MCP lanes only (secrets as ${VAR})
        └── agent/                  files an agent adapter uploads (replay: its recording)
        /var/lib/durabench/steps/   root only: a record of each agent step launched, on
                                    the container's disk (it outlives a restart, /logs not)
        /solution/                  the task's solution/, oracle agent only
        /tests/                     the task's tests/, copied in after the agent ends
        /logs/                      size-limited tmpfs volumes, one for each of:
        ├── steps/                  root only: step markers (nothing else can fill it)
        ├── output/                 root only: the agent's stdout.txt (its transcript)
        │                           and stderr.txt, written by root
        ├── agent/                  files the agent writes itself (anyone may write)
        └── verifier/               reward.txt and the verifier's own output
    """

    model_config = ConfigDict(frozen=True)

    workspace: PurePosixPath = PurePosixPath("/workspace")
    durabench: PurePosixPath = PurePosixPath("/durabench")
    agent_files: PurePosixPath = PurePosixPath("/durabench/agent")
    solution: PurePosixPath = PurePosixPath("/solution")
    tests: PurePosixPath = PurePosixPath("/tests")
    logs: PurePosixPath = PurePosixPath("/logs")
    steps: PurePosixPath = PurePosixPath("/logs/steps")
    output: PurePosixPath = PurePosixPath("/logs/output")
    agent_logs: PurePosixPath = PurePosixPath("/logs/agent")
    verifier_logs: PurePosixPath = PurePosixPath("/logs/verifier")
    launches: PurePosixPath = PurePosixPath("/var/lib/durabench/steps")

    @property
    def instruction(self) -> PurePosixPath:
        """The lane's instruction file."""
        return self.durabench / "instruction.md"

    @property
    def mcp_config(self) -> PurePosixPath:
        """The MCP config file (MCP lanes only)."""
        return self.durabench / "mcp.json"

    @property
    def reward(self) -> PurePosixPath:
        """Where the verifier writes its reward."""
        return self.verifier_logs / "reward.txt"


class RunPaths(BaseModel):
    """A run's results directory on the host (layout version 1).

    ::

        <home>/runs/<run_id>/
        ├── plan.json               the plan as made, before approval
        ├── run.json                the approved plan and the approval
        ├── results.json            every attempt, pairs and the summary
        ├── report.md               the report: tables, paired statistics, totals
        ├── report.html             the same, self-contained, with charts
        └── tasks/<task_id>/<lane>/attempt-<n>/
            ├── result.json         the attempt's result
            ├── build.log           the image build log
            ├── submission.patch    the workspace diff the agent left
            ├── final_message.txt   the agent's whole final message, scrubbed
            ├── durabench/          instruction.md, mcp.json as the agent saw them
            ├── agent/              agent logs: stdout.txt (transcript), stderr.txt, markers,
            │                       trajectory.json (the transcript in Harbor's ATIF)
            └── verifier/           reward.txt and verifier output
    """

    model_config = ConfigDict(frozen=True)

    root: Path

    @classmethod
    def for_run(cls, runs_dir: Path, run_id: str) -> RunPaths:
        """Paths of the run ``run_id`` under ``runs_dir``.

        Raises:
            ConfigError: ``run_id`` would name a directory outside ``runs_dir``.
        """
        return cls(root=_inside(runs_dir, [("run id", run_id)]))

    @property
    def plan(self) -> Path:
        """The plan as made."""
        return self.root / "plan.json"

    @property
    def run(self) -> Path:
        """The approved plan."""
        return self.root / "run.json"

    @property
    def results(self) -> Path:
        """All results of the run."""
        return self.root / "results.json"

    @property
    def report_md(self) -> Path:
        """The Markdown report."""
        return self.root / "report.md"

    @property
    def report_html(self) -> Path:
        """The HTML report."""
        return self.root / "report.html"

    def attempt(self, task_id: str, lane: str, attempt: int) -> Path:
        """The directory of one attempt.

        Ids are checked where they enter (:mod:`durabench.ids`); this check is the last
        line, for an id that got past them: results are written here.

        Raises:
            ConfigError: ``task_id`` or ``lane`` would name a directory outside the run.
        """
        parts = [("task id", task_id), ("lane", lane), ("attempt", f"attempt-{attempt}")]
        return _inside(self.root, [("directory", "tasks"), *parts])

    def attempt_files(self, name: str, lane: str | None = None) -> list[Path]:
        """Each attempt's file ``name``, in a stable order; only ``lane``'s when given.

        Only directories named as :func:`attempt_number` reads them are attempts.
        """
        found = []
        for path in self.root.glob(f"tasks/*/*/attempt-*/{name}"):
            attempt = path.parents[len(PurePosixPath(name).parts) - 1]
            if attempt_number(attempt.name) is None:
                continue
            if lane is None or attempt.parent.name == lane:
                found.append(path)
        return sorted(found)

    def attempt_results(self, lane: str | None = None) -> list[Path]:
        """Every attempt's result.json (only ``lane``'s when given), in a stable order."""
        return self.attempt_files("result.json", lane)

    def attempt_trajectories(self) -> set[tuple[str, str, int]]:
        """The attempts (task, lane, number) that kept a trajectory."""
        found = set()
        for path in self.attempt_files(TRAJECTORY):
            attempt, lane, task = (path.parents[n].name for n in (1, 2, 3))
            number = attempt_number(attempt)
            if number is not None:
                found.add((task, lane, number))
        return found


def _inside(base: Path, parts: list[tuple[str, str]]) -> Path:
    """``base`` joined with ``parts``, each one path component, resolving under ``base``."""
    path = base
    for what, name in parts:
        if name in ("", ".", "..") or "/" in name or "\0" in name:
            raise ConfigError(
                f"{what} {name!r} would name a directory outside {base}: an id must be one "
                "path component (see durabench/ids.py); rename it"
            )
        path = path / name
    if not path.resolve().is_relative_to(base.resolve()):
        raise ConfigError(
            f"{path} resolves to {path.resolve()}, outside {base}: a link in the results "
            "directory leads out of it; remove the link"
        )
    return path
