import io
from datetime import UTC, datetime, timedelta

from rich.console import Console

from durabench.models.pair import ArmProgress, PairProgress
from durabench.models.suite_run import ProgressOutput
from starter.live import eta, progress_view

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _render(view: object) -> str:
    console = Console(width=140, record=True, file=io.StringIO())
    console.print(view)
    return console.export_text()


def test_progress_view_shows_queue_classes_backoffs_and_eta() -> None:
    progress = ProgressOutput(
        run_id="r1",
        phase="running",
        total=10,
        done=4,
        running=("t5", "t6"),
        by_class={"completed": 7, "infra_rate_limit": 1},
        excluded=1,
        approved_at=NOW - timedelta(minutes=40),
    )
    pairs = [
        PairProgress(
            task_id="t5",
            arms=(
                ArmProgress(
                    lane="baseline",
                    attempt=2,
                    state="backoff",
                    last_class="infra_rate_limit",
                    retry_at=NOW + timedelta(seconds=30),
                ),
                ArmProgress(lane="sourcegraph_full", attempt=1, state="running"),
            ),
        ),
        PairProgress(
            task_id="t6",
            arms=(ArmProgress(lane="baseline", attempt=1, state="done", last_class="completed"),),
        ),
    ]
    text = _render(progress_view(progress, pairs, NOW))
    assert "4/10 pairs done, 2 running, 4 queued, 1 excluded; ETA ~1:00:00" in text
    assert "completed 7, infra_rate_limit 1; 1 arm(s) backing off before a retry" in text
    assert "retry 2 in 30s (after infra_rate_limit)" in text
    assert "attempt 1 running" in text and "done (completed)" in text


def test_no_eta_before_the_first_pair_ends() -> None:
    p = ProgressOutput(run_id="r", phase="running", total=3, done=0, approved_at=NOW)
    assert eta(p, NOW + timedelta(hours=1)) is None
