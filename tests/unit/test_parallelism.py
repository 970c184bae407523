"""The parallel slots a plan proposes: each source's bound, the least of them, --parallel."""

from __future__ import annotations

from pathlib import Path

import pytest

from durabench.agents.llm_rate_limits import KNOWN_RATE_LIMITS, rate_limit_of
from durabench.models.accounts import AccountHealth, AccountState
from durabench.models.parallelism import ModelRateLimit, ParallelBound, Parallelism
from durabench.models.run import DEFAULT_PARALLEL, PlanSummary, RunRequest
from durabench.planning.parallelism import (
    accounts_bound,
    choose_parallel,
    over_bound_warnings,
    rate_limit_bound,
    sandboxes_bound,
)
from durabench.planning.rows import containers_at_once, parallel_rows, plan_rows
from durabench.sandbox import Admission, AdmissionFacts, admitted_sandboxes
from durabench.settings.values import Settings

SESSION = ModelRateLimit(rpm=10, tpm=100_000)


def _account(id: str, state: AccountState, slots: int, agent: str = "claude-code") -> AccountHealth:
    return AccountHealth(id=id, agent=agent, state=state, leased=0, slots=slots)


def test_accounts_count_the_slots_of_usable_accounts_over_the_lanes() -> None:
    accounts = [
        _account("a", "ready", 4),
        _account("b", "busy", 3),  # its slots free as attempts end
        _account("c", "token-low", 2),
        _account("d", "cooling", 8),
        _account("e", "blocked", 8),
        _account("x", "ready", 50, agent="codex-cli"),  # another agent's
    ]
    bound = accounts_bound(accounts, "claude-code", lanes=2)
    assert bound.pairs == 4  # 9 slots, 2 arms a pair
    assert "9 slots of 3 claude-code account(s)" in bound.detail
    assert "not d cooling, e blocked" in bound.detail
    assert accounts_bound(accounts, "claude-code", lanes=1).pairs == 9


def test_no_account_listed_sets_no_bound_and_one_slot_still_runs_a_pair() -> None:
    bound = accounts_bound([], "claude-code", lanes=2)
    assert bound.pairs is None and "workers' environment" in bound.detail
    assert accounts_bound([_account("a", "ready", 1)], "claude-code", lanes=2).pairs == 1


def test_sandboxes_bound_pairs_by_the_admitted_sandboxes() -> None:
    assert sandboxes_bound(Admission(7, "host h admits 7"), lanes=2).pairs == 3
    assert sandboxes_bound(Admission(None, "no limit"), lanes=2).pairs is None


def test_docker_admits_each_polling_host_as_this_one_and_a_quota_overrides(tmp_path: Path) -> None:
    here = Settings(home=tmp_path, max_sandboxes=5, host_id_override="h1")
    alone = admitted_sandboxes("docker", AdmissionFacts(here, ["h1"]))
    assert alone.sandboxes == 5 and "host h1 admits 5" in alone.detail
    # More sandboxes than CPUs is no contradiction: the plan says what the CPUs bound.
    few_cpus = here.model_copy(update={"max_verifiers": 1})
    said = admitted_sandboxes("docker", AdmissionFacts(few_cpus, ["h1"])).detail
    assert "by memory, not CPUs" in said and "verifiers, CPU-bound, run at most 1 at once" in said
    fleet = admitted_sandboxes("docker", AdmissionFacts(here, ["h2", "h3"]))
    assert fleet.sandboxes == 15 and "3 worker hosts × 5" in fleet.detail
    quota = here.model_copy(update={"sandbox_quota": 40})
    assert admitted_sandboxes("docker", AdmissionFacts(quota, ["h2"])).sandboxes == 40


def test_a_backend_without_a_rule_is_bounded_by_its_quota_alone(tmp_path: Path) -> None:
    bare = Settings(home=tmp_path)
    unknown = admitted_sandboxes("elsewhere", AdmissionFacts(bare, []))
    assert unknown.sandboxes is None and "DURABENCH_SANDBOX_QUOTA" in unknown.detail
    quota = Settings(home=tmp_path, sandbox_quota=12)
    assert admitted_sandboxes("elsewhere", AdmissionFacts(quota, [])).sandboxes == 12


def test_rate_limits_become_sessions_by_the_stated_assumption() -> None:
    bound = rate_limit_bound("claude-sonnet-4-5", 2, {}, SESSION)
    # 4,000 rpm / 10 = 400 sessions; 2,000,000 tpm / 100,000 = 20 sessions: 20 over 2 lanes
    assert bound.pairs == 10
    assert "(assumed: a session sends at most 10 requests" in bound.detail
    assert "(first guess: published limits)" in bound.detail
    few = rate_limit_bound("gemini-2.5-pro", 1, {}, ModelRateLimit(rpm=50, tpm=1))
    assert few.pairs == 3  # 150 rpm / 50: the requests bind here


def test_the_teams_rate_limits_win_and_snapshots_are_their_model() -> None:
    mine = {"claude-sonnet-4-5": ModelRateLimit(rpm=50, tpm=400_000)}
    bound = rate_limit_bound("claude-sonnet-4-5-20250929", 2, mine, SESSION)
    assert bound.pairs == 2 and "DURABENCH_MODEL_RATE_LIMITS" in bound.detail
    assert rate_limit_of("claude-haiku-4-5-20251001") == KNOWN_RATE_LIMITS["claude-haiku-4-5"]


def test_an_unknown_model_or_none_sets_no_rate_bound() -> None:
    assert rate_limit_bound("my-model", 2, {}, SESSION).pairs is None
    assert rate_limit_bound(None, 2, {}, SESSION).detail == "the agent calls no model"


