"""The worker's broker between its host's gateway and each capped run's book.

Every :data:`~durabench.spend.broker.TEND_S` it looks at each capped run's purse on this
host (:func:`durabench.spend.broker.tend`) and sends what is to be sent to the run's
spend workflow: a request for a block, a report of spending, leftovers given back. The
workers of a host take turns per run (a lock file), so one gateway is tended by one
worker at a time whichever are alive.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from durabench.gateway.grants import GrantStore
from durabench.logs import get_logger
from durabench.settings.values import Settings
from durabench.spend import BlockAnswer, Held, HostReport, SpendFiles
from durabench.spend.broker import TEND_S, Tended, tend
from durabench.spend.wire import REPORT, spend_workflow_id
from runtime.sweep import SWEEP_PERIOD_S, sweep_every

__all__ = ["host_upkeep", "tend_spend_every"]

log = get_logger("durabench.spend")


async def tend_spend_every(
    client: Client, root: Path, host: str, stop: asyncio.Event, every: float = TEND_S
) -> None:
    """Tend the purses under ``root`` (the gateway's store) until ``stop``."""
    tended, ended = Tended(), set[str]()
    while not stop.is_set():
        grants = await asyncio.to_thread(GrantStore(root).live)
        live = {g.spend.run_id for g in grants if g.spend is not None}
        for directory in SpendFiles.runs(root):
            files = SpendFiles.at(directory)
            if files is None or files.run_id in ended:
                continue

            async def ask(report: HostReport, run_id: str = files.run_id) -> BlockAnswer:
                handle = client.get_workflow_handle(spend_workflow_id(run_id))
                answer: BlockAnswer = await handle.execute_update(
                    REPORT, report, result_type=BlockAnswer
                )
                return answer

            try:
                await tend(files, host, files.run_id in live, ask, tended)
            except (WorkflowUpdateFailedError, RPCError) as exc:
                if isinstance(exc, RPCError) and exc.status != RPCStatusCode.NOT_FOUND:
                    log.warning("a spend report failed", run=files.run_id, error=str(exc))
                    continue
                # The run's book is closed: nothing more is granted; this host holds nothing.
                used = files.used()
                files.write_held(Held(run_id=files.run_id, held=sum(used.spent.values())))
                ended.add(files.run_id)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every)


async def host_upkeep(
    client: Client, settings: Settings, stop: asyncio.Event, remote: str | None
) -> None:
    """The host's chores beside its workers: sweep orphans, tend the spend caps' purses."""
    root = settings.home / "gateway"
    await asyncio.gather(
        sweep_every(client, settings.host_id, SWEEP_PERIOD_S, stop, remote),
        tend_spend_every(client, root, settings.host_id, stop),
    )
