"""Progress as lines, for output that is not a terminal (a pipe, CI, a log file).

The live view redraws one screen in place; off a terminal nothing of it shows until the
run ends. A log reader instead gets a line for each thing that happened once: the
approval, each phase, each finished pair, each retry an arm waits for.
"""

from __future__ import annotations

from datetime import datetime

from durabench.models.pair import PairProgress
from durabench.models.suite_run import ProgressOutput
from durabench.spend.projection import spend_line
from durabench.wording import counted

__all__ = ["AFTER_PAIRS", "ProgressLines"]

AFTER_PAIRS = frozenset({"reporting", "completed", "rejected", "expired", "failed", "cancelled"})
"""Phases that come after the pairs: said after the lines of the pairs that ended."""


class ProgressLines:
    """What changed since the last answers, as plain lines (data, not markup)."""

    def __init__(self) -> None:
        self._last: ProgressOutput | None = None
        self._retries: set[tuple[str, str, int]] = set()

    def lines(self, p: ProgressOutput, pairs: list[PairProgress], now: datetime) -> list[str]:
        """The lines of what ``p`` and ``pairs`` add to what was seen before."""
        last, self._last = self._last, p
        out: list[str] = []
        if p.approved_by and (last is None or not last.approved_by):
            out.append(
                f"{p.run_id}: approved by {p.approved_by}; {counted(p.total, 'pair')} to run"
            )
        phase = [f"{p.run_id}: {p.phase}"] if last is None or last.phase != p.phase else []
        if p.phase in AFTER_PAIRS:  # the run's end is said after its last pair
            out += _finished(last, p) + phase
        else:
            out += phase + _finished(last, p)
        for pair in pairs:
            for arm in pair.arms:
                key = (pair.task_id, arm.lane, arm.attempt)
                if arm.state != "backoff" or key in self._retries:
                    continue
                self._retries.add(key)
                wait = (arm.retry_at - now).total_seconds() if arm.retry_at else 0
                out.append(
                    f"{pair.task_id} / {arm.lane}: retry {arm.attempt} in {max(0, round(wait))}s "
                    f"(after {arm.last_class})"
                )
        return out


def _finished(last: ProgressOutput | None, p: ProgressOutput) -> list[str]:
    """A line per pair done since ``last``, named when it was seen running.

    The attempts' classes are those of every pair done by now, so they end the last line
    only: on an earlier one they would count pairs that line does not call done yet.
    """
    before = last.done if last is not None else 0
    if p.done <= before:
        return []
    gone = sorted(set(last.running if last else ()) - set(p.running))
    classes = ", ".join(f"{k} {v}" for k, v in sorted(p.by_class.items()))
    excluded = f", {p.excluded} excluded" if p.excluded else ""
    cost = spend_line(p.spend, p.done, p.total)
    cost = f"; {cost}" if cost else ""
    lines = [
        f"{gone[i] if i < len(gone) else 'a pair'} done: {before + i + 1}/{p.total} pairs"
        for i in range(p.done - before)
    ]
    lines[-1] += f"{excluded}; attempts: {classes}{cost}"
    return lines
