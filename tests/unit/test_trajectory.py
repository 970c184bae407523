"""Recorded transcripts of the three CLIs, written as ATIF trajectories.

:func:`atif_problems` checks a written document against the rules of Harbor's own models
(laude-institute/harbor ``src/harbor/models/trajectories/trajectory.py``, ``step.py``,
``tool_call.py``, ``observation_result.py``, ``metrics.py``, ``final_metrics.py``,
``agent.py``): it reads the JSON, not durabench's models, so a field they drop or misname
shows here.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from durabench.agents.trajectory import trajectory_of
from durabench.agents.transcript import read_events
from durabench.models.verdict import TranscriptFormat

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_DIALECT = {"claude": "claude-code", "codex": "codex-cli", "gemini": "gemini-cli"}

_ROOT = {"schema_version", "session_id", "agent", "steps", "notes", "final_metrics", "extra"}
_ROOT_REQUIRED = {"schema_version", "session_id", "agent", "steps"}
_STEP = {
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "extra",
}
_AGENT_ONLY = {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"}
_METRICS = {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "extra"}
_FINAL = {
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
    "extra",
}


def atif_problems(doc: dict[str, Any]) -> list[str]:
    """What in ``doc`` Harbor's ATIF models would refuse; empty when they accept it."""
    out = [f"root: unknown field {k}" for k in set(doc) - _ROOT]
    out += [f"root: {k} missing" for k in _ROOT_REQUIRED - set(doc)]
    if doc.get("schema_version") not in {f"ATIF-v1.{n}" for n in range(7)}:
        out.append(f"schema_version {doc.get('schema_version')!r}")
    agent = doc.get("agent", {})
    if set(agent) - {"name", "version", "model_name", "tool_definitions", "extra"}:
        out.append(f"agent: unknown fields {set(agent)}")
    if not isinstance(agent.get("name"), str) or not isinstance(agent.get("version"), str):
        out.append("agent: name and version are required strings")
    steps = doc.get("steps", [])
    if not steps:
        out.append("steps: at least one")
    for i, step in enumerate(steps, start=1):
        where = f"steps[{i - 1}]"
        out += [f"{where}: unknown field {k}" for k in set(step) - _STEP]
        if step.get("step_id") != i:
            out.append(f"{where}: step_id {step.get('step_id')} is not {i}")
        if step.get("source") not in ("system", "user", "agent"):
            out.append(f"{where}: source {step.get('source')!r}")
        if not isinstance(step.get("message"), str):
            out.append(f"{where}: message must be a string")
        if step.get("source") != "agent":
            out += [f"{where}: {k} on a non-agent step" for k in _AGENT_ONLY & set(step)]
        if "timestamp" in step:
            datetime.fromisoformat(step["timestamp"].replace("Z", "+00:00"))
        calls = step.get("tool_calls", [])
        for call in calls:
            if set(call) != {"tool_call_id", "function_name", "arguments"}:
                out.append(f"{where}: tool call fields {set(call)}")
            if not isinstance(call.get("arguments"), dict):
                out.append(f"{where}: tool call arguments must be an object")
        ids = {c.get("tool_call_id") for c in calls}
        observation = step.get("observation")
        if observation is not None:
            if set(observation) != {"results"}:
                out.append(f"{where}: observation fields {set(observation)}")
            for result in observation.get("results", []):
                if set(result) - {"source_call_id", "content", "subagent_trajectory_ref"}:
                    out.append(f"{where}: observation result fields {set(result)}")
                if result.get("source_call_id") not in ids | {None}:
                    out.append(f"{where}: result answers no call of its step")
        out += [f"{where}: metrics field {k}" for k in set(step.get("metrics", {})) - _METRICS]
    out += [f"final_metrics: {k}" for k in set(doc.get("final_metrics", {})) - _FINAL]
    return out


def _written(fmt: TranscriptFormat, lines: list[str], instruction: str = "") -> dict[str, Any]:
    trajectory = trajectory_of(
        fmt,
        read_events(lines),
        agent=fmt,
        model="the-requested-model",
        attempt_id="t1/baseline/attempt-1",
        instruction=instruction,
    )
    assert trajectory is not None
    doc: dict[str, Any] = json.loads(trajectory.to_json())
    assert atif_problems(doc) == []
    return doc


def _lines(path: Path) -> list[str]:
    if path.suffix == ".jsonl":
        return path.read_text().splitlines()
    return list(json.loads(path.read_text())["stdout"])


def _recorded() -> list[tuple[TranscriptFormat, Path]]:
    found = []
    for cli in ("claude-code", "codex-cli", "gemini-cli"):
        found += [(cli, p) for p in sorted((FIXTURES / cli).glob("*/*.json*"))]
    return found  # type: ignore[return-value]


@pytest.mark.parametrize(("fmt", "path"), _recorded(), ids=lambda v: str(v).split("fixtures/")[-1])
def test_every_recorded_transcript_is_a_trajectory_harbor_accepts(
    fmt: TranscriptFormat, path: Path
) -> None:
    lines = _lines(path)
    if not read_events(lines):  # the CLI printed nothing: nothing to read
        assert trajectory_of(fmt, [], agent=fmt, model="m", attempt_id="a") is None
        return
    doc = _written(fmt, lines, instruction="Fix the bug.")
    opening = doc["steps"][0]
    assert opening["source"] == "user"  # Gemini prints the prompt; the others do not
    if fmt != "gemini-cli":
        assert opening == {"step_id": 1, "source": "user", "message": "Fix the bug."}