def _bounds(accounts: int | None, sandboxes: int | None, rates: int | None) -> list[ParallelBound]:
    return [
        ParallelBound(source="accounts", pairs=accounts, detail="a"),
        ParallelBound(source="sandboxes", pairs=sandboxes, detail="s"),
        ParallelBound(source="rate limits", pairs=rates, detail="r"),
    ]


@pytest.mark.parametrize(
    ("numbers", "parallel", "bound_by"),
    [
        ((4, 3, 10), 3, "sandboxes"),
        ((2, 3, 10), 2, "accounts"),
        ((None, 8, 5), 5, "rate limits"),
        ((6, 6, None), 6, "accounts"),  # a tie: the first source named
        ((None, None, None), DEFAULT_PARALLEL, None),
    ],
)
def test_the_plan_takes_the_least_bound(
    numbers: tuple[int | None, int | None, int | None], parallel: int, bound_by: str | None
) -> None:
    chosen = choose_parallel(_bounds(*numbers), asked=None)
    assert (chosen.parallel, chosen.bound_by, chosen.overridden) == (parallel, bound_by, False)
    assert over_bound_warnings(chosen) == ()


def test_parallel_given_overrides_and_warns_for_each_bound_it_passes() -> None:
    chosen = choose_parallel(_bounds(4, 3, 10), asked=5)
    assert (chosen.parallel, chosen.overridden, chosen.derived, chosen.bound_by) == (
        5,
        True,
        3,
        None,
    )
    warnings = over_bound_warnings(chosen)
    assert len(warnings) == 2
    assert warnings[0].startswith("--parallel 5 is more than the accounts allow (4 pairs")
    assert "wait for a sandbox slot" in warnings[1]
    assert over_bound_warnings(choose_parallel(_bounds(4, 3, 10), asked=3)) == ()


def test_the_teams_rate_limits_are_read_from_the_environment_or_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.setenv("DURABENCH_HOME", str(tmp_path))
    monkeypatch.delenv("DURABENCH_MODEL_RATE_LIMITS", raising=False)
    (tmp_path / "config.toml").write_text("[model_rate_limits.m-1]\nrpm = 60\ntpm = 900000\n")
    assert Settings.from_env().model_rate_limits == {"m-1": ModelRateLimit(rpm=60, tpm=900_000)}
    # The environment's models join the file's; a model named in both takes its limits.
    both = '{"m-1": {"rpm": 6, "tpm": 8}, "m-2": {"rpm": 5, "tpm": 7}}'
    monkeypatch.setenv("DURABENCH_MODEL_RATE_LIMITS", both)
    assert Settings.from_env().model_rate_limits == {
        "m-1": ModelRateLimit(rpm=6, tpm=8),
        "m-2": ModelRateLimit(rpm=5, tpm=7),
    }


def _summary(parallel: int | None, parallelism: Parallelism | None) -> PlanSummary:
    return PlanSummary(
        request=RunRequest(run_id="r", suite="s", parallel=parallel),
        lanes=("baseline", "sourcegraph_full"),
        task_count=1,
        estimated_agent_hours=0.1,
        results_dir="/r",
        parallelism=parallelism,
    )


def test_the_plan_rows_say_where_the_number_came_from() -> None:
    older = parallel_rows(_summary(3, None))  # a plan from before derivations
    assert [(r.key, r.value) for r in older] == [
        ("parallel slots", "3; 1 task: at most 1 pair at once")
    ]
    default = parallel_rows(_summary(None, choose_parallel(_bounds(None, None, None), None)))
    assert default[0].value.startswith("2 (the default: no source below sets a bound")
    assert [r.value for r in default[1:]] == ["no bound: a", "no bound: s", "no bound: r"]
    given = _summary(5, choose_parallel(_bounds(4, 3, 10), asked=5))
    assert parallel_rows(given)[0].value.startswith("5 (--parallel; derived: 3); 1 task: ")
    assert containers_at_once(given) == "at most 2 at once"  # one task: one pair of two


def test_the_plan_says_which_sandbox_backend_runs_and_its_limits() -> None:
    limits = "2 CPUs, 4096 MiB, disk uncapped, auto-stop after 30 min idle"
    summary = _summary(2, None).model_copy(update={"sandbox": "daytona", "sandbox_limits": limits})
    rows = {r.key: r.value for r in plan_rows(summary)}
    assert rows["sandboxes"] == f"daytona: {limits}"


def test_the_containers_row_names_the_bound_the_backend_enforces() -> None:
    """A remote backend has no host memory: its containers are bounded by the quota alone.

    50 pairs (of 60 tasks) ask for 100 sandboxes; quota 3 allows 3 at once on Daytona,
    however many the planning host would admit of its own (23 here); on Docker the least
    of the two holds.
    """
    fields = {"host_id": "h1", "host_sandboxes": 23, "task_count": 60}
    asked = _summary(50, None).model_copy(update=fields)
    daytona = asked.model_copy(update={"sandbox": "daytona", "sandbox_quota": 3})
    assert containers_at_once(daytona) == (
        "at most 3 at once (DURABENCH_SANDBOX_QUOTA 3, enforced across every worker host; "
        "the run asks for 100)"
    )
    unbounded = asked.model_copy(update={"sandbox": "daytona"})
    assert containers_at_once(unbounded) == (
        "at most 100 at once (daytona: no quota set; DURABENCH_SANDBOX_QUOTA bounds it)"
    )
    docker = asked.model_copy(update={"sandbox_quota": 40})
    assert containers_at_once(docker).startswith("at most 23 at once (host h1 admits 23:")
    docker_quota = asked.model_copy(update={"sandbox_quota": 5})
    assert containers_at_once(docker_quota).startswith("at most 5 at once (DURABENCH_SANDBOX_QUOTA")
