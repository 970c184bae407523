"""The attempt's lifecycle, phase by phase, over an in-memory sandbox (no Docker)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from durabench.attempt import Attempt, AttemptSetup, parse_reward, remove_sandbox
from durabench.attempt.resisted import RESISTED, resisted
from durabench.errors import NON_RETRYABLE, AgentLost, RewardParseError, SandboxError
from durabench.models.agent import AgentSpec
from durabench.models.attempt import AttemptRef, ClassifyAttemptInput
from durabench.models.run import TaskRef
from durabench.models.verdict import MeteredUsage, TokenUsage
from durabench.sandbox import ExecResult
from durabench.sandbox.reaper import REAP_SCRIPT
from durabench.service.datasets import write_text_tasks
from durabench.service.wire_v1 import V1DatasetTask
from durabench.settings.paths import FINAL_MESSAGE, TRAJECTORY, SandboxPaths
from durabench.settings.secrets import REDACTED
from durabench.tasks import BUILTIN_SUITES_DIR
from tests.unit.memory_sandbox import Call, MemorySandbox

P = SandboxPaths()
TASK = "tensor-gelu-001"
SECRET = "sk-ant-lifecycle-secret-0123"


def _ref(lane: str = "baseline", agent: str = "oracle") -> AttemptRef:
    task = TaskRef(task_id=TASK, task_dir=str(BUILTIN_SUITES_DIR / "pytorch" / TASK))
    model = "claude-haiku-4-5" if agent == "claude-code" else "none"
    return AttemptRef(run_id="r1", task=task, lane=lane, agent=AgentSpec(name=agent, model=model))


def _attempt(
    tmp_path: Path, sandbox: MemorySandbox, lane: str = "baseline", agent: str = "oracle"
) -> Attempt:
    ref = _ref(lane, agent)
    return Attempt(ref, AttemptSetup.of(ref, {}), sandbox, store=tmp_path, secrets=(SECRET,))


def _agent_fixes_the_bug(sb: MemorySandbox, call: Call) -> None:
    """The agent: rewrites a file, prints a transcript with a key in it, ends with exit 0."""
    if call.detached:
        sb.files[f"{P.workspace}/tinytensor/activations.py"] = b"fixed = True\n"
        sb.files[f"{P.output}/stdout.txt"] = f"key {SECRET}\n".encode()
        sb.files[f"{P.steps}/step-0.started"] = b"1"
        sb.files[f"{P.steps}/step-0.done"] = b"0 3 300"


def _workspace(sb: MemorySandbox) -> None:
    sb.files[f"{P.workspace}/tinytensor/activations.py"] = b"fixed = False\n"
    sb.files[f"{P.workspace}/README"] = b"tiny\n"


def test_provision_places_the_lanes_files_and_snapshots_once(tmp_path: Path) -> None:
    sb = MemorySandbox()
    _workspace(sb)
    attempt = _attempt(tmp_path, sb, lane="sourcegraph_full")
    out = asyncio.run(attempt.provision({}))
    assert out.instruction_file == "instruction_mcp.md"
    assert out.mcp_config and sb.files[str(P.mcp_config)]
    assert f"{P.solution}/solve.sh" in sb.files  # the oracle's upload
    kept = tmp_path / "durabench"  # as the agent is given them, kept with no read back
    assert (kept / "instruction.md").read_bytes() == sb.files[str(P.instruction)]
    assert (kept / "mcp.json").read_bytes() == sb.files[str(P.mcp_config)]
    snapshot = (tmp_path / ".workspace-before.tar").read_bytes()
    sb.files[f"{P.workspace}/README"] = b"changed by a first try\n"
    asyncio.run(attempt.provision({}))  # a retried provision keeps the first snapshot
    assert (tmp_path / ".workspace-before.tar").read_bytes() == snapshot
    assert sb.started == 2


def test_run_agent_diffs_the_workspace_and_scrubs_the_patch(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_agent_fixes_the_bug)
    _workspace(sb)
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.provision({}))
    out = asyncio.run(attempt.run_agent({"ANTHROPIC_API_KEY": SECRET}))
    assert (out.exit_code, out.timed_out, out.files_changed, out.wall_seconds) == (0, False, 1, 3)
    assert not out.reattached
    started = [c for c in sb.calls if c.detached]
    assert len(started) == 1 and started[0].env["ANTHROPIC_API_KEY"] == SECRET
    assert "fixed = True" in (tmp_path / "submission.patch").read_text()


def test_a_retried_agent_phase_reattaches_and_never_runs_the_agent_twice(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_agent_fixes_the_bug)
    _workspace(sb)
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.provision({}))
    asyncio.run(attempt.run_agent({}))
    again = asyncio.run(attempt.run_agent({}))
    assert again.reattached and again.exit_code == 0
    assert len([c for c in sb.calls if c.detached]) == 1


def _dead_shell(sb: MemorySandbox, call: Call) -> ExecResult | None:
    """The step's root shell (pid 42) is gone: the liveness probe says so (exit 3)."""
    if "/proc/42/stat" in call.cmd[-1]:
        return ExecResult(3, "", "", False)
    return None


