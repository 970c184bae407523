"""Re-record every history in tests/histories, then replay them: one command.

Each history comes from the test that runs its path, run with
``DURABENCH_RECORD_HISTORIES=DIR`` (its recording hook writes ``DIR/<name>.json``, see
``tests/workflows/recording.py``). Only once every test passed and wrote what it should
are the files copied to tests/histories, so a failure leaves the histories as they were;
histories no test records any more are removed. Re-running it is safe.

    python scripts/record_histories.py            # every history
    python scripts/record_histories.py agent_run  # only the tests that record these

The host failover history needs Docker (``durabench-base:bookworm`` unless
``DURABENCH_BASE_IMAGE`` names another image). Exits non-zero, naming the test, if
anything failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HISTORIES = REPO / "tests" / "histories"
RECORD_ENV = "DURABENCH_RECORD_HISTORIES"
TEST_TIMEOUT_S = 1200


@dataclass(frozen=True)
class Recording:
    """A test and the histories its recording hook writes."""

    test: str
    names: tuple[str, ...]


WF = "tests/workflows"
RECORDINGS = (
    Recording(
        f"{WF}/test_suite_run.py::test_long_suites_continue_as_new_with_bounded_history",
        ("suite_run_first", "suite_run_last"),
    ),
    Recording(
        f"{WF}/test_suite_run.py::test_run_waits_for_approval_then_runs_every_pair",
        ("paired_task", "agent_run"),
    ),
    Recording(
        f"{WF}/test_suite_run.py::test_infra_arms_are_retried_and_exhausted_pairs_excluded",
        ("paired_task_infra_retry", "agent_run_infra"),
    ),
    Recording(
        f"{WF}/test_run_policy.py::test_pause_holds_an_arms_infra_retry_until_resume",
        ("paired_task_paused_retry",),
    ),
    Recording(
        f"{WF}/test_cancel_run.py::test_a_cancel_while_the_plan_is_read_cancels_the_pairs_in_flight",
        ("suite_run_cancelled", "agent_run_cancelled"),
    ),
    Recording(
        f"{WF}/test_account_pool.py"
        "::test_a_capped_account_cools_the_retry_goes_elsewhere_and_all_cooling_waits",
        ("paired_task_accounts", "account_pool"),
    ),
    Recording(
        f"{WF}/test_busy_wait_history.py::test_asks_for_a_busy_slot_do_not_grow_the_pairs_history",
        ("paired_task_await_lease",),
    ),
    Recording(
        f"{WF}/test_pool_updates.py::test_the_pool_continues_as_new_after_max_updates",
        ("account_pool_update_count",),
    ),
    Recording(
        f"{WF}/test_sandbox_slots.py"
        "::test_the_quota_holds_across_claims_and_an_ended_holder_s_slot_is_reclaimed",
        ("sandbox_slots",),
    ),
    Recording(
        f"{WF}/test_web_ui.py::test_a_run_refused_at_plan_time_says_failed",
        ("suite_run_refused",),
    ),
    Recording(
        f"{WF}/test_web_ui.py::test_attempts_carry_task_lane_model_exit_class_and_reward",
        ("suite_run_ui", "paired_task_ui", "agent_run_outcome"),
    ),
    Recording(
        f"{WF}/test_spend_cap_run.py"
        "::test_a_capped_run_runs_whole_pairs_and_stops_cleanly_at_its_cap",
        ("suite_run_capped", "run_spend"),
    ),
    Recording(
        "tests/integration/test_two_workers.py"
        "::test_sticky_hosts_hold_their_limits_and_a_dead_host_s_attempts_move",
        ("agent_run_host_failover",),
    ),
)


def _say(text: str) -> None:
    print(text, flush=True)


def _record(recording: Recording, into: Path) -> bool:
    """Run the test with recording on; whether it passed and wrote every history."""
    env = os.environ | {RECORD_ENV: str(into), "DURABENCH_REQUIRE_DOCKER": "1"}
    env.setdefault("DURABENCH_BASE_IMAGE", "durabench-base:bookworm")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", recording.test]
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=REPO, env=env, capture_output=True, text=True, timeout=TEST_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        _say(f"  FAILED: {recording.test} ran over {TEST_TIMEOUT_S} s")
        return False
    took = time.monotonic() - started
    if done.returncode != 0:
        _say(
            f"  FAILED ({took:.0f} s): {recording.test}\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
        )
        return False
    missing = [n for n in recording.names if not (into / f"{n}.json").is_file()]
    if missing:
        _say(f"  FAILED: {recording.test} passed but wrote no {', '.join(missing)}.json")
        return False
    _say(f"  ok ({took:.0f} s): {', '.join(recording.names)}")
    return True


def _install(names: list[str], recorded: Path, everything: bool) -> None:
    """Copy the recorded histories in; with every one re-recorded, drop those none records."""
    for name in names:
        shutil.copyfile(recorded / f"{name}.json", HISTORIES / f"{name}.json")
        _say(f"  wrote tests/histories/{name}.json")
    if everything:
        for stale in sorted(
            set(HISTORIES.glob("*.json")) - {HISTORIES / f"{n}.json" for n in names}
        ):
            stale.unlink()
            _say(f"  removed tests/histories/{stale.name} (no test records it)")


def _chosen(wanted: list[str]) -> list[Recording]:
    known = {n for r in RECORDINGS for n in r.names}
    unknown = sorted(set(wanted) - known)
    if unknown:
        raise SystemExit(
            f"no test records {', '.join(unknown)}; known histories: {', '.join(sorted(known))}"
        )
    return [r for r in RECORDINGS if not wanted or set(r.names) & set(wanted)]


def main(argv: list[str] | None = None) -> int:
    """Record, install, replay; 0 only if all three succeeded."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("names", nargs="*", help="histories to re-record (default: all)")
    wanted = parser.parse_args(argv).names
    chosen = _chosen(wanted)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="durabench-histories-") as tmp:
        failed = []
        for i, recording in enumerate(chosen, 1):
            _say(f"[{i}/{len(chosen)}] {recording.test}")
            if not _record(recording, Path(tmp)):
                failed.append(recording.test)
        if failed:
            _say(f"\n{len(failed)} recording(s) failed; tests/histories is unchanged:")
            _say("\n".join(f"  {t}" for t in failed))
            return 1
        _install([n for r in chosen for n in r.names], Path(tmp), everything=not wanted)
    _say("replaying every history against today's workflows (tests/workflows/test_replay.py)")
    replay = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{WF}/test_replay.py"],
        cwd=REPO,
        check=False,
    )
    _say(f"done in {time.monotonic() - started:.0f} s")
    return replay.returncode


if __name__ == "__main__":
    sys.exit(main())
