"""The run asks its spend book which pairs may start (workflows cannot send updates)."""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client

from activities.boundary import KnownSecrets, scrubbed
from durabench.settings.values import Settings
from durabench.spend import PairAnswer, StartPairsInput
from durabench.spend.wire import START_PAIRS, spend_workflow_id

__all__ = ["SpendActivities"]


class SpendActivities:
    """Built in the worker with its client."""

    def __init__(self, client: Client, settings: Settings) -> None:
        """Talk to the deployment through ``client``."""
        self.client = client
        self.secrets = KnownSecrets(settings.accounts_file)

    @activity.defn(name="start_pairs")
    @scrubbed
    async def start_pairs(self, data: StartPairsInput) -> PairAnswer:
        """The ``start_pairs`` update of the run's spend workflow (safe to retry)."""
        handle = self.client.get_workflow_handle(spend_workflow_id(data.run_id))
        answer: PairAnswer = await handle.execute_update(
            START_PAIRS, data.ask, result_type=PairAnswer
        )
        return answer