def test_a_reattached_step_whose_shell_died_ends_the_attempt_as_lost(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_dead_shell)
    _workspace(sb)
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.provision({}))
    sb.files[f"{P.steps}/step-0.started"] = b"5 42 1234 0e21345a-320e-4bbf-8efc-f3d207f2b747\n"
    sb.files[f"{P.steps}/step-0.done"] = b"running\n"  # and it never will be anything else
    with pytest.raises(AgentLost, match="pid 42") as err:
        asyncio.run(attempt.run_agent({}))
    assert type(err.value) in NON_RETRYABLE  # the attempt ends infra_other, not retried
    assert not [c for c in sb.calls if c.detached]  # never started again


def test_a_step_launched_before_a_restart_is_lost_not_run_again(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_agent_fixes_the_bug)
    _workspace(sb)
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.provision({}))
    sb.files[f"{P.launches}/step-0"] = b"42\n"  # the markers went with the restart
    with pytest.raises(AgentLost, match="restarted"):
        asyncio.run(attempt.run_agent({}))
    assert not [c for c in sb.calls if c.detached]


def _verifier(reward: bytes | None, unclearable: int = 0) -> object:
    """The tests' execs: clearing, moving the staged tests in, writing ``reward``.

    The first ``unclearable`` clears fail, as a clear that exits non-zero does.
    """
    failures = [unclearable]

    def handle(sb: MemorySandbox, call: Call) -> ExecResult | None:
        script = call.cmd[-1]
        if f"rm -rf {P.tests} " in script:
            if failures[0] > 0:
                failures[0] -= 1
                return ExecResult(213 if "mv " in script else 1, "", "rm: busy", False)
            sb.remove_tree(str(P.tests))
            sb.remove_tree(str(P.verifier_logs))
        if staged := re.search(rf"rm -rf ({P.tests}-\w+)|mv ({P.tests}-\w+) {P.tests}", script):
            removed, moved = staged.groups()
            for path in [f for f in sb.files if f.startswith(f"{removed or moved}/")]:
                data = sb.files.pop(path)
                if moved:
                    sb.files[str(P.tests) + path.removeprefix(moved)] = data
        if "/tests/test.sh" in script and reward is not None:
            sb.files[str(P.reward)] = reward
        return None

    return handle


def test_verify_reads_the_reward_the_verifier_wrote_not_a_planted_one(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(b"0.0\n"))  # type: ignore[arg-type]
    sb.files[str(P.reward)] = b"1.0"  # planted by the agent
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert out.reward == 0.0
    assert f"{P.tests}/test.sh" in sb.files


def test_verify_without_a_reward_scores_zero_and_says_where_to_look(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(None))  # type: ignore[arg-type]
    sb.files[str(P.reward)] = b"1.0"
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert out.reward == 0.0  # the tests ran over what the agent left: the agent's failure
    assert "without writing" in out.failure and "verifier/ directory" in out.failure


def test_verify_scores_a_reward_that_is_not_a_number_zero(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(b"all good"))  # type: ignore[arg-type]
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert out.reward == 0.0 and "not a number" in out.failure


