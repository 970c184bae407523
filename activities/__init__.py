"""Every side effect of durabench as Temporal activities: thin wrappers over the domain."""

from activities.account_leases import AccountActivities
from activities.grading import ServiceActivities
from activities.pair_ends import PairActivities
from activities.plan import PlanActivities
from activities.results import ResultActivities
from activities.sandbox import SandboxActivities
from activities.spend_book import SpendActivities

__all__ = [
    "AccountActivities",
    "PairActivities",
    "PlanActivities",
    "ResultActivities",
    "SandboxActivities",
    "ServiceActivities",
    "SpendActivities",
]
