"""The replay agent: plays back a recorded session inside the sandbox, without a model.

It prints a recorded transcript, makes recorded file changes and exits with a recorded
code, or hangs until the time limit kills it. That drives every exit class through the
real pipeline (Temporal, Docker, verifier, classifier) in tests and rehearsals.

A replay has no model, so no gateway meters it. An infra class is decided only from what
the model API answered, so a case that replays an API failure names a recorded ledger
(``ledger``: gateway ledger lines, one JSON object each, as the gateway writes them): the
worker reads it on the host, outside the sandbox, in place of the gateway's. The replayed
transcript alone, like any agent's, is the agent's word and never makes an attempt infra.

A replay plan is a JSON file (``--agent-opt plan=FILE``) of cases; the first case whose
``task``, ``lane`` and ``attempt`` match (absent = any) is played::

    {"cases": [
      {"task": "t1", "lane": "baseline", "attempt": 1, "format": "claude-code",
       "transcript": "rate-limit.jsonl", "ledger": "rate-limit.ledger.jsonl", "exit_code": 1},
      {"format": "claude-code", "transcript": "done.jsonl", "files": {"notes.md": "notes.md"}}
    ]}

Paths in the plan are relative to the plan file and stay in its directory; workspace
paths (the keys of ``files``) are relative and stay in the workspace. With ``--agent-opt
marker_dir=DIR`` every session appends "task lane attempt" to ``DIR/executions.log`` on the
host, so tests can count executions where no container restart can hide them; ``DIR`` is
mounted into the sandbox, so workers accept it only under ``DURABENCH_HOME/mounts/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from durabench.agents.agent_registry import agent
from durabench.agents.base import Agent, AgentContext, ExecInput, Upload
from durabench.documents import loads_json
from durabench.errors import ConfigError
from durabench.models.verdict import TranscriptFormat

__all__ = ["ReplayAgent", "ReplayCase", "ReplayPlan"]

_FOREVER = "sleep 2147483647"
_MARKERS = "/durabench-markers"


class ReplayCase(BaseModel):
    """One recorded session and when to play it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str | None = None
    """Task id it plays for; ``None`` for any."""
    lane: str | None = None
    """Lane it plays for; ``None`` for any."""
    attempt: int | None = None
    """Attempt it plays for; ``None`` for any."""
    format: TranscriptFormat = "claude-code"
    """Dialect of the transcript."""
    transcript: str | None = None
    """Transcript file (JSON lines), printed to stdout."""
    ledger: str | None = None
    """Gateway ledger file (JSON lines) of what the model API answered the recorded session,
    read on the host in place of the gateway's; ``None``: no request reached an API."""
    exit_code: int = 0
    """Exit code of the replayed agent."""
    files: dict[str, str] = Field(default_factory=dict)
    """Workspace path to the host file whose content it writes there."""
    echo_env: tuple[str, ...] = ()
    """Variables it prints as ``NAME=value``, as agents that run ``env`` do."""
    duration_sec: float = Field(default=0.0, ge=0)
    """Seconds the session lasts before it exits, as long agent sessions do."""
    hang: bool = False
    """Run until the time limit kills it."""

    def matches(self, ctx: AgentContext) -> bool:
        """Whether this case plays for ``ctx``."""
        return (
            self.task in (None, ctx.task.task_id)
            and self.lane in (None, ctx.lane)
            and self.attempt in (None, ctx.attempt)
        )