def test_the_tests_run_from_their_own_directory_not_the_workspace(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(b"1.0"))  # type: ignore[arg-type]
    sb.files[f"{P.tests}/planted_by_the_agent.py"] = b"raise SystemExit(0)"
    asyncio.run(_attempt(tmp_path, sb).verify())
    (tests,) = [c for c in sb.calls if "/tests/test.sh" in c.cmd[-1]]
    assert f"&& cd {P.tests} ||" in tests.cmd[-1] and tests.env == {"PYTHONNOUSERSITE": "1"}
    assert f"{P.tests}/planted_by_the_agent.py" not in sb.files  # the tests as shipped


def _tests_in_place(sb: MemorySandbox) -> bool:
    """The task's tests are in /tests, nothing else is, and nothing is left staged."""
    shipped = {
        f"{P.tests}/{f.name}" for f in (BUILTIN_SUITES_DIR / "pytorch" / TASK).glob("tests/*")
    }
    return {f for f in sb.files if f.startswith(str(P.tests))} == shipped


def test_verify_clears_places_and_runs_the_tests_in_one_exec(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(b"1.0"))  # type: ignore[arg-type]
    sb.files[str(P.reward)] = b"0.5"  # planted by the agent
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert out.reward == 1.0
    (tests,) = [c.cmd[-1] for c in sb.calls if "/tests/test.sh" in c.cmd[-1]]
    assert tests.startswith(f"rm -rf {P.tests} ")  # cleared in the same exec, first
    assert not [c for c in sb.calls if c.cmd[-1].startswith("rm -rf") and c.cmd[-1] != tests]
    assert _tests_in_place(sb)


def test_a_clear_that_fails_before_the_tests_is_done_again_on_its_own(tmp_path: Path) -> None:
    """An exit that says the clear failed comes from an exec the submission ran in as root:
    not evidence of the harness's failure, so the verify takes the long way (clear, upload,
    tests); a planted reward never counts, and the staged tests are not left behind."""
    sb = MemorySandbox(handler=_verifier(b"0.0", unclearable=1))  # type: ignore[arg-type]
    sb.files[str(P.reward)] = b"1.0"  # planted by the agent
    sb.files[f"{P.tests}/planted_by_the_agent.py"] = b"raise SystemExit(0)"
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert (out.reward, out.failure) == (0.0, "")
    assert _tests_in_place(sb)
    assert len([c for c in sb.calls if "/tests/test.sh" in c.cmd[-1]]) == 2


def test_a_clear_that_fails_on_its_own_too_is_infrastructure(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(b"1.0", unclearable=2))  # type: ignore[arg-type]
    sb.files[str(P.reward)] = b"1.0"  # planted by the agent
    with pytest.raises(SandboxError, match="rm: busy"):
        asyncio.run(_attempt(tmp_path, sb).verify())


def _facts(ref: AttemptRef, exit_code: int = 1) -> ClassifyAttemptInput:
    return ClassifyAttemptInput(
        ref=ref,
        exit_code=exit_code,
        timed_out=False,
        wall_seconds=5,
        files_changed=0,
        build_failed=False,
    )


ANSWERED = MeteredUsage(
    requests=3,
    tokens=TokenUsage(input=300, output=30),
    served_models=("claude-haiku-4-5",),
    asked_models=("claude-haiku-4-5",),
    last_status=200,
)
"""The gateway's record of a session whose model answered every request."""


def test_classify_dates_a_usage_cap_from_the_api_and_scrubs_its_reason(tmp_path: Path) -> None:
    sb = MemorySandbox()
    sb.files[f"{P.output}/stderr.txt"] = (
        f"Claude AI usage limit reached for {SECRET}; resets in 9 hours\n".encode()
    )
    attempt = _attempt(tmp_path, sb, agent="claude-code")  # ends before its session began
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    reset = str(int((now + timedelta(hours=2)).timestamp()))
    headers = {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": reset,
    }
    refused = MeteredUsage(
        requests=1,
        asked_models=("claude-haiku-4-5",),
        rate_limited=1,
        last_status=429,
        last_resets=json.dumps(headers),
    )
    verdict = asyncio.run(
        attempt.classify(
            _facts(attempt.ref), now=now, cap_cooldown=timedelta(hours=1), metered=refused
        )
    )
    assert verdict.exit_class == "infra_usage_cap", verdict.reason
    assert verdict.cap_resets_at == now + timedelta(hours=2)  # the API's, not stderr's 9
    assert SECRET not in verdict.reason
    alone = asyncio.run(  # no request reached the API: nothing to cool the account for
        attempt.classify(_facts(attempt.ref), now=now, cap_cooldown=timedelta(hours=1))
    )
    assert (alone.exit_class, alone.cap_resets_at) == ("infra_other", None)


