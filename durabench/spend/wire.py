"""The spend workflow's names on the wire: its id, type, updates, signal and query.

Here, below both, as the pool's are (:mod:`durabench.accounts.pool_wire`): the run's
workflow starts it and the workers' brokers and the run's activities address it by them.
"""

__all__ = [
    "CLOSE",
    "REPORT",
    "SNAPSHOT",
    "SPEND_WORKFLOW",
    "START_PAIRS",
    "spend_workflow_id",
]

SPEND_WORKFLOW = "RunSpendWorkflow"
REPORT = "report"
START_PAIRS = "start_pairs"
CLOSE = "close"
SNAPSHOT = "snapshot"


def spend_workflow_id(run_id: str) -> str:
    """The spend workflow of run ``run_id``."""
    return f"run/{run_id}/spend"
