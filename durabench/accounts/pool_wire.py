"""The account pool workflow's names on the wire: its id, type, updates and query.

Here, below both, because the pool workflow calls an account activity while the account
activities talk to the pool: the workflow declares itself by these names and the
activities address it by them (``activities.account_leases.PoolHandle`` types the messages).
"""

__all__ = ["LEASE", "POOL_WORKFLOW", "RELEASE", "SET_ACCOUNTS", "SNAPSHOT", "pool_workflow_id"]

POOL_WORKFLOW = "AccountPoolWorkflow"
SET_ACCOUNTS = "set_accounts"
LEASE = "lease"
RELEASE = "release"
SNAPSHOT = "snapshot"


def pool_workflow_id(task_queue: str) -> str:
    """The pool's workflow id for the deployment whose shared queue is ``task_queue``."""
    return f"{task_queue}/accounts"