@pytest.mark.parametrize(
    ("lane", "reported", "expected"),
    [
        ("sourcegraph_full", '[{"name": "sourcegraph", "status": "failed"}]', "MCP NOT"),
        ("sourcegraph_full", '[{"name": "sourcegraph", "status": "connected"}]', ""),
        ("baseline", '[{"name": "sourcegraph", "status": "connected"}]', "MCP ON BASELINE"),
        ("baseline", "[]", ""),
    ],
)
def test_classify_checks_the_agent_s_mcp_report_against_the_lane(
    tmp_path: Path, lane: str, reported: str, expected: str
) -> None:
    sb = MemorySandbox()
    sb.files[f"{P.output}/stdout.txt"] = (
        '{"type": "system", "subtype": "init", "model": "claude-haiku-4-5", '
        f'"mcp_servers": {reported}}}\n'
        '{"type": "result", "subtype": "success", "is_error": false, "result": "Looked."}\n'
    ).encode()
    attempt = _attempt(tmp_path, sb, lane=lane, agent="claude-code")
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    mcp_worked = ANSWERED.model_copy(update={"mcp_requests": 2, "mcp_answered": 2})
    verdict = asyncio.run(
        attempt.classify(
            _facts(attempt.ref, 0), now=now, cap_cooldown=timedelta(hours=1), metered=mcp_worked
        )
    )
    assert verdict.exit_class == "model_no_code", verdict.reason  # the CLI's report is its word
    assert expected in verdict.reason and ("MCP" in verdict.reason) == bool(expected)


def test_collect_copies_logs_scrubbed_and_remove_sandbox_removes(tmp_path: Path) -> None:
    sb = MemorySandbox()
    sb.files[f"{P.output}/stdout.txt"] = f"token {SECRET}".encode()
    sb.files[f"{P.agent_logs}/stdout.txt"] = b"forged by the agent"
    sb.files[f"{P.agent_logs}/notes.md"] = b"the agent's own log"
    sb.files[str(P.reward)] = b"1.0"
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.collect())
    assert (tmp_path / "agent" / "stdout.txt").read_text() == f"token {REDACTED}"
    assert (tmp_path / "agent" / "notes.md").read_text() == "the agent's own log"
    assert (tmp_path / "verifier" / "reward.txt").read_text() == "1.0"
    asyncio.run(remove_sandbox(attempt.sandbox))
    assert sb.stopped


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (f"sk-{SECRET} 1.0", "holds 35 characters on 1 line"),
        ("", "is empty"),
        ("nan", "a reward is finite"),
        ("1\n2", "holds 3 characters on 2 lines"),
        ("1000000", "outside \\[0, 1\\]"),
        ("-0.5", "outside \\[0, 1\\]"),
        ("1.0000001", "outside \\[0, 1\\]"),
    ],
)
def test_a_bad_reward_is_described_never_quoted(text: str, said: str) -> None:
    with pytest.raises(RewardParseError, match=said) as err:
        parse_reward(text, where="reward.txt of t")
    assert SECRET not in str(err.value) and (not text or text not in str(err.value))


def test_a_reward_of_a_million_is_a_verifier_error_scoring_zero(tmp_path: Path) -> None:
    """Code the tests import can write any number; one outside [0, 1] is no reward."""
    sb = MemorySandbox(handler=_verifier(b"1000000"))  # type: ignore[arg-type]
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert out.reward == 0.0 and "outside [0, 1]" in out.failure
    assert "1000000" not in out.failure


def test_a_reward_file_too_large_is_no_reward(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_verifier(b"1" * 5000))  # type: ignore[arg-type]
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert out.reward == 0.0 and "over 4096 bytes" in out.failure


