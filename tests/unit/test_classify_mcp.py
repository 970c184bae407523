"""The MCP lane counts only when its MCP server worked; the baseline lane shows none.

Claude Code names its MCP servers and their state in the ``system``/``init`` event
(``"mcp_servers": [{"name": "sourcegraph", "status": "failed"}]``). An MCP-lane session
whose configured server failed, or is missing from that report, measured the agent without
MCP: infra, so the arm is retried and then its pair excluded, never a baseline-vs-baseline
comparison published as an MCP result.
"""

from __future__ import annotations

from typing import Any

import pytest

from durabench.classify import classify, parse_transcript
from durabench.models.verdict import ClassifyInput

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
def test_an_mcp_lane_whose_server_did_not_work_is_infra(
    servers: list[dict[str, Any]], says: str
) -> None:
    v = verdict(session(servers), SG)
    assert v.exit_class == "infra_other"
    assert "MCP" in v.reason and "sourcegraph" in v.reason and says in v.reason


def test_an_mcp_lane_whose_server_connected_is_measured() -> None:
    ok = [{"name": "sourcegraph", "status": "connected"}]
    assert verdict(session(ok), SG).exit_class == "completed"


def test_a_baseline_lane_that_shows_any_mcp_server_is_infra() -> None:
    v = verdict(session([{"name": "sourcegraph", "status": "connected"}]), ())
    assert v.exit_class == "infra_other"
    assert "baseline" in v.reason and "sourcegraph" in v.reason
    failed = verdict(session([{"name": "repo-tools", "status": "failed"}]), ())
    assert failed.exit_class == "infra_other"  # configured at all is already wrong
    assert verdict(session([]), ()).exit_class == "completed"


def test_no_report_or_no_lane_is_not_judged() -> None:
    # codex and gemini print no MCP report; a transcript classified by hand has no lane
    assert verdict(session(None), SG).exit_class == "completed"
    assert verdict(session([{"name": "sourcegraph", "status": "failed"}]), None).exit_class == (
        "completed"
    )


def test_a_usage_cap_wins_over_a_dead_mcp_server_so_the_account_cools() -> None:
    cap = {
        "type": "result",
        "subtype": "success",
        "is_error": True,
        "result": "You've hit your limit · resets 5:30pm (UTC)",
    }
    init = session([{"name": "sourcegraph", "status": "failed"}])[0]
    assert verdict([init, cap], SG).exit_class == "infra_usage_cap"
    too_long = {**cap, "result": "Prompt is too long"}
    assert verdict([init, too_long], SG).exit_class == "infra_other"  # not the model's
