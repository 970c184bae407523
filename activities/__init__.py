"""Every side effect of durabench as Temporal activities: thin wrappers over the domain."""

from activities.accounts import AccountActivities
from activities.plan import PlanActivities
from activities.results import ResultActivities
from activities.sandbox import SandboxActivities
from activities.service import ServiceActivities

__all__ = [
    "AccountActivities",
    "PlanActivities",
    "ResultActivities",
    "SandboxActivities",
    "ServiceActivities",
]