def test_a_sandbox_whose_reaper_cannot_run_is_restarted(tmp_path: Path) -> None:
    def no_slots(sb: MemorySandbox, call: Call) -> ExecResult | None:
        _agent_fixes_the_bug(sb, call)
        if call.cmd[-1] == REAP_SCRIPT:
            return ExecResult(126, "", "fork: resource temporarily unavailable", False)
        return None

    sb = MemorySandbox(handler=no_slots)
    _workspace(sb)
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.provision({}))
    assert sb.started == 1
    out = asyncio.run(attempt.run_agent({}))
    assert out.exit_code == 0 and sb.restarted == 1  # stopped from outside: nothing runs on
    assert "could not start" in (tmp_path / RESISTED).read_text()  # the worker's own record
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    verdict = asyncio.run(
        attempt.classify(_facts(attempt.ref, 0), now=now, cap_cooldown=timedelta())
    )
    assert verdict.exit_class == "model_agent_error" and "resisted the stop" in verdict.reason


def test_a_reaper_that_docker_could_not_run_is_the_harness_failure(tmp_path: Path) -> None:
    def daemon_down(sb: MemorySandbox, call: Call) -> ExecResult | None:
        _agent_fixes_the_bug(sb, call)
        if call.cmd[-1] == REAP_SCRIPT:
            raise SandboxError("Docker failed while running 'sh'")
        return None

    sb = MemorySandbox(handler=daemon_down)
    _workspace(sb)
    attempt = _attempt(tmp_path, sb)
    asyncio.run(attempt.provision({}))
    with pytest.raises(SandboxError):
        asyncio.run(attempt.run_agent({}))
    assert sb.restarted == 0 and not (tmp_path / RESISTED).exists()


def _claude_ends_with(sb: MemorySandbox, answer: str) -> None:
    events = [
        {"type": "system", "subtype": "init", "model": "claude-haiku-4-5"},
        {"type": "result", "subtype": "success", "is_error": False, "result": answer},
    ]
    sb.files[f"{P.output}/stdout.txt"] = "\n".join(json.dumps(e) for e in events).encode()


def test_the_full_final_message_is_kept_beside_the_results_display_copy(tmp_path: Path) -> None:
    sb = MemorySandbox()
    answer = "".join(f"{i:05d} " for i in range(500)) + f"and {SECRET}"  # over 3,000 characters
    _claude_ends_with(sb, answer)
    attempt = _attempt(tmp_path, sb, agent="claude-code")
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    verdict = asyncio.run(
        attempt.classify(_facts(attempt.ref, exit_code=0), now=now, cap_cooldown=timedelta())
    )
    kept = (tmp_path / FINAL_MESSAGE).read_text()
    assert kept == answer.replace(SECRET, REDACTED)  # whole, and scrubbed
    assert len(verdict.last_message) == 2000 and kept.startswith(verdict.last_message)


def test_a_text_task_answered_is_completed_and_unanswered_is_no_code(tmp_path: Path) -> None:
    text_task = tmp_path / "q1"
    write_text_tasks(tmp_path, [V1DatasetTask(id="q1", question="6 x 7?")])
    ref = AttemptRef(
        run_id="r1",
        task=TaskRef(task_id="q1", task_dir=str(text_task)),
        lane="baseline",
        agent=AgentSpec(name="claude-code", model="claude-haiku-4-5"),
    )
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    classes = []
    for answer in ("Done: 42", ""):
        sb = MemorySandbox()
        _claude_ends_with(sb, answer)
        attempt = Attempt(ref, AttemptSetup.of(ref, {}), sb, store=tmp_path / "a")
        verdict = asyncio.run(
            attempt.classify(
                _facts(ref, exit_code=0), now=now, cap_cooldown=timedelta(), metered=ANSWERED
            )
        )
        classes.append((verdict.exit_class, verdict.reason))
        assert not verdict.signals.false_completion  # no change was asked for
    assert classes[0][0] == "completed" and "answered" in classes[0][1]
    assert classes[1] == ("model_no_code", "ended on its own without an answer")


def _given(store: Path, instruction: str) -> None:
    """The instruction as provision keeps it in the attempt's directory."""
    (store / "durabench").mkdir(parents=True, exist_ok=True)
    (store / "durabench" / "instruction.md").write_text(instruction)


