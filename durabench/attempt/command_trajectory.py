"""The trajectory of an agent that prints no transcript: the commands it ran, their output.

The oracle runs ``solve.sh``; a replay may play no session at all (an exit code, a hang).
Neither has a model's turns to read, yet a person opening the attempt wants to see what
ran and what it printed, as for any agent. So the steps are the instruction, then one
agent step whose tool calls are the agent's commands and whose observation is their
output (its tail) and each command's exit code, from durabench's own step markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from durabench.agents.atif import (
    AtifAgent,
    FinalMetrics,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)
from durabench.numerals import read_int
from durabench.wording import counted

__all__ = ["command_trajectory"]

OUTPUT_BYTES = 64_000
"""Bytes of the end of stdout kept in the trajectory (the whole file stays beside it)."""
_STDERR_BYTES = 16_000
_NOTES = (
    "Written by durabench for an agent that prints no transcript: the commands it ran as one "
    "step, with the end of their output (agent/stdout.txt and stderr.txt hold all of it)."
)


def _tail(path: Path, cap: int) -> str:
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - cap))
            text = f.read(cap).decode("utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return ""
    return text if size <= cap else f"[… first {counted(size - cap, 'byte')} cut]\n{text}"


def _exit(done: Path) -> str:
    """What a step's ``.done`` marker says of its end."""
    try:
        fields = done.read_text(errors="replace").split()
    except (FileNotFoundError, IsADirectoryError):
        return "did not start"
    code = read_int(fields[0], signed=True) if fields else None
    return "running" if code is None else f"exit code {code}"


def command_trajectory(
    commands: Sequence[str],
    kept: Path,
    *,
    agent: str,
    model: str,
    attempt_id: str,
    instruction: str = "",
) -> Trajectory:
    """The run of ``commands`` from the attempt's kept agent logs at ``kept``.

    ``kept`` holds ``stdout.txt``, ``stderr.txt`` and the ``step-<n>.done`` markers.
    """
    calls = [
        ToolCall(tool_call_id=f"command-{n}", function_name="bash", arguments={"command": c})
        for n, c in enumerate(commands, start=1)
    ]
    ends = [_exit(kept / f"step-{n}.done") for n in range(len(commands))]
    stdout, stderr = (
        _tail(kept / "stdout.txt", OUTPUT_BYTES),
        _tail(kept / "stderr.txt", _STDERR_BYTES),
    )
    results = [
        ObservationResult(source_call_id=call.tool_call_id, content=end)
        for call, end in zip(calls[:-1], ends[:-1], strict=True)
    ]
    if calls:
        printed = stdout + (f"\n[stderr]\n{stderr}" if stderr.strip() else "")
        results.append(
            ObservationResult(
                source_call_id=calls[-1].tool_call_id, content=f"{printed}\n[{ends[-1]}]"
            )
        )
    steps = [Step(step_id=1, source="user", message=instruction)] if instruction else []
    steps.append(
        Step(
            step_id=len(steps) + 1,
            source="agent",
            message=f"ran {len(commands)} command(s)",
            tool_calls=calls or None,
            observation=Observation(results=results) if results else None,
        )
    )
    return Trajectory(
        session_id=attempt_id,
        agent=AtifAgent(name=agent, version="durabench", model_name=model or None),
        steps=steps,
        final_metrics=FinalMetrics(total_steps=len(steps)),
        notes=_NOTES,
        extra={"durabench_attempt": attempt_id, "transcript_format": None},
    )
