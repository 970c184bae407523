"""The CLI's own MCP report is quoted in the reason, never taken as evidence of infra.

Claude Code names its MCP servers and their state in the ``system``/``init`` event
(``"mcp_servers": [{"name": "sourcegraph", "status": "failed"}]``). That event is on the
agent's stdout, which the agent can write: an MCP-lane session whose report says the
server failed would otherwise be retried and its pair excluded on the agent's word. The
reason says what the report says; only the gateway's record of the MCP server's answers
makes the lane infra (``test_classify_metered``).
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.classify import classify, parse_transcript
from durabench.models.verdict import ClassifyInput, MeteredUsage

M = "claude-sonnet-4-5"
DONE = {"type": "result", "subtype": "success", "is_error": False, "result": "Fixed it."}


def session(servers: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    init: dict[str, Any] = {"type": "system", "subtype": "init", "model": M}
    if servers is not None:
        init["mcp_servers"] = servers
    return [init, DONE]


def verdict(events: list[dict[str, Any]], lane_servers: tuple[str, ...] | None) -> Any:
    return classify(
        ClassifyInput(
            events=tuple(events),
            transcript_format="claude-code",
            requested_model=M,
            files_changed=1,
            mcp_servers=lane_servers,
        )
    )


SG = ("sourcegraph",)


def test_the_parser_reads_the_init_report() -> None:
    facts = parse_transcript(
        "claude-code",
        session(
            [{"name": "sourcegraph", "status": "failed"}, {"name": "x", "status": "connected"}]
        ),
    )
    assert facts.mcp_servers is not None
    assert [(s.name, s.status) for s in facts.mcp_servers] == [
        ("sourcegraph", "failed"),
        ("x", "connected"),
    ]
    assert parse_transcript("claude-code", session([])).mcp_servers == ()
    assert parse_transcript("claude-code", session(None)).mcp_servers is None  # no report


@pytest.mark.parametrize(
    ("servers", "says"),
    [
        ([{"name": "sourcegraph", "status": "failed"}], "'failed'"),
        ([{"name": "sourcegraph", "status": "needs-auth"}], "'needs-auth'"),
        ([], "absent"),
        ([{"name": "other", "status": "connected"}], "absent"),
    ],
)
def test_an_mcp_lane_whose_report_says_the_server_failed_is_quoted_not_excluded(
    servers: list[dict[str, Any]], says: str
) -> None:
    v = verdict(session(servers), SG)
    assert v.exit_class == "completed"
    assert "MCP" in v.reason and "sourcegraph" in v.reason and says in v.reason


def test_an_mcp_lane_whose_server_connected_is_measured() -> None:
    ok = [{"name": "sourcegraph", "status": "connected"}]
    assert verdict(session(ok), SG).exit_class == "completed"


def test_a_baseline_lane_that_shows_any_mcp_server_says_so() -> None:
    v = verdict(session([{"name": "sourcegraph", "status": "connected"}]), ())
    assert v.exit_class == "completed"
    assert "baseline" in v.reason and "sourcegraph" in v.reason
    failed = verdict(session([{"name": "repo-tools", "status": "failed"}]), ())
    assert "repo-tools" in failed.reason  # configured at all is already wrong
    assert "MCP" not in verdict(session([]), ()).reason


def test_no_report_or_no_lane_is_not_judged() -> None:
    # codex and gemini print no MCP report; a transcript classified by hand has no lane
    assert verdict(session(None), SG).exit_class == "completed"
    assert verdict(session([{"name": "sourcegraph", "status": "failed"}]), None).exit_class == (
        "completed"
    )


def test_a_dead_mcp_server_in_the_report_never_hides_the_session_s_class() -> None:
    cap = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "You've hit your limit · resets 5:30pm (UTC)",
    }
    init = session([{"name": "sourcegraph", "status": "failed"}])[0]
    refused = MeteredUsage(
        requests=3, served_models=(M,), asked_models=(M,), last_status=429, rate_limited=1
    )
    capped = classify(
        ClassifyInput(
            events=(init, cap),
            transcript_format="claude-code",
            requested_model=M,
            mcp_servers=SG,
            metered=refused,
            model_via_gateway=True,
        )
    )
    assert capped.exit_class == "infra_usage_cap", capped.reason
    too_long = {**cap, "result": "Prompt is too long"}
    assert verdict([init, too_long], SG).exit_class == "model_context_exhausted"