def test_collect_writes_the_transcript_as_a_scrubbed_atif_trajectory(tmp_path: Path) -> None:
    sb = MemorySandbox()
    _claude_ends_with(sb, f"Fixed it; the key was {SECRET}")
    _given(tmp_path, "fix the gelu")
    asyncio.run(_attempt(tmp_path, sb, agent="claude-code").collect())
    assert TRAJECTORY == "agent/trajectory.json"  # where Harbor's trials keep it
    text = (tmp_path / TRAJECTORY).read_text()
    assert SECRET not in text
    doc = json.loads(text)
    assert doc["schema_version"] == "ATIF-v1.4"
    assert doc["agent"]["name"] == "claude-code"
    assert [(s["source"], s["message"]) for s in doc["steps"]] == [
        ("user", "fix the gelu"),
        ("agent", f"Fixed it; the key was {REDACTED}"),
    ]


def test_collect_writes_the_oracles_solve_sh_as_a_one_step_trajectory(tmp_path: Path) -> None:
    sb = MemorySandbox()
    _given(tmp_path, "fix the gelu")
    sb.files[f"{P.output}/stdout.txt"] = f"patched activations.py with {SECRET}\n".encode()
    sb.files[f"{P.output}/stderr.txt"] = b"warning: slow disk\n"
    sb.files[f"{P.steps}/step-0.done"] = b"0 3 300"
    sb.files[f"{P.agent_logs}/trajectory.json"] = b'{"forged": "by the agent"}'
    asyncio.run(_attempt(tmp_path, sb).collect())
    text = (tmp_path / TRAJECTORY).read_text()
    assert SECRET not in text and "forged" not in text
    doc = json.loads(text)
    assert doc["schema_version"] == "ATIF-v1.4" and doc["agent"]["name"] == "oracle"
    user, ran = doc["steps"]
    assert (user["source"], user["message"]) == ("user", "fix the gelu")
    assert ran["source"] == "agent"
    assert [c["arguments"] for c in ran["tool_calls"]] == [
        {"command": f"bash {P.solution}/solve.sh"}
    ]
    said = ran["observation"]["results"][0]
    assert said["source_call_id"] == ran["tool_calls"][0]["tool_call_id"]
    assert f"patched activations.py with {REDACTED}" in said["content"]
    assert "warning: slow disk" in said["content"] and "exit code 0" in said["content"]


def _cli_prints(printed: str) -> object:
    def handle(sb: MemorySandbox, call: Call) -> ExecResult | None:
        if "--version" in call.cmd[-1]:
            return ExecResult(exit_code=0, stdout=printed, stderr="", timed_out=False)
        return None

    return handle


def test_provision_asks_the_cli_its_version_as_the_agent_user(tmp_path: Path) -> None:
    sb = MemorySandbox(handler=_cli_prints("2.1.332 (Claude Code)\n"))  # type: ignore[arg-type]
    _workspace(sb)
    out = asyncio.run(_attempt(tmp_path, sb, agent="claude-code").provision({}))
    assert out.cli_version == "2.1.332"
    asked = [c for c in sb.calls if "--version" in c.cmd[-1]]
    assert [c.user for c in asked] == ["agent"]
    assert "head -c" in asked[0].cmd[-1]  # the CLI's output is capped in the sandbox


def test_a_cli_printing_no_plain_version_names_none_and_an_oracle_is_not_asked(
    tmp_path: Path,
) -> None:
    (tmp_path / "o").mkdir()
    sb = MemorySandbox(handler=_cli_prints("$(curl evil) latest\n"))  # type: ignore[arg-type]
    _workspace(sb)
    out = asyncio.run(_attempt(tmp_path, sb, agent="claude-code").provision({}))
    assert out.cli_version is None
    oracle = MemorySandbox(handler=_cli_prints("2.1.332\n"))  # type: ignore[arg-type]
    _workspace(oracle)
    assert asyncio.run(_attempt(tmp_path / "o", oracle).provision({})).cli_version is None
    assert not [c for c in oracle.calls if "--version" in c.cmd[-1]]


def test_classify_takes_the_cli_version_from_the_transcript_s_init_event(tmp_path: Path) -> None:
    sb = MemorySandbox()
    sb.files[f"{P.output}/stdout.txt"] = (
        b'{"type": "system", "subtype": "init", "model": "claude-haiku-4-5", '
        b'"claude_code_version": "2.1.140"}\n'
        b'{"type": "result", "subtype": "success", "is_error": false, "result": "Done."}\n'
    )
    attempt = _attempt(tmp_path, sb, agent="claude-code")
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    verdict = asyncio.run(
        attempt.classify(_facts(attempt.ref, 0), now=now, cap_cooldown=timedelta(hours=1))
    )
    assert verdict.cli_version == "2.1.140"


