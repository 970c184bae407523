"""``starter status``'s progress line names pairs that ended without finishing."""

from __future__ import annotations

from durabench.models.suite_run import ProgressOutput
from starter.console import progress_line


def test_a_pair_that_ended_without_finishing_is_named() -> None:
    p = ProgressOutput(
        run_id="r", phase="running", total=3, done=2, excluded=1, ended_abnormally=("t2",)
    )
    assert "2/3 pairs done; 1 excluded (ended without finishing: t2)" in progress_line(p)