def test_shared_classifier_cases_are_trajectories_harbor_accepts(shared_fixtures: Path) -> None:
    cases = sorted((shared_fixtures / "classify").glob("*.jsonl"))
    assert cases, f"no classifier case in {shared_fixtures / 'classify'}"
    for path in cases:
        fmt = _DIALECT[path.name.split("-")[0]]
        _written(fmt, path.read_text().splitlines())  # type: ignore[arg-type]


def test_gemini_session_reads_as_its_prompt_two_tool_calls_with_results_and_an_answer() -> None:
    doc = _written("gemini-cli", _lines(FIXTURES / "gemini-cli/0.61.0/mcp_session.jsonl"))
    steps = doc["steps"]
    assert doc["session_id"] == "aaa10458-e98b-4252-b43b-7501f68a6fcf"
    assert doc["agent"]["model_name"] == "gemini-2.5-flash"
    assert steps[0]["source"] == "user" and "GELU is off" in steps[0]["message"]
    calls = [c["function_name"] for s in steps for c in s.get("tool_calls", [])]
    assert calls == ["mcp_sourcegraph_search", "run_shell_command"]
    seen = [r["content"] for s in steps for r in s.get("observation", {}).get("results", [])]
    assert seen[0] == "activations.py:12: the cubic coefficient of GELU is 0.044715"
    assert steps[-1] == {
        "step_id": len(steps),
        "timestamp": "2026-11-26T14:47:04.418Z",
        "source": "agent",
        "message": "Fixed the GELU coefficient.",
    }
    assert doc["final_metrics"] == {
        "total_prompt_tokens": 3200,
        "total_completion_tokens": 72,
        "total_cached_tokens": 400,
        "total_steps": len(steps),
    }


def test_codex_session_names_the_mcp_tool_and_gives_the_turn_s_tokens_to_its_last_step() -> None:
    doc = _written("codex-cli", _lines(FIXTURES / "codex-cli/0.169.0/mcp_session.jsonl"))
    steps = doc["steps"]
    assert doc["session_id"] == "01a21851-76fc-76f3-a0be-ee9b366b78b1"
    assert steps[0]["source"] == "system" and "Model metadata" in steps[0]["message"]
    search = steps[1]
    assert search["tool_calls"] == [
        {
            "tool_call_id": "item_1",
            "function_name": "sourcegraph.search",
            "arguments": {"query": "gelu coefficient"},
        }
    ]
    assert search["observation"]["results"][0]["content"].startswith("activations.py:12")
    assert steps[-1]["message"] == "Fixed the GELU coefficient."
    assert steps[-1]["metrics"] == {
        "prompt_tokens": 3200,
        "completion_tokens": 72,
        "cached_tokens": 400,
    }
    assert [s for s in steps[:-1] if "metrics" in s] == []


def test_claude_retries_are_system_steps_and_the_requested_model_stands_in_for_none() -> None:
    doc = _written("claude-code", _lines(FIXTURES / "claude-code/2.1.332/overloaded.json"))
    assert doc["agent"]["version"] == "2.1.332"
    assert doc["agent"]["model_name"] == "claude-haiku-4-5"
    retries = [s["message"] for s in doc["steps"] if s["source"] == "system"]
    assert retries[0] == "API retry 1/10: overloaded (error_status=529)"


def test_claude_tool_results_land_on_the_step_that_called_and_blocks_of_one_message_merge() -> None:
    events = [
        {"type": "system", "subtype": "init", "session_id": "s9", "model": "claude-x"},
        _claude_block("m1", {"type": "thinking", "thinking": "Look first."}, usage=True),
        _claude_block("m1", {"type": "text", "text": "Reading it."}, usage=True),
        _claude_block("m1", {"type": "tool_use", "id": "c1", "name": "Read", "input": {"p": "a"}}),
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x = 1"}],
            },
        },
        _claude_block("m2", {"type": "text", "text": "Done."}),
    ]
    doc = _written("claude-code", [json.dumps(e) for e in events])
    first, last = doc["steps"]
    assert first["reasoning_content"] == "Look first." and first["message"] == "Reading it."
    assert first["metrics"] == {"prompt_tokens": 150, "completion_tokens": 7, "cached_tokens": 50}
    assert first["observation"] == {"results": [{"source_call_id": "c1", "content": "x = 1"}]}
    assert last["message"] == "Done." and doc["session_id"] == "s9"


def _claude_block(message_id: str, part: dict[str, Any], usage: bool = False) -> dict[str, Any]:
    message: dict[str, Any] = {"id": message_id, "model": "claude-x", "content": [part]}
    if usage:
        message["usage"] = {"input_tokens": 100, "cache_read_input_tokens": 50, "output_tokens": 7}
    return {"type": "assistant", "message": message}


def test_no_transcript_is_no_trajectory() -> None:
    args: dict[str, Any] = {"agent": "oracle", "model": "", "attempt_id": "t/b/attempt-1"}
    assert trajectory_of(None, [{"type": "x"}], **args) is None
    assert trajectory_of("claude-code", [], **args) is None


def test_claude_final_answer_is_the_last_step_unless_a_turn_already_said_it(
    shared_fixtures: Path,
) -> None:
    case = shared_fixtures / "classify" / "claude-completed.jsonl"
    doc = _written("claude-code", case.read_text().splitlines())
    assert doc["steps"][-1]["message"] == "Reverted the fusion patterns in 4 files."
    said = [s["message"] for s in doc["steps"]]
    assert len(said) == len(set(said))
    assert doc["final_metrics"]["total_cost_usd"] == 0.84