def test_collect_writes_a_replay_of_no_session_as_its_commands(tmp_path: Path) -> None:
    plan = tmp_path / "plan" / "replay.json"
    plan.parent.mkdir()
    plan.write_text(json.dumps({"cases": [{"exit_code": 3}]}))
    ref = _ref().model_copy(
        update={"agent": AgentSpec(name="replay", model="none", options={"plan": str(plan)})}
    )
    sb = MemorySandbox()
    sb.files[f"{P.steps}/step-0.done"] = b"3 1 300"
    store = tmp_path / "store"
    asyncio.run(Attempt(ref, AttemptSetup.of(ref, {}), sb, store=store).collect())
    doc = json.loads((store / TRAJECTORY).read_text())
    (ran,) = doc["steps"]
    assert ran["tool_calls"][0]["arguments"] == {"command": "exit 3"}
    assert ran["observation"]["results"][0]["content"].endswith("[exit code 3]")


def _stops_itself_in_the_tests(sb: MemorySandbox, call: Call) -> ExecResult | None:
    """The submission, imported by the tests, kills what keeps the sandbox alive: the
    reaper's exec that follows is refused by the runtime (exit 126), as Docker refuses an
    exec into a container whose init died between the exec's create and its start."""
    if "/tests/test.sh" in call.cmd[-1]:
        sb.gone = "exited 137, its keeper killed"  # type: ignore[attr-defined]
    if call.cmd[-1] == REAP_SCRIPT and getattr(sb, "gone", None):
        return ExecResult(
            exit_code=126, stdout="", stderr="OCI runtime exec failed", timed_out=False
        )
    _verifier(b"1.0")(sb, call)  # type: ignore[operator]
    return None


def test_a_sandbox_stopped_by_the_tests_scores_zero_and_is_no_resisting_agent(
    tmp_path: Path,
) -> None:
    sb = MemorySandbox(handler=_stops_itself_in_the_tests)

    async def stopped() -> str | None:
        return getattr(sb, "gone", None)

    sb.stopped_by_itself = stopped  # type: ignore[method-assign]
    attempt = _attempt(tmp_path, sb)
    out = asyncio.run(attempt.verify())
    assert out.reward == 0.0 and "stopped while the tests ran" in out.failure
    assert sb.restarted == 0 and not resisted(attempt.store)  # not the agent resisting a stop


# How the stop after the tests can go: (others running, slots left, reaper's exit) -> the
# reward taken, and whether the sandbox was restarted from outside.
STOPS_AFTER_THE_TESTS = {
    "nothing left": ((0, 10, 0), 1.0, False),
    "reaped": ((3, 10, 0), 1.0, False),
    "outran the reaper": ((3, 10, 1), 0.0, True),
    "held every slot": ((3, 0, 0), 0.0, True),
}


@pytest.mark.parametrize("how", sorted(STOPS_AFTER_THE_TESTS))
def test_the_tests_reward_is_taken_only_when_the_stop_after_them_was_clean(
    tmp_path: Path, how: str
) -> None:
    """What the tests started and a restart had to end could write the reward after them.

    The restart keeps the files, so the reward on disk may be the submission's: it is not
    taken, whatever it says.
    """
    (others, slots, reaper_exit), reward, restarted = STOPS_AFTER_THE_TESTS[how]

    def verifier(sb: MemorySandbox, call: Call) -> ExecResult | None:
        if call.cmd[-1] == REAP_SCRIPT:
            return ExecResult(reaper_exit, "", "still running after 10 rounds", False)
        _verifier(b"1.0")(sb, call)  # type: ignore[operator]
        return None

    sb = MemorySandbox(handler=verifier)

    async def others_running() -> int:
        return others

    async def slots_left() -> int:
        return slots

    sb.others_running = others_running  # type: ignore[method-assign]
    sb.process_slots_left = slots_left  # type: ignore[method-assign]
    out = asyncio.run(_attempt(tmp_path, sb).verify())
    assert (out.reward, sb.restarted == 1) == (reward, restarted), out
    assert ("resisted the stop after the tests" in out.failure) == restarted
