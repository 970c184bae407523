"""The activities a worker runs for a run whose lanes lease accounts, the sandbox faked.

``worker.py``'s plan, result and account activities, real (the account pool's leases
are what these tests watch), beside the recorder's fake sandbox phases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio.client import Client

from activities import AccountActivities, PlanActivities, ResultActivities
from durabench.settings.values import Settings
from tests.workflows.fakes import Recorder


def account_run_activities(
    client: Client, settings: Settings, rec: Recorder
) -> list[Callable[..., Any]]:
    """Real plan, result and account activities; the recorder's sandbox phases."""
    plan, results = PlanActivities(settings, client), ResultActivities(settings)
    accounts = AccountActivities(client, settings)
    return [
        plan.plan_run,
        plan.plan_page,
        plan.record_run,
        results.record_attempt,
        results.write_report,
        accounts.lease_account,
        accounts.await_lease,
        accounts.release_account,
        accounts.vanished_holders,
        *rec.sandbox_activities(),
    ]
