"""The live progress view: pairs, exit classes, retries and backoffs, ETA.

Built from the run's ``progress`` query and each in-flight pair's ``progress`` query, so it
shows the same numbers whichever machine runs the workers.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Group, RenderableType
from rich.live import Live
from rich.table import Table
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from durabench.models.pair import PairProgress
from durabench.models.suite_run import ProgressOutput, RunOutcome
from durabench.spend.projection import spend_line
from starter.console import console, shown
from starter.progress_lines import AFTER_PAIRS, ProgressLines
from starter.queries import pair_progress, run_progress

__all__ = ["eta", "follow", "progress_view"]

_QUERY_TIMEOUT = timedelta(seconds=5)


def _now() -> datetime:
    return datetime.fromtimestamp(time.time(), tz=UTC)


def eta(p: ProgressOutput, now: datetime) -> timedelta | None:
    """Time left at the pace so far, once a pair has finished."""
    if p.approved_at is None or p.done == 0 or p.done >= p.total:
        return None
    elapsed = (now - p.approved_at).total_seconds()
    return timedelta(seconds=round(elapsed / p.done * (p.total - p.done)))


def _arm_text(arm: Any, now: datetime) -> str:
    if arm.state == "backoff" and arm.retry_at is not None:
        wait = max(0, round((arm.retry_at - now).total_seconds()))
        return f"[yellow]retry {arm.attempt} in {wait}s[/] (after {shown(str(arm.last_class))})"
    if arm.state == "paused":
        return f"attempt {arm.attempt} held (run paused)"
    if arm.state == "waiting_account":
        back = f" until {arm.retry_at:%H:%M} UTC" if arm.retry_at is not None else ""
        return f"[yellow]attempt {arm.attempt} waits for an account{back}[/] ({shown(arm.note)})"
    if arm.state == "done":
        return f"done ({shown(str(arm.last_class))})"
    return f"attempt {arm.attempt} running"


def _phase(p: ProgressOutput) -> str:
    """The phase, and ``PAUSED`` with how to go on when paused."""
    if not p.paused:
        return shown(p.phase)
    return f"{shown(p.phase)} [yellow]PAUSED[/] (python -m starter resume {shown(p.run_id)})"


def progress_view(p: ProgressOutput, pairs: list[PairProgress], now: datetime) -> RenderableType:
    """One screen of progress."""
    queued = max(0, p.total - p.done - len(p.running))
    left = eta(p, now)
    if p.phase in AFTER_PAIRS:  # an ended run runs nothing and queues nothing
        going = f", {queued} not run" if queued else ""
    else:
        going = f", {len(p.running)} running, {queued} queued"
    head = (
        f"[bold]{shown(p.run_id)}[/] {_phase(p)}: {p.done}/{p.total} pairs done{going}"
        + (f", {p.excluded} excluded" if p.excluded else "")
        + (f"; ETA ~{left}" if left is not None else "")
    )
    classes = shown(", ".join(f"{k} {v}" for k, v in sorted(p.by_class.items())) or "none yet")
    table = Table(show_header=True, box=None, pad_edge=False)
    table.add_column("in flight")
    lanes = sorted({a.lane for pair in pairs for a in pair.arms})
    for lane in lanes:
        table.add_column(shown(lane))
    for pair in pairs:
        arms = {a.lane: a for a in pair.arms}
        cells = (_arm_text(arms[lane], now) if lane in arms else "-" for lane in lanes)
        table.add_row(shown(pair.task_id), *cells)
    backoffs = sum(1 for pair in pairs for a in pair.arms if a.state == "backoff")
    retrying = f"; {backoffs} arm(s) backing off before a retry" if backoffs else ""
    waiting = sum(1 for pair in pairs for a in pair.arms if a.state == "waiting_account")
    retrying += f"; {waiting} arm(s) waiting for an account slot" if waiting else ""
    cost = spend_line(p.spend, p.done, p.total)
    said = [shown(f"cost: {cost}")] if cost else []
    return Group(head, f"attempts: {classes}{retrying}", *said, table)


def _server_went_away(result: asyncio.Task[RunOutcome]) -> bool:
    """Whether waiting for the result failed because Temporal was unreachable for a while."""
    exc = result.exception() if result.done() and not result.cancelled() else None
    return isinstance(exc, RPCError) and exc.status in (
        RPCStatusCode.UNAVAILABLE,
        RPCStatusCode.DEADLINE_EXCEEDED,
        RPCStatusCode.CANCELLED,
    )


async def _pairs(client: Client, p: ProgressOutput) -> list[PairProgress]:
    out = []
    for task_id in p.running:
        try:
            out.append(await pair_progress(client, p.run_id, task_id, _QUERY_TIMEOUT))
        except RPCError:
            continue  # just started or just finished: shown next refresh
    return out


async def follow(
    client: Client, handle: WorkflowHandle[Any, RunOutcome], every_s: float = 1.0
) -> RunOutcome:
    """Show live progress until the run ends; return its outcome.

    Off a terminal, the view is :class:`~starter.progress_lines.ProgressLines`' lines.
    """
    if not console.is_terminal:
        return await _follow_lines(client, handle, every_s)
    result = asyncio.create_task(handle.result())
    with Live(console=console, refresh_per_second=4, transient=False) as live:
        while not result.done() or _server_went_away(result):
            if result.done():  # the server restarted: the run goes on, so does the wait
                result = asyncio.create_task(handle.result())
            try:
                p = await run_progress(handle, _QUERY_TIMEOUT)
                live.update(progress_view(p, await _pairs(client, p), _now()))
            except RPCError as exc:
                said = shown(exc.message[:80])
                live.update(f"waiting for Temporal or a worker to answer ({said})")
            await asyncio.wait({result}, timeout=every_s)
        live.update(await _last_frame(handle, result.result()))
    return result.result()


async def _last_frame(
    handle: WorkflowHandle[Any, RunOutcome], outcome: RunOutcome
) -> RenderableType:
    """The frame left above the summary: the run as it ended, never a look from before.

    The run's own answer after its end when a worker gives one, else the outcome's status.
    """
    try:
        p = await run_progress(handle, _QUERY_TIMEOUT)
    except RPCError:
        return f"[bold]{shown(outcome.run_id)}[/] {shown(outcome.status)}"
    return progress_view(p.model_copy(update={"running": ()}), [], _now())


async def _follow_lines(
    client: Client, handle: WorkflowHandle[Any, RunOutcome], every_s: float
) -> RunOutcome:
    """:func:`follow` for a pipe or a log: a line per change, never a redrawn screen."""
    said = ProgressLines()
    result = asyncio.create_task(handle.result())
    while not result.done() or _server_went_away(result):
        if result.done():
            result = asyncio.create_task(handle.result())
        await _say_lines(client, handle, said)
        await asyncio.wait({result}, timeout=every_s)
    await _say_lines(client, handle, said)  # what ended between the last look and the end
    return result.result()


async def _say_lines(
    client: Client, handle: WorkflowHandle[Any, RunOutcome], said: ProgressLines
) -> None:
    """Print what changed since ``said`` last looked."""
    try:
        p = await run_progress(handle, _QUERY_TIMEOUT)
        for line in said.lines(p, await _pairs(client, p), _now()):
            console.print(shown(line))
    except RPCError:
        pass  # a worker or the server is away: nothing new to say