class ReplayPlan(BaseModel):
    """All cases of a replay plan file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cases: tuple[ReplayCase, ...]
    """Cases, first match wins."""

    @classmethod
    def load(cls, path: Path) -> ReplayPlan:
        """Read and check a plan file; every file it names must exist beside it.

        A plan may come from someone else, so its host files stay in the plan's directory
        (no ``..``, absolute paths or links out: they would copy host files into the
        sandbox) and its workspace paths stay in the workspace.

        Raises:
            ConfigError: the file is missing or not valid, or a case names a missing file, a
                file outside the plan's directory or a path outside the workspace; the
                message names the case (from 1) and the entry.
        """
        try:
            plan = cls.model_validate(loads_json(path.read_text()))
        except (OSError, ValueError, ValidationError) as exc:
            raise ConfigError(f"replay plan {path}: {exc}") from exc
        home = path.parent.resolve()
        for n, case in enumerate(plan.cases, 1):
            named = [("transcript", case.transcript)] if case.transcript else []
            named += [("ledger", case.ledger)] if case.ledger else []
            for what, name in named + [("file", src) for src in case.files.values()]:
                if not _relative_inside(name) or not (home / name).resolve().is_relative_to(home):
                    raise ConfigError(
                        f"replay plan {path}: case {n} names {what} {name!r}, which is not "
                        "beside the plan; name a file in the plan's directory by a relative "
                        "path without '..'"
                    )
                if not (path.parent / name).is_file():
                    raise ConfigError(f"replay plan {path}: {name} does not exist beside it")
            for rel in case.files:
                if not _relative_inside(rel):
                    raise ConfigError(
                        f"replay plan {path}: case {n} writes to workspace path {rel!r}; give "
                        "a relative path inside the workspace, without '..'"
                    )
        return plan


def _relative_inside(name: str) -> bool:
    """Whether ``name`` is a relative path that stays below where it is joined."""
    parts = PurePosixPath(name).parts
    return (
        bool(parts)
        and "\0" not in name
        and not PurePosixPath(name).is_absolute()
        and ".." not in parts
    )


@agent("replay")
class ReplayAgent(Agent):
    """Plays a recorded session (``--agent-opt plan=FILE``)."""

    uses_mcp = True
    gives_final_message = True
    working_set_mb = 0  # shell scripts that wait and print: it holds what it is measured at

    def __init__(self, options: Mapping[str, str] | None = None) -> None:
        super().__init__(options)
        plan = self.options.get("plan")
        if not plan:
            raise ConfigError("the replay agent needs a plan: --agent-opt plan=FILE")
        self.plan_path = Path(plan).resolve()
        self.plan = ReplayPlan.load(self.plan_path)

    def case(self, ctx: AgentContext) -> ReplayCase:
        """The case that plays for ``ctx``.

        Raises:
            ConfigError: no case matches.
        """
        for case in self.plan.cases:
            if case.matches(ctx):
                return case
        raise ConfigError(
            f"replay plan {self.plan_path} has no case for task {ctx.task.task_id}, "
            f"lane {ctx.lane}, attempt {ctx.attempt}; add one (or one without filters)"
        )

    def uploads(self, ctx: AgentContext) -> list[Upload]:
        """The transcript and the files the session writes."""
        case, root, dest = self.case(ctx), self.plan_path.parent, ctx.paths.agent_files
        out = (
            [Upload(root / case.transcript, str(dest / "transcript.jsonl"))]
            if case.transcript
            else []
        )
        out += [Upload(root / src, str(dest / "files" / rel)) for rel, src in case.files.items()]
        return out

    def recorded_ledger(self, ctx: AgentContext) -> Path | None:
        """The case's recorded ledger, beside the plan on the host."""
        case = self.case(ctx)
        return self.plan_path.parent / case.ledger if case.ledger else None

    def mounts(self, ctx: AgentContext) -> dict[str, str]:
        """``--agent-opt marker_dir=DIR``: a host directory where each session signs in."""
        marker_dir = self.options.get("marker_dir")
        return {str(Path(marker_dir).resolve()): _MARKERS} if marker_dir else {}

    def transcript_format(self, ctx: AgentContext) -> TranscriptFormat | None:
        """The case's dialect."""
        return self.case(ctx).format

    def run_commands(self, ctx: AgentContext) -> list[ExecInput]:
        """Print, write, maybe hang, exit."""
        case, src = self.case(ctx), ctx.paths.agent_files
        steps = []
        if self.options.get("marker_dir"):  # counted outside the container: survives it
            who = f"{ctx.task.task_id} {ctx.lane} {ctx.attempt}"
            steps.append(f"echo '{who}' >> {_MARKERS}/executions.log")
        steps += [f"cat {src}/transcript.jsonl"] if case.transcript else []
        steps += [f'echo "{name}=${{{name}}}"' for name in case.echo_env]
        if case.duration_sec:
            steps.append(f"sleep {case.duration_sec:g}")
        if case.files:
            steps.append(f"cp -R {src}/files/. {ctx.paths.workspace}/")
        if case.hang:
            steps.append(_FOREVER)
        steps.append(f"exit {case.exit_code}")
        return [ExecInput(command="; ".join(steps))]
